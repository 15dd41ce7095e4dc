"""metrics.report.figures.explain: the per-rank figures carry the frame's numbers, a colour per
grade and the names in the hover, from small hand-made frames."""
from __future__ import annotations

from math import log2

import numpy as np
import pandas as pd
import pytest

from metrics.analysis.explain import RelevanceMatrix
from metrics.errors import MetricsError
from metrics.report.figures import explain as figs
from metrics.report.figures.curves import PALETTE
from metrics.report.figures.explain import GRADE_COLORS, NOT_RETRIEVED_COLOR, UNJUDGED_COLOR


def test_grade_colours_clip_to_zero_and_four():
    assert figs.grade_color(2) == GRADE_COLORS[2]
    assert figs.grade_color(7) == GRADE_COLORS[4] and figs.grade_color(-1) == GRADE_COLORS[0]
    assert figs.grade_color(np.nan) == UNJUDGED_COLOR and figs.grade_color(1, "unjudged") == UNJUDGED_COLOR
    assert figs.grade_color(1, "not retrieved") == NOT_RETRIEVED_COLOR
    assert figs.text_color(3) == "#ffffff" and figs.text_color(2) == "#222222"
    assert figs.text_color(4, "unjudged") == "#222222"


# A: d1 (grade 2) at 1, u1 unjudged at 2, d3 inferred 0 at 3, and d9 relevant but not retrieved
A = pd.DataFrame({"rank": [1, 2, 3, 4], "docno": ["d1", "u1", "d3", "d9"], "grade": [2.0, np.nan, 0.0, 3.0],
                  "status": ["judged", "unjudged", "inferred", "not retrieved"],
                  "title": ["First <doc>", None, "", ""]})
B = pd.DataFrame({"rank": [1, 2], "docno": ["d3", "d1"], "grade": [0.0, 2.0], "status": ["judged", "judged"]})


def test_ranked_lists_markers_by_grade_and_segments_between_columns():
    fig = figs.ranked_lists({"A": A, "B": B}, colors={"A": "#123456"})
    segments, a, b = fig.data
    assert segments.name == "same document"
    # d1: A rank 1 -> B rank 2; d3: A rank 3 -> B rank 1 (None breaks the line between segments)
    assert list(segments.x) == [0, 1, None, 0, 1, None]
    assert list(segments.y) == [1, 2, None, 3, 1, None]
    assert list(a.y) == [1, 2, 3] and list(a.x) == [0, 0, 0]            # not retrieved is not drawn
    assert list(a.text) == ["2", "?", "0"]
    assert list(a.marker.color) == [GRADE_COLORS[2], UNJUDGED_COLOR, GRADE_COLORS[0]]
    assert list(a.marker.symbol) == ["circle", "circle", "diamond"]     # proxy-labelled: a diamond
    assert a.marker.line.color == "#123456" and b.marker.line.color == PALETTE[1]
    assert list(a.hovertext) == ["<b>A</b> rank 1<br>d1<br>First &lt;doc&gt;<br>grade 2",
                                 "<b>A</b> rank 2<br>u1<br>unjudged",
                                 "<b>A</b> rank 3<br>d3<br>inferred grade 0"]
    assert list(b.hovertext) == ["<b>B</b> rank 1<br>d3<br>grade 0", "<b>B</b> rank 2<br>d1<br>grade 2"]
    assert list(fig.layout.xaxis.ticktext) == ["A", "B"]


def test_ranked_lists_needs_a_system_and_its_columns():
    with pytest.raises(MetricsError, match="no ranked lists"):
        figs.ranked_lists({})
    with pytest.raises(MetricsError, match="ranked_lists: frame lacks column"):
        figs.ranked_lists({"A": A.drop(columns="status")})


def explained(gains: list[float], ideal: list[float]) -> pd.DataFrame:
    """An explain frame by hand: contribution gain / log2(rank + 1), running DCG, IDCG and nDCG."""
    rank = np.arange(1, len(gains) + 1)
    contribution = np.array(gains) / np.log2(rank + 1)
    dcg = np.cumsum(contribution)
    idcg = np.cumsum(np.array(ideal) / np.log2(rank + 1))
    return pd.DataFrame({"rank": rank, "gain": gains, "contribution": contribution, "dcg": dcg, "idcg": idcg,
                         "ndcg": dcg / idcg})


