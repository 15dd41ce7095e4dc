"""python -m metrics judges: label agreement alone and with runs; the seed in every format."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics.cli import main
from metrics.stats.behaviour import label_agreement

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS, PROXY = str(LEGAL / "qrels.txt"), str(LEGAL / "proxy.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "dense")]


def test_labels_only_json(capsys):
    assert main(["judges", QRELS, PROXY, "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    expected = label_agreement(QRELS, PROXY)
    (row,) = body["sections"]["label agreement on shared pairs"]
    assert row["kappa_quadratic"] == pytest.approx(expected["kappa_quadratic"])
    assert (row["shared"], row["only_a"], row["only_b"]) == (expected["shared"], expected["only_a"],
                                                            expected["only_b"])
    assert body["settings"]["seed"] == 0 and "system order under A and B" not in body["sections"]


def test_with_runs_table_and_tsv(capsys):
    assert main(["judges", QRELS, PROXY, *RUNS, "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "seed: 2" and "tau (A the reference)" in out and "significance against bm25" in out
    assert main(["judges", QRELS, PROXY, *RUNS, "--format", "tsv"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "# seed: 0"


def test_missing_file_exits_2(capsys, tmp_path):
    assert main(["judges", QRELS, str(tmp_path / "none.txt")]) == 2
    assert "none.txt" in capsys.readouterr().err
