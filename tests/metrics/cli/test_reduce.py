"""python -m metrics reduce: keep and pool depth, the seed in the output, equality with the library."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics.cli import main
from metrics.stats.behaviour import reduction_curves

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "dense")]


def test_keep_json_equals_the_library(capsys):
    assert main(["reduce", QRELS, *RUNS, "--keep", "20,100", "--seed", "4", "-m", "Bpref", "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["settings"]["seed"] == 4 and body["settings"]["levels"] == [20, 100]
    expected = reduction_curves(QRELS, RUNS, ["Bpref"], keep=(20, 100), seed=4)["tau"]
    got = body["sections"]["tau against the full qrels"]
    assert [r["tau"] for r in got] == pytest.approx(expected["tau"].tolist())


def test_pool_depth_table_and_tsv(capsys):
    assert main(["reduce", QRELS, *RUNS, "--pool-depth", "5,10"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "seed: 0" and "reduction: pool" in out and "infAP" in out
    assert main(["reduce", QRELS, *RUNS, "--pool-depth", "5", "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "# seed: 0"


def test_keep_and_depth_are_exclusive():
    with pytest.raises(SystemExit) as exc:
        main(["reduce", QRELS, *RUNS, "--keep", "10", "--pool-depth", "10"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["reduce", QRELS, *RUNS, "--keep", "ten"])
