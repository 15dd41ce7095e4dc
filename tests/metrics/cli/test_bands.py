"""python -m metrics bands: the library's decomposition in every format, the options, one-line errors."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from metrics.analysis.bands import bands
from metrics.cli import main

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
QRELS, BM25, QE = (str(LEGAL / n) for n in ("qrels.txt", "bm25.run", "bm25_qe.run"))


def test_json_is_the_library_result(capsys):
    assert main(["bands", QRELS, BM25, QE, "-k", "50", "--bands", "5,20", "--gain", "exp", "--format", "json",
                 "-q"]) == 0
    out = json.loads(capsys.readouterr().out)
    library = bands(QRELS, BM25, QE, k=50, edges=[5, 20], gain="exp")
    assert out["measure"] == "DCG(dcg='exp-log2')@50" and out["difference"] == "b - a"
    assert out["means"]["by_band"] == {k: float(v) for k, v in library.means().items()}
    assert list(out["means"]["by_band"]) == ["1-5", "6-20", "21-50", "total"]
    assert len(out["only_one"]) == len(library.only_one) and len(out["per_query"]["by_band"]) == 50


def test_table_and_tsv(capsys):
    library = bands(QRELS, BM25, QE)
    assert main(["bands", QRELS, BM25, QE]) == 0
    table = capsys.readouterr().out
    assert f"       11-20  {library.means()['11-20']:+.4f}" in table
    assert f"relevant documents in one run's top 100 only: bm25 {(library.only_one['run'] == 'bm25').sum()}" in table
    assert main(["bands", QRELS, BM25, QE, "-q"]) == 0
    per_query = capsys.readouterr().out
    assert "per query, by grade" in per_query and f"{library.by_grade.loc['1', '3']:+.4f}" in per_query
    assert main(["bands", QRELS, BM25, QE, "--format", "tsv", "-J", "-l", "2", "-c"]) == 0
    band_block, grade_block = capsys.readouterr().out.strip().split("\n\n")
    assert band_block.splitlines()[0].split("\t") == ["qid", "band 1-3", "band 4-10", "band 11-20", "band 21-100",
                                                      "total"]
    judged = bands(QRELS, BM25, QE, judged_only=True, rel_level=2).means()
    assert float(band_block.splitlines()[-1].split("\t")[-1]) == pytest.approx(judged["total"], abs=1e-6)
    assert grade_block.splitlines()[0].startswith("qid\tgrade 3")


def test_errors_are_one_line_with_exit_code_2(capsys):
    assert main(["bands", QRELS, BM25, QE, "--bands", "20,10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "band edges must be increasing" in err and len(err.strip().splitlines()) == 1
