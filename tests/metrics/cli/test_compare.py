"""python -m metrics compare: formats, options and agreement with metrics.stats.compare."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import metrics
from metrics import stats
from metrics.cli import main

LEGAL = Path(__file__).resolve().parents[3] / "ndcg_lab" / "sample_data" / "legal"
QRELS = str(LEGAL / "qrels.txt")
BM25, CE, DENSE = (str(LEGAL / f"{name}.run") for name in ("bm25", "bm25_ce", "dense"))
EXP10 = "nDCG(dcg='exp-log2')@10"


def run_cli(capsys, *args) -> tuple[int, str, str]:
    code = main(["compare", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_equals_the_library(capsys):
    code, out, _ = run_cli(capsys, QRELS, BM25, CE, DENSE, "-m", EXP10, "-m", "AP", "--format", "json")
    assert code == 0
    body = json.loads(out)
    frame = metrics.evaluate(QRELS, [BM25, CE, DENSE], [EXP10, "AP"])
    expected = stats.compare(frame, "bm25")
    got = body["comparisons"]
    assert [(r["measure"], r["system"]) for r in got] == list(zip(expected["measure"], expected["system"]))
    for row, (_, ref) in zip(got, expected.iterrows()):
        for key in ("mean", "diff", "rel_diff", "diff_ci_low", "diff_ci_high", "p_value", "p_adjusted",
                    "effect_size"):
            assert row[key] == pytest.approx(ref[key], abs=1e-12), key
        assert (row["wins"], row["ties"], row["losses"]) == (ref["wins"], ref["ties"], ref["losses"])
    assert body["settings"]["test"] == "t" and body["settings"]["correction"] == "holm"
    assert body["settings"]["seed"] == 0
    assert set(body["tukey_hsd"]) == {EXP10, "AP"}  # three systems: all pairs too


def test_cross_encoder_improves_on_bm25(capsys):
    _, out, _ = run_cli(capsys, QRELS, BM25, CE, "-m", EXP10, "--format", "json")
    (row,) = json.loads(out)["comparisons"]
    assert row["system"] == "bm25_ce" and row["baseline"] == "bm25"
    assert row["rel_diff"] > 0.05 and row["p_value"] < 0.01 and row["marker"] == "▲"
    assert row["p_adjusted"] == row["p_value"]  # a family of one


def test_randomization_is_reproducible_and_seeded(capsys):
    args = [QRELS, BM25, DENSE, "-m", EXP10, "--test", "randomization", "--permutations", "2000", "--format", "json"]
    first = json.loads(run_cli(capsys, *args)[1])["comparisons"][0]["p_value"]
    again = json.loads(run_cli(capsys, *args)[1])["comparisons"][0]["p_value"]
    other = json.loads(run_cli(capsys, *args, "--seed", "1")[1])["comparisons"][0]["p_value"]
    assert first == again
    assert first != other
    assert abs(first - other) < 0.05


@pytest.mark.parametrize("correction,factor", [("bonferroni", 2), ("none", 1)])
def test_correction_spans_runs_and_measures(capsys, correction, factor):
    _, out, _ = run_cli(capsys, QRELS, BM25, DENSE, "-m", EXP10, "-m", "AP", "--correction", correction,
                        "--format", "json")
    for row in json.loads(out)["comparisons"]:
        assert row["p_adjusted"] == pytest.approx(min(1.0, factor * row["p_value"]))


def test_table_format_names_measure_test_and_correction(capsys):
    code, out, _ = run_cli(capsys, QRELS, BM25, CE, "-m", EXP10, "--test", "wilcoxon", "--correction", "bh")
    assert code == 0
    assert EXP10 in out and "Wilcoxon signed-rank" in out and "Benjamini-Hochberg" in out
    assert "bm25_ce" in out and "+11.0%" in out and "44/1/5" in out


def test_tsv_format(capsys):
    _, out, _ = run_cli(capsys, QRELS, BM25, CE, DENSE, "-m", EXP10, "--format", "tsv")
    lines = out.strip().split("\n")
    assert lines[0].split("\t") == stats.COMPARE_COLUMNS
    assert len(lines) == 3


def test_latex_format_marks_significance(capsys):
    _, out, _ = run_cli(capsys, QRELS, BM25, CE, DENSE, "-m", EXP10, "--format", "latex")
    assert r"\begin{tabular}" in out
    ce_line = next(line for line in out.splitlines() if line.startswith(r"bm25\_ce"))
    assert r"$^{\blacktriangle}$" in ce_line
    assert "% test:" in out and "% correction:" in out


def test_latex_table_option_writes_the_whole_float(capsys):
    _, out, _ = run_cli(capsys, QRELS, BM25, CE, "-m", "AP", "--format", "latex", "--latex-table",
                        "--caption", "AP on legal", "--label", "tab:legal")
    lines = out.splitlines()
    assert r"% needs \usepackage{booktabs}\usepackage{amssymb}" in lines
    start = lines.index(r"\begin{table}[t]")
    assert lines[start:start + 4] == [r"\begin{table}[t]", r"\centering", r"\caption{AP on legal}",
                                      r"\label{tab:legal}"]
    assert lines[-1] == r"\end{table}"


def test_gain_option_rewrites_ndcg(capsys):
    _, out, _ = run_cli(capsys, QRELS, BM25, CE, "-m", "nDCG@10", "--gain", "exp", "--format", "json")
    assert json.loads(out)["comparisons"][0]["measure"] == EXP10


def test_errors_exit_2(capsys):
    code, _, err = run_cli(capsys, QRELS, BM25, str(LEGAL / "nope.run"))
    assert code == 2 and "nope.run" in err
    with pytest.raises(SystemExit) as exc:
        main(["compare", QRELS, BM25, CE, "--test", "z"])
    assert exc.value.code == 2
    with pytest.raises(SystemExit):
        main(["compare", QRELS, BM25, CE, "--permutations", "0"])