def test_contribution_waterfall_bars_and_total():
    fig = figs.contribution_waterfall(explained([3, 0, 1], [3, 1, 0]))
    (water,) = fig.data
    assert list(water.x) == ["1", "2", "3", "DCG@3"]
    assert np.asarray(water.y) == pytest.approx([3 / log2(2), 0.0, 1 / log2(4), 3 + 0.5])
    assert list(water.measure) == ["relative", "relative", "relative", "total"]
    assert list(water.text) == ["3.000", "0.000", "0.500", "3.5000"]
    assert water.hovertext[2] == "rank 3: gain 1 / log2(3+1) = 0.5000"
    assert water.hovertext[3] == "DCG@3 = 3.5000"


def test_cumulative_gain_lines_and_second_axis():
    frame = explained([3, 0, 1], [3, 1, 0])
    fig = figs.cumulative_gain(frame)
    dcg, idcg, ndcg = fig.data
    assert (dcg.name, idcg.name, ndcg.name) == ("DCG", "IDCG", "nDCG")
    assert np.asarray(dcg.y) == pytest.approx([3.0, 3.0, 3.5])
    assert np.asarray(idcg.y) == pytest.approx([3.0, 3 + 1 / log2(3), 3 + 1 / log2(3)])
    assert np.asarray(ndcg.y) == pytest.approx([1.0, 3 / (3 + 1 / log2(3)), 3.5 / (3 + 1 / log2(3))])
    assert ndcg.yaxis == "y2" and dcg.yaxis in (None, "y")
    with pytest.raises(MetricsError, match="cumulative_gain: frame lacks column"):
        figs.cumulative_gain(frame.drop(columns="idcg"))


def test_relevance_heatmap_categories_and_hover():
    matrix = RelevanceMatrix(
        system="A", qids=np.array(["q1", "q<2>"], dtype=object),
        grade=np.array([[2.0, np.nan, 5.0], [-1.0, 1.0, np.nan]]),
        status=np.array([[1, 2, 1], [1, 3, 0]]),
        docno=np.array([["d1", "u1", "d5"], ["d7", "d8", None]], dtype=object))
    fig = figs.relevance_heatmap(matrix)
    (heat,) = fig.data
    # categories: 0 not retrieved, 1 unjudged, 2 + grade clipped to 0..4
    assert np.asarray(heat.z).tolist() == [[2 + 2, 1, 2 + 4], [2 + 0, 2 + 1, 0]]
    assert list(heat.x) == [1, 2, 3] and list(heat.y) == ["q1", "q<2>"]
    assert heat.hovertext[0][1] == "query q1, rank 2<br>u1<br>unjudged"
    assert heat.hovertext[1][1] == "query q&lt;2&gt;, rank 2<br>d8<br>inferred grade 1"
    assert heat.hovertext[1][2] == "query q&lt;2&gt;, rank 3<br><br>not retrieved"
    colours = [c for _, c in heat.colorscale]
    assert colours[0] == NOT_RETRIEVED_COLOR and colours[2] == UNJUDGED_COLOR and colours[-1] == GRADE_COLORS[4]
    assert list(heat.colorbar.ticktext) == ["not retrieved", "unjudged", "0", "1", "2", "3", "4+"]


