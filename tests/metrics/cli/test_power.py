"""python -m metrics power: the seed and resamples in every format, equality with the library."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

import metrics
from metrics.cli import main
from metrics.stats import paired_matrix
from metrics.stats.behaviour import pair_asl, topics_needed

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "dense")]


def test_json_equals_the_library(capsys):
    args = ["power", QRELS, *RUNS, "-m", "AP", "--resamples", "150", "--seed", "3", "--delta", "0.05"]
    assert main([*args, "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert (body["settings"]["seed"], body["settings"]["resamples"]) == (3, 150)
    x = paired_matrix(metrics.evaluate(QRELS, RUNS, ["AP"]), "AP", ["bm25", "bm25_ce", "dense"]).to_numpy()
    asl = pair_asl(x, ["bm25", "bm25_ce", "dense"], resamples=150, seed=3)
    np.testing.assert_allclose([r["bootstrap"] for r in body["sections"]["asl"]], asl["bootstrap"])
    np.testing.assert_allclose([r["tukey"] for r in body["sections"]["asl"]], asl["tukey"])
    designs = topics_needed(x, delta=0.05)
    assert [r["topics"] for r in body["sections"]["topics needed"]] == designs["topics"].tolist()
    assert main([*args, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == body   # seeded: the same output again


def test_table_and_tsv_carry_the_seed(capsys):
    assert main(["power", QRELS, *RUNS, "--resamples", "50", "--seed", "9"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == ["seed: 9", "resamples: 50"] and "topics needed" in out
    assert main(["power", QRELS, *RUNS, "--resamples", "50", "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "# seed: 0"


def test_bad_resamples_exit_2(capsys):
    assert main(["power", QRELS, *RUNS, "--resamples", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: resamples must be an integer >= 1")
