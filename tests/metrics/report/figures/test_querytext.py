"""The query-text figures: length scatter with trend lines and bucket bars, read back from the traces
of small hand-made frames (trend lines checked against scipy's linregress)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics.report.figures.querytext import bucket_bars, length_scatter

POINTS = pd.DataFrame({
    "system": ["bm25", "bm25", "bm25", "<b>ce</b>", "<b>ce</b>"],
    "qid": ["q1", "q2", "q3", "q1", "q2"],
    "text": ["cat", "black cat", "big black cat", "cat", "black cat"],
    "length": [1, 2, 3, 1, 2],
    "value": [0.2, 0.5, 0.6, 0.9, 0.3],
})


def trend_of(points: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for system, group in points.groupby("system", sort=False):
        fit = stats.linregress(group["length"], group["value"])
        rows.append({"system": system, "n": len(group), "slope": fit.slope, "intercept": fit.intercept,
                     "r": fit.rvalue})
    return pd.DataFrame(rows)


def test_scatter_has_points_and_a_least_squares_line_per_system():
    fig = length_scatter(POINTS, trend_of(POINTS), measure="nDCG@10", colors={"bm25": "#123456"})
    dots, line, ce_dots, ce_line = fig.data
    assert list(dots.x) == [1, 2, 3] and list(dots.y) == [0.2, 0.5, 0.6]
    assert dots.mode == "markers" and line.mode == "lines"
    assert dots.marker.color == line.line.color == "#123456"
    assert [list(row) for row in dots.customdata] == [["q1", "cat"], ["q2", "black cat"], ["q3", "big black cat"]]
    assert "%{customdata[0]}: %{customdata[1]}" in dots.hovertemplate
    # bm25: x̄ = 2, ȳ = 1.3/3; slope = Σ(x−x̄)(y−ȳ)/Σ(x−x̄)² = ((-1)(0.2) + 0 + (1)(0.6)) / 2 = 0.2
    slope = (-1 * 0.2 + 1 * 0.6) / 2
    intercept = (0.2 + 0.5 + 0.6) / 3 - slope * 2
    assert list(line.x) == [1.0, 3.0]
    assert list(line.y) == pytest.approx([intercept + slope * 1, intercept + slope * 3])
    assert "slope +0.200" in line.name
    # ce: two points give the line through them (r = -1)
    assert list(ce_line.y) == pytest.approx([0.9, 0.3])
    assert "r -1.00" in ce_line.name


def test_names_and_measure_are_html_escaped():
    fig = length_scatter(POINTS, trend_of(POINTS), measure="P<b>@5")
    assert fig.data[2].name == "&lt;b&gt;ce&lt;/b&gt;"
    assert fig.data[3].name.startswith("&lt;b&gt;ce&lt;/b&gt; trend")
    assert fig.layout.yaxis.title.text == "P&lt;b&gt;@5"
    assert fig.layout.xaxis.title.text == "query length (terms)"


def test_no_line_when_the_slope_is_undefined_or_the_system_has_no_trend():
    flat = POINTS.assign(length=2)
    trend = trend_of(POINTS).assign(slope=np.nan)
    fig = length_scatter(flat, trend, measure="AP")
    assert [t.mode for t in fig.data] == ["markers", "markers"]
    fig = length_scatter(POINTS, trend_of(POINTS).iloc[:1], measure="AP")
    assert [t.mode for t in fig.data] == ["markers", "lines", "markers"]


def test_bucket_bars_group_per_system_with_query_counts():
    buckets = pd.DataFrame({"system": ["bm25", "bm25", "ce"], "bucket": ["1", "2-3", "1"],
                            "n_queries": [4, 2, 4], "mean": [0.25, 0.5, 0.75]})
    fig = bucket_bars(buckets, measure="nDCG@10", colors={"ce": "red"})
    bm25, ce = fig.data
    assert fig.layout.barmode == "group"
    assert list(bm25.x) == ["1", "2-3"] and list(bm25.y) == [0.25, 0.5]
    assert list(bm25.customdata) == [4, 2]
    assert list(ce.x) == ["1"] and list(ce.y) == [0.75] and ce.marker.color == "red"
    assert "over %{customdata} queries" in bm25.hovertemplate
    assert fig.layout.yaxis.title.text == "mean nDCG@10"