def test_relevance_heatmaps_side_by_side_share_the_query_rows_and_one_colour_bar():
    rows = np.array(["q1", "q22"], dtype=object)
    a = RelevanceMatrix(system="A", qids=rows, grade=np.array([[2.0, np.nan], [1.0, 3.0]]),
                        status=np.array([[1, 2], [1, 1]]), docno=np.array([["d1", "u1"], ["d7", "d8"]], dtype=object))
    b = RelevanceMatrix(system="b<i>", qids=rows, grade=np.array([[np.nan, 0.0], [4.0, np.nan]]),
                        status=np.array([[0, 1], [1, 2]]), docno=np.array([[None, "d2"], ["d9", "u9"]], dtype=object))
    fig = figs.relevance_heatmap([a, b])
    left, right = fig.data
    assert np.asarray(left.z).tolist() == [[4, 1], [3, 5]] and np.asarray(right.z).tolist() == [[0, 2], [6, 1]]
    assert list(left.y) == list(right.y) == ["q1", "q22"]
    assert (left.xaxis, right.xaxis, left.yaxis, right.yaxis) == ("x", "x2", "y", "y2")
    assert fig.layout.yaxis2.matches == "y"                        # one set of query rows
    assert left.showscale and not right.showscale                  # one colour bar
    assert [t.text for t in fig.layout.annotations] == ["A", "b&lt;i&gt;"]   # column titles, as text
    assert right.hovertext[1][0] == "b&lt;i&gt;: query q22, rank 1<br>d9<br>grade 4"
    # margins wide enough for the query ids (3 characters here) and the colour bar: drawn once
    assert fig.layout.margin.l == 44 + 8 * 3 and fig.layout.margin.r == 150
    with pytest.raises(MetricsError, match="different queries"):
        figs.relevance_heatmap([a, RelevanceMatrix("C", rows[::-1], a.grade, a.status, a.docno)])
    with pytest.raises(MetricsError, match="no matrix"):
        figs.relevance_heatmap([])


def test_discount_curve_marks_say_how_much_less():
    rank = np.arange(1, 11)
    fig = figs.discount_curve(pd.DataFrame({"rank": rank, "discount": 1 / np.log2(rank + 1)}))
    assert np.asarray(fig.data[0].y) == pytest.approx(1 / np.log2(rank + 1))
    # 1/log2(6) = 0.387, 1 - 0.387 = 61% less; 1/log2(11) = 0.289, 71% less
    assert [a.text for a in fig.layout.annotations] == ["rank 1: 1.000", "rank 5: 0.387 (61% less)",
                                                        "rank 10: 0.289 (71% less)"]
    short = figs.discount_curve(pd.DataFrame({"rank": [1, 2], "discount": [1.0, 1 / log2(3)]}))
    assert len(short.layout.annotations) == 1     # ranks 5 and 10 are not in the frame


def test_gain_bars_linear_and_exponential():
    table = pd.DataFrame({"grade": [0, 1, 2, 3], "linear gain": [0, 1, 2, 3],
                          "exponential gain": [2**0 - 1, 2**1 - 1, 2**2 - 1, 2**3 - 1]})
    linear, exponential = figs.gain_bars(table).data
    assert (linear.name, exponential.name) == ("linear: rel", "exponential: 2^rel - 1")
    assert list(linear.y) == [0, 1, 2, 3] and list(exponential.y) == [0, 1, 3, 7]
    assert (linear.marker.color, exponential.marker.color) == (GRADE_COLORS[2], GRADE_COLORS[4])


def _explained(docnos, contributions):
    """An explain-like frame: rank, docno, contribution and the cumulative dcg."""
    return pd.DataFrame({"rank": np.arange(1, len(docnos) + 1), "docno": docnos, "contribution": contributions,
                         "dcg": np.cumsum(contributions)})


def test_contribution_pair_shows_both_runs_and_the_difference():
    a = _explained(["d1", "x", "d2"], [3.0, 0.0, 1 / log2(4)])        # grades 3, unjudged, 1
    b = _explained(["d2", "d1", "x"], [1.0, 3 / log2(3), 0.0])
    fig = figs.contribution_pair(a, b, ("A <i>", "B"), colors={"B": "#123456"})
    bar_a, bar_b, diff = fig.data
    assert (bar_a.name, bar_b.name) == ("A &lt;i&gt;", "B") and bar_b.marker.color == "#123456"
    assert list(bar_a.y) == [3.0, 0.0, 0.5] and list(bar_b.customdata) == ["d2", "d1", "x"]
    # B - A per rank, then the total DCG@3(B) - DCG@3(A) from the frames' dcg columns
    assert list(diff.x) == ["1", "2", "3", "Δ DCG@3"]
    assert list(diff.y) == pytest.approx([1 - 3, 3 / log2(3) - 0, 0 - 0.5, (1 + 3 / log2(3)) - 3.5])
    assert list(diff.measure) == ["relative"] * 3 + ["total"]
    with pytest.raises(MetricsError, match="same depth"):
        figs.contribution_pair(a, b.iloc[:2], ("A", "B"))
