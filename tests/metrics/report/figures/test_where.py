"""metrics.report.figures.where: the figures carry the analysis' numbers, grade colours and inert names."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from metrics.errors import MetricsError
from metrics.report.figures import where as figs
from metrics.report.figures.explain import GRADE_COLORS

PER_QUERY = pd.DataFrame({"qid": ["1", "2", "3"], "first": [0.2, 0.5, 0.9], "oracle": [0.8, 0.6, 0.9],
                          "reranked": [0.5, 0.55, 0.8], "headroom": [0.6, 0.1, 0.0],
                          "share": [0.5, 0.5, np.nan]})
SWEEP = pd.DataFrame({"depth": [10, 20, 100], "mean": [0.4, 0.5, 0.5], "diff": [0.1, 0.2, 0.2],
                      "share": [0.2, 0.4, 0.4], "p_value": [0.01, 0.2, 0.2], "p_adjusted": [0.03, 0.4, 0.4],
                      "p_previous": [0.01, 0.3, 1.0]})


def test_headroom_bars_span_first_to_oracle():
    fig = figs.headroom_bars(PER_QUERY, measure="nDCG@10", first="bm25", reranked="<b>ce</b>")
    bars, marks = fig.data
    assert list(bars.x) == ["1", "2", "3"] and list(bars.base) == [0.2, 0.5, 0.9]
    assert list(bars.y) == pytest.approx([0.6, 0.1, 0.0])
    assert marks.name == "&lt;b&gt;ce&lt;/b&gt;" and list(marks.customdata) == ["50.0%", "50.0%", "n/a (no headroom)"]
    most = figs.headroom_bars(PER_QUERY, measure="nDCG@10", first="bm25", reranked="ce", most=2)
    assert list(most.data[0].x) == ["1", "2"] and "the 2 of 3 queries" in most.layout.title.text


def test_sweep_curve_marks_significant_depths_and_references():
    fig = figs.sweep_curve(SWEEP, {"first": 0.3, "oracle": 0.9, "reranked": 0.5}, measure="nDCG@10")
    (line,) = fig.data
    assert list(line.x) == [10, 20, 100] and list(line.marker.color) == [figs.RERANKED_COLOR, "white", "white"]
    assert sorted(shape.y0 for shape in fig.layout.shapes) == [0.3, 0.5, 0.9]
    assert any("oracle of the top k 0.9000" in a.text for a in fig.layout.annotations)


def test_band_bars_stack_grades_and_mark_totals():
    parts = pd.DataFrame({"qid": ["1", "1", "2"], "band": ["1-3", "4-10", "1-3"], "grade": [3, 1, 1],
                          "diff": [1.0, -0.5, 0.25]})
    fig = figs.band_bars(parts, ["1-3", "4-10", "11-20"], n_queries=2, measure="DCG@20", a="A", b="B")
    grade3, grade1, totals = fig.data
    assert grade3.name == "grade 3" and grade3.marker.color == GRADE_COLORS[3]
    assert list(grade3.y) == [0.5, 0.0, 0.0] and list(grade1.y) == [0.125, -0.25, 0.0]   # sums / 2 queries
    assert list(totals.y) == [0.625, -0.25, 0.0]
    with pytest.raises(MetricsError, match="at least one query"):
        figs.band_bars(parts, ["1-3"], n_queries=0, measure="DCG@20", a="A", b="B")


def test_recall_curves_one_line_per_system():
    recall = pd.DataFrame({"system": ["a", "a", "b", "b"], "k": [1, 2, 1, 2], "value": [0.1, 0.2, 0.0, 0.3]})
    fig = figs.recall_curves(recall, colors={"b": "#000000"})
    assert [t.name for t in fig.data] == ["a", "b"] and fig.data[1].line.color == "#000000"
    assert list(fig.data[1].y) == [0.0, 0.3]
    with pytest.raises(MetricsError, match="lacks column"):
        figs.recall_curves(recall.drop(columns="k"))
