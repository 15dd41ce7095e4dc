"""metrics.report.export: LaTeX (escaped, best in bold, markers), CSV and JSON, each with its stamp."""
from __future__ import annotations

import io
import json

import pandas as pd

from metrics.report.export import to_csv, to_json, to_latex

TABLE = pd.DataFrame({"nDCG@10": [0.5, 0.61234], "P(rel=2)@5": [0.2, 0.1]},
                     index=pd.Index(["bm25", "dense"], name="system"))


def test_latex_table_bolds_the_best_per_column_and_appends_markers():
    out = to_latex(TABLE, {("dense", "nDCG@10"): r"\blacktriangle"}, {"tool": "nDCG Lab", "seed": 0})
    assert out == "\n".join([
        '% tool: "nDCG Lab"',
        "% seed: 0",
        r"% needs \usepackage{booktabs}\usepackage{amssymb}",
        r"\begin{tabular}{lrr}",
        r"\toprule",
        r"System & nDCG@10 & P(rel=2)@5 \\",
        r"\midrule",
        r"bm25 & 0.5000 & \textbf{0.2000} \\",
        r"dense & \textbf{0.6123}$^{\blacktriangle}$ & 0.1000 \\",
        r"\bottomrule",
        r"\end{tabular}",
        ""])


def test_latex_table_environment_with_caption_label_and_packages():
    out = to_latex(TABLE, {("dense", "nDCG@10"): r"\blacktriangle"}, {"baseline": "bm25"}, environment=True,
                   label="tab:main")
    lines = out.splitlines()
    assert lines[:6] == ['% baseline: "bm25"', r"% needs \usepackage{booktabs}\usepackage{amssymb}",
                         r"\begin{table}[t]", r"\centering",
                         r"\caption{Mean over queries per system and measure; the best value of each measure in bold. "
                         r"$^{\blacktriangle}$ and $^{\blacktriangledown}$: significantly better and worse than the "
                         r"baseline bm25.}", r"\label{tab:main}"]
    assert lines[6] == r"\begin{tabular}{lrr}" and lines[-2:] == [r"\end{tabular}", r"\end{table}"]
    assert out.count("{table}") == 2 and out.count("{tabular}") == 2
    plain = to_latex(TABLE, caption="50% of runs_1 & {x} ~ ^ \\", environment=True)
    assert r"\caption{50\% of runs\_1 \& \{x\} \textasciitilde{} \textasciicircum{} \textbackslash{}}" in plain
    assert r"% needs \usepackage{booktabs}" + "\n" in plain and "amssymb" not in plain   # no markers
    assert "{table}" not in to_latex(TABLE)


def test_latex_escapes_all_ten_special_characters_in_names():
    names = ["a&b", "50%", "$x", "#1", "run_1", "{x}", "a~b", "x^2", "a\\b"]
    table = pd.DataFrame({"m_1 & {2}": [0.1 * (i + 1) for i in range(len(names))]}, index=names)
    out = to_latex(table)
    rows = {line.split(" & ")[0] for line in out.splitlines() if line.endswith(r"\\")}
    assert {r"a\&b", r"50\%", r"\$x", r"\#1", r"run\_1", r"\{x\}", r"a\textasciitilde b", r"x\textasciicircum 2",
            r"a\textbackslash b"} <= rows
    assert r"System & m\_1 \& \{2\} \\" in out.splitlines()


def test_csv_starts_with_the_stamp_and_reads_back():
    out = to_csv(TABLE, {"gain": "exp", "measures": ["nDCG@10"]})
    assert out.splitlines()[:2] == ['# gain: "exp"', '# measures: ["nDCG@10"]']
    back = pd.read_csv(io.StringIO(out), comment="#", index_col="system")
    pd.testing.assert_frame_equal(back, TABLE)


def test_json_holds_the_stamp_the_means_and_extra_keys():
    out = json.loads(to_json(TABLE, {"gain": "linear"}, {"note": "x"}))
    assert out == {"stamp": {"gain": "linear"},
                   "means": {"bm25": {"nDCG@10": 0.5, "P(rel=2)@5": 0.2},
                             "dense": {"nDCG@10": 0.61234, "P(rel=2)@5": 0.1}},
                   "note": "x"}


def test_csv_neutralises_cells_a_spreadsheet_would_run_as_formulas():
    names = ["=HYPERLINK(\"http://x\",\"y\")", "+1", "-cmd", "@SUM(A1)", "\tx", "\rx", "bm25", "a=b"]
    table = pd.DataFrame({"nDCG@10": [-0.5] * len(names), "note": names}, index=pd.Index(names, name="system"))
    for sep in (",", "\t"):
        back = pd.read_csv(io.StringIO(to_csv(table, {"tool": "nDCG Lab"}, sep=sep)), sep=sep, comment="#",
                           index_col=0, keep_default_na=False)
        expected = ["'" + n for n in names[:6]] + ["bm25", "a=b"]
        assert list(back.index) == expected
        assert list(back["note"]) == expected
        assert list(back["nDCG@10"]) == [-0.5] * len(names)   # a number is a value, never prefixed
    header = pd.DataFrame({"=1+1": [0.1]}, index=pd.Index(["a"], name="@system"))
    assert to_csv(header).splitlines()[0] == "'@system,'=1+1"
