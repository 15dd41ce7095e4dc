"""python -m metrics headroom: the library's numbers in every format, the options, one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from metrics.analysis.headroom import headroom
from metrics.cli import main

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
QRELS, BM25, CE, DENSE, PROXY = (str(LEGAL / n) for n in ("qrels.txt", "bm25.run", "bm25_ce.run", "dense.run",
                                                           "proxy.txt"))


@pytest.fixture(scope="module")
def expected():
    return headroom(QRELS, BM25, CE, measure="nDCG(dcg='exp-log2')@10", sweep=[10, 20])


def test_json_is_the_library_result(capsys, expected):
    assert main(["headroom", QRELS, BM25, CE, "--gain", "exp", "--sweep", "10,20", "--format", "json", "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["measure"] == "nDCG(dcg='exp-log2')@10" and out["depth"] == 100 and out["detected_depth"] == 100
    assert out["summary"]["share"] == expected.summary["share"]
    assert out["summary"]["share_ci"] == list(expected.summary["share_ci"])
    assert [r["depth"] for r in out["sweep"]] == [10, 20, 100]
    assert len(out["per_query"]) == 50 and out["missing_queries"] == "scored 0 (trec_eval -c)"


def test_table_says_the_share_and_the_band(expected):
    done = subprocess.run([sys.executable, "-m", "metrics", "headroom", QRELS, BM25, CE, "--gain", "exp",
                           "--sweep", "10,20"], cwd=ROOT, capture_output=True, text=True, check=True)
    s = expected.summary
    assert f"share of the headroom reached {100 * s['share']:.1f}%" in done.stdout
    assert f"relative improvement +{100 * s['relative']:.1f}%" in done.stdout
    assert "within the usual 5-15% band" in done.stdout and "top 100 (detected)" in done.stdout


def test_tsv_rows_and_options(capsys):
    assert main(["headroom", QRELS, BM25, CE, "-m", "P@5", "--depth", "20", "--sweep", "5,10", "--format", "tsv",
                 "-J", "-l", "2", "--skip-missing", "--inferred", PROXY, "-q"]) == 0
    means, sweep = capsys.readouterr().out.strip().split("\n\n")
    rows = [line.split("\t") for line in means.splitlines()]
    library = headroom(QRELS, BM25, CE, measure="P@5", depth=20, sweep=[5, 10], judged_only=True, rel_level=2,
                       missing="skip", inferred=PROXY)
    plain = headroom(QRELS, BM25, CE, measure="P@5", depth=20, sweep=[5, 10], judged_only=True, rel_level=2)
    assert plain.summary["oracle"] != library.summary["oracle"]      # the proxy labels count
    assert rows[0][:5] == ["qid", "recall", "first", "oracle", "reranked"] and len(rows) == 52
    assert rows[-1][0] == "all" and float(rows[-1][3]) == pytest.approx(library.summary["oracle"], abs=1e-6)
    assert [line.split("\t")[0] for line in sweep.splitlines()] == ["depth", "5", "10", "20"]


@pytest.mark.parametrize("args, message", [
    ([QRELS, BM25, DENSE], "is no re-ranking of it"),
    ([QRELS, BM25, CE, "--sweep", "10,500"], "sweep depth 500 is beyond the re-ranking depth 100"),
    ([QRELS, BM25, CE, "--sweep", "ten"], "depths must be whole numbers"),
    ([QRELS, BM25, CE, "--depth", "0"], "depth must be a whole number >= 1"),
])
def test_errors_are_one_line_with_exit_code_2(capsys, args, message):
    assert main(["headroom", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and len(err.strip().splitlines()) == 1
