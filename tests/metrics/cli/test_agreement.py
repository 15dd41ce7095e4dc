"""python -m metrics agreement: formats, the seed line, exit codes, equality with the library."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scipy import stats as sst

import metrics
from metrics.cli import main
from metrics.stats.behaviour import tau_ap_symmetric

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
RUNS = [str(LEGAL / f"{n}.run") for n in ("bm25", "bm25_ce", "bm25_qe", "dense")]


def test_json_equals_scipy_and_tau_ap(capsys):
    assert main(["agreement", QRELS, *RUNS, "-m", "nDCG@10", "-m", "AP", "-m", "R@100", "--format", "json"]) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["settings"]["seed"] == "none (no random draw)"
    table = metrics.means(metrics.evaluate(QRELS, RUNS, ["nDCG@10", "AP", "R@100"]))
    tau = {row["measure"]: row for row in body["sections"]["kendall_tau_b"]}
    tap = {row["measure"]: row for row in body["sections"]["tau_ap"]}
    assert tau["nDCG@10"]["R@100"] == pytest.approx(sst.kendalltau(table["nDCG@10"], table["R@100"]).statistic)
    assert tap["AP"]["R@100"] == pytest.approx(tau_ap_symmetric(table["AP"], table["R@100"]))


def test_table_and_tsv(capsys):
    assert main(["agreement", QRELS, *RUNS[:2], "--gain", "exp"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("seed: none") and "nDCG(dcg='exp-log2')@10" in out and "kendall_tau_b" in out
    assert main(["agreement", QRELS, *RUNS[:2], "-m", "AP", "-m", "RR", "--format", "tsv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == '# seed: "none (no random draw)"' and "# section: tau_ap" in out


def test_one_run_exits_2():
    done = subprocess.run([sys.executable, "-m", "metrics", "agreement", QRELS, RUNS[0]], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr.startswith("error: a system order needs two or more runs")
    assert len(done.stderr.strip().splitlines()) == 1
