"""ndcg_lab.ui.query: grade labels and chips, the lists table (escaped, a column per system), and the
per-rank Styler, on hand-made frames."""
from __future__ import annotations

from math import log2

import numpy as np
import pandas as pd
import pytest

from metrics.report.figures.explain import grade_color, text_color
from ndcg_lab.ui import query
from ndcg_lab.ui.charts import DATA_LABEL


def test_grade_labels():
    assert query.grade_label(3, "judged") == "3"
    assert query.grade_label(np.nan, "judged") == "? (unjudged)"
    assert query.grade_label(None, "unjudged") == "? (unjudged)"
    assert query.grade_label(2.0, "inferred") == "2 (inferred)"
    assert query.grade_label(1, "not retrieved") == ""


def test_chip_text_colour_and_title():
    chip = query.chip(2, "inferred")
    assert ">2*</span>" in chip and 'title="2 (inferred)"' in chip
    assert f"background:{grade_color(2, 'inferred')};color:{text_color(2, 'inferred')}" in chip
    assert ">?</span>" in query.chip(None, "unjudged")
    assert ">0</span>" in query.chip(0)


def test_lists_table_has_a_column_per_system_and_escapes_names():
    frames = {
        "<b>bm25</b>": pd.DataFrame({"docno": ["d<1>", "d2"], "grade": [2, np.nan], "status": ["judged", "unjudged"],
                                     "title": ['say "hi"', None]}),
        "ce": pd.DataFrame({"docno": ["d2"], "grade": [1], "status": ["not retrieved"]}),
    }
    out = query.lists_html(frames)
    assert "<th>&lt;b&gt;bm25&lt;/b&gt;</th><th>ce</th>" in out
    assert "<b>bm25</b>" not in out and "<code>d&lt;1&gt;</code>" in out
    assert 'title="say &quot;hi&quot;"' in out and 'say "hi"' not in out
    assert out.count("<tr><th>") == 1 + 2  # the header, then depth 2: the longest list
    assert out.count("<td></td>") == 2     # ce: not retrieved at rank 1, nothing at rank 2
    assert query.lists_html({}).count("<tr><th>") == 1


def test_legend_lists_every_grade():
    legend = query.legend_html()
    for text in ("grade 0", "grade 4", "unjudged", "proxy label (inferred)"):
        assert text in legend


def explain_frame() -> pd.DataFrame:
    """Two ranks, exponential gain: grades (2, 0), ideal grades (2, 1)."""
    gain = [2**2 - 1, 2**0 - 1]
    discount = [1 / log2(2), 1 / log2(3)]
    contribution = [g * d for g, d in zip(gain, discount)]
    dcg = np.cumsum(contribution)
    ideal_gain = [2**2 - 1, 2**1 - 1]
    idcg = np.cumsum([g * d for g, d in zip(ideal_gain, discount)])
    return pd.DataFrame({"rank": [1, 2], "docno": ["d1", None], "grade": [2, np.nan],
                         "status": ["judged", "unjudged"], "gain": gain, "discount": discount,
                         "contribution": contribution, "dcg": dcg, "ideal_grade": [2, 1],
                         "ideal_gain": ideal_gain, "idcg": idcg, "ndcg": dcg / idcg})


def test_per_rank_styler_labels_formats_and_highlight():
    styler = query.per_rank_styler(explain_frame(), digits=3, highlight=2)
    shown = styler.data
    assert list(shown.columns) == ["rank", "docno", "grade", "gain", "1/log2(rank+1)", "contribution", "DCG@rank",
                                   "ideal grade", "ideal gain", "IDCG@rank", "nDCG@rank"]
    assert shown["grade"].tolist() == ["2", "? (unjudged)"] and shown["docno"].tolist() == ["d1", ""]
    assert shown["ideal grade"].tolist() == ["2", "1"]
    out = styler.to_html()
    assert f"{1 / log2(3):.3f}" in out                       # the discount of rank 2, 3 decimals
    assert f"{3 / (3 + 1 / log2(3)):.3f}" in out             # nDCG@2 = 3 / (3 + 1/log2 3)
    ctx = styler._compute().ctx
    bold = {row for (row, _), props in ctx.items() if ("font-weight", "700") in props}
    assert bold == {1}


def test_simple_styler_formats_and_missing():
    out = query.simple_styler(pd.DataFrame({"x": [0.12345, np.nan]}), {"x": "{:.2f}"}).to_html()
    assert "0.12" in out and "—" in out


def _text_section_script(sel):
    from ndcg_lab.ui import query, state

    query.text_section(sel, state.evaluate(sel, ["AP"]), "AP", ["bm25", "dense"])


def test_text_section_draws_the_sample_topics(legal):
    import json

    from streamlit.testing.v1 import AppTest

    import metrics
    from tests.conftest import assert_ok
    from tests.ui.conftest import LEGAL

    sel, _ = legal
    at = AppTest.from_function(_text_section_script, kwargs={"sel": sel}, default_timeout=120)
    at.run()
    assert_ok(at)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert len(charts) == 2
    scatter = [t for t in charts[0]["data"] if t.get("mode") == "markers"]
    assert [t["name"] for t in scatter] == [name for name, _ in sel.systems]
    frame = metrics.evaluate(LEGAL / "qrels.txt", {p.stem: p for p in sorted(LEGAL.glob("*.run"))}, ["AP"])
    per_query = frame.pivot(index="qid", columns="system", values="value")
    spread = (per_query.max(axis=1) - per_query.min(axis=1)).sort_values(ascending=False)
    chart_data = {id(d) for e in at.expander if e.label == DATA_LABEL for d in e.dataframe}   # the charts' own
    disagree, overlap, unique = (d.value for d in at.dataframe if id(d) not in chart_data)
    spread_column = next(c for c in disagree.columns if "spread" in c)
    assert disagree[spread_column].iloc[0] == pytest.approx(spread.iloc[0])
    assert len(disagree) == 10
    assert overlap["retrieved"].tolist() == [10 * 50, 10 * 50]   # both runs have >= 10 documents per query


def test_query_labels_name_the_topic_the_mean_and_the_difference():
    order = pd.DataFrame({"mean": [0.25, 0.5004], "difference": [-0.125, 0.0625]},
                         index=pd.Index(["7", "12"], name="qid"))
    topics = {"12": "negligence " + "x" * 80}
    labels = query.query_labels(order, topics, ["12", "7"])
    assert labels == {"12": f"12 · negligence {'x' * 59} · mean 0.500 · A−B +0.062",
                      "7": "7 · mean 0.250 · A−B -0.125"}
    assert query.query_labels(order[["mean"]], {}, ["7"]) == {"7": "7 · mean 0.250"}
