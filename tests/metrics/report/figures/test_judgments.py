"""metrics.report.figures.judgments: the Judgments page's figures carry the frames' numbers, a colour
per system and the names in the hover, from small hand-made frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.analysis import judgments as J
from metrics.errors import MetricsError
from metrics.ranking import rank
from metrics.report.figures import judgments as figs
from metrics.report.figures.curves import PALETTE
from tests.metrics.analysis.judgments.case import RUNS, make_qrels, make_run
from tests.metrics.report.figures.test_curves import per_query


def test_judged_curve_is_the_mean_over_queries_on_a_zero_to_one_axis():
    curves = {"A": per_query({"q1": [1.0, 0.5, 2 / 3], "q2": [0.0, 0.5, 2 / 3]}),
              "B": per_query({"q1": [1.0, 1.0, 1.0], "q2": [1.0, 0.5, 1 / 3]})}
    fig = figs.judged_curve(curves)
    lines = {t.name: t for t in fig.data}
    assert list(lines) == ["A", "B"]
    assert list(lines["A"].x) == [1, 2, 3]
    assert np.asarray(lines["A"].y) == pytest.approx([(1 + 0) / 2, (0.5 + 0.5) / 2, 2 / 3])
    assert np.asarray(lines["B"].y) == pytest.approx([1.0, (1 + 0.5) / 2, (1 + 1 / 3) / 2])
    assert list(fig.layout.yaxis.range) == [0, 1.02]
    assert fig.layout.xaxis.type == "linear"
    assert figs.judged_curve(curves, log_x=True).layout.xaxis.type == "log"


STRATEGY_TABLE = pd.DataFrame({"system": ["A", "B", "A", "B"], "strategy": ["zero", "zero", "condensed", "condensed"],
                               "value": [0.5, 0.4, 0.3, 0.6], "rank": [1, 2, 2, 1]})


def test_strategy_ranks_one_line_per_system_with_values_and_labels():
    fig = figs.strategy_ranks(STRATEGY_TABLE, labels={"zero": "unjudged = 0"}, measure="nDCG@10",
                              colors={"A": "#111111", "B": "#222222"})
    a, b = fig.data
    assert (a.name, b.name) == ("A", "B")
    assert list(a.x) == ["unjudged = 0", "condensed"]           # a strategy without a label keeps its key
    assert list(a.y) == [1, 2] and list(b.y) == [2, 1]
    labels = {(n.x, n.y): n.text for n in fig.layout.annotations}
    assert labels == {("unjudged = 0", 1): "0.5000", ("condensed", 2): "0.3000",
                      ("unjudged = 0", 2): "0.4000", ("condensed", 1): "0.6000"}
    assert list(b.customdata) == [0.4, 0.6]
    assert (a.line.color, b.line.color) == ("#111111", "#222222")
    assert "<b>A</b>" in a.hovertemplate and "nDCG@10 = %{customdata:.4f}" in a.hovertemplate
    assert fig.layout.yaxis.title.text == "rank by nDCG@10"
    assert list(fig.layout.yaxis.range) == [2.5, 0.5]           # rank 1 at the top


def test_bump_chart_labels_sit_on_opaque_boxes_above_the_lines():
    """A value label drawn as trace text lies under the lines that cross it; as an annotation with
    an opaque background it is drawn over them."""
    fig = figs.strategy_ranks(STRATEGY_TABLE, measure="nDCG@10")
    assert all("text" not in t.mode for t in fig.data)
    assert len(fig.layout.annotations) == 4
    for note in fig.layout.annotations:
        assert note.showarrow is False and note.yshift > 0
        assert note.bgcolor.startswith("rgba(255, 255, 255") and float(note.bgcolor.rsplit(",", 1)[1][:-1]) > 0.9


def test_strategy_ranks_leave_a_gap_where_a_system_lacks_a_strategy():
    table = STRATEGY_TABLE.iloc[:3].assign(system=["A", "x<y>", "A"])
    fig = figs.strategy_ranks(table, measure="AP")
    a, other = fig.data
    assert other.name == "x&lt;y&gt;" and "<b>x&lt;y&gt;</b>" in other.hovertemplate
    assert other.y[0] == 2 and np.isnan(other.y[1])
    assert sorted(n.text for n in fig.layout.annotations) == ["0.3000", "0.4000", "0.5000"]  # none for the gap
    assert (a.line.color, other.line.color) == (PALETTE[0], PALETTE[1])
    with pytest.raises(MetricsError, match="strategy_ranks: frame lacks column"):
        figs.strategy_ranks(STRATEGY_TABLE.drop(columns="rank"))


def test_first_unjudged_box_leaves_out_queries_judged_throughout():
    frame = pd.DataFrame({"qid": ["q1", "q2", "q3", "q1", "q2"], "system": ["A", "A", "A", "B", "B"],
                          "first_unjudged": pd.array([3, None, 1, None, None], dtype="Int64")})
    fig = figs.first_unjudged_box(frame, colors={"A": "#123456"})
    a, b = fig.data
    assert (a.name, b.name) == ("A", "B")
    assert list(a.y) == [3, 1] and list(a.text) == ["q1", "q3"]
    assert list(b.y) == [] and list(b.text) == []
    assert a.marker.color == "#123456" and b.marker.color == PALETTE[0]
    assert "<b>A</b>" in a.hovertemplate and "query %{text}" in a.hovertemplate
    with pytest.raises(MetricsError, match="first_unjudged_box: frame lacks column"):
        figs.first_unjudged_box(frame.drop(columns="qid"))


def test_overlap_heatmap_values_text_and_title():
    # A and B share 1 of 3 distinct top-2 documents in one query: Jaccard 1/3
    matrix = pd.DataFrame([[1.0, 1 / 3], [1 / 3, 1.0]], index=["A", "B"], columns=["A", "B"])
    fig = figs.overlap_heatmap(matrix, k=2)
    (heat,) = fig.data
    np.testing.assert_allclose(np.asarray(heat.z, dtype=float), [[1.0, 1 / 3], [1 / 3, 1.0]])
    assert [list(row) for row in heat.text] == [["1.00", "0.33"], ["0.33", "1.00"]]
    assert list(heat.x) == ["A", "B"] and list(heat.y) == ["A", "B"]
    assert heat.colorbar.title.text == "Jaccard@2" and "mean Jaccard@2" in heat.hovertemplate
    assert figs.overlap_heatmap(matrix).data[0].colorbar.title.text == "Jaccard"


@pytest.fixture
def runs3():
    """The three systems of the judgments tests' hand-built case (tests/metrics/analysis/judgments/case.py)."""
    qrels = make_qrels()
    return {name: rank(make_run(name, lists), qrels) for name, lists in RUNS.items()}


def test_figures_carry_the_numbers(runs3):
    curves = {name: metrics.curve_ranked(r, "Judged", max_k=3) for name, r in runs3.items()}
    fig = figs.judged_curve(curves)
    assert [t.name for t in fig.data] == ["A", "B", "C"]
    assert list(fig.layout.yaxis.range) == [0, 1.02]

    table = J.strategy_table({"zero": {"A": 0.5, "B": 0.4}, "condensed": {"A": 0.3, "B": 0.6}})
    fig = figs.strategy_ranks(table, labels=J.STRATEGIES, measure="nDCG@10")
    a = next(t for t in fig.data if t.name == "A")
    assert list(a.y) == [1, 2] and list(a.x) == ["unjudged = 0", "condensed (judged only)"]

    box = figs.first_unjudged_box(J.first_unjudged(runs3))
    assert [list(t.y) for t in box.data] == [[3, 2], [1, 3], []]

    matrix, _ = J.topk_jaccard(runs3, 3)
    heat = figs.overlap_heatmap(matrix, k=3)
    assert np.allclose(np.asarray(heat.data[0].z, dtype=float), matrix.to_numpy())
