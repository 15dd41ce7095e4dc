"""A chart's text alternative holds the numbers the chart draws, point for point."""
from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from metrics.report.figures.curves import leaderboard_bars
from ndcg_lab.ui.charts import figure_frame


def test_lines_become_one_row_per_point_under_the_axis_titles():
    fig = go.Figure([go.Scatter(x=[1, 2, 3], y=[0.25, 0.5, 0.75], name="bm25"),
                     go.Scatter(x=[1, 2], y=[0.1, 0.2], name="dense")])
    fig.update_layout(xaxis_title="k", yaxis_title="nDCG@k")
    frame = figure_frame(fig)
    assert list(frame.columns) == ["series", "k", "nDCG@k"]
    assert frame.values.tolist() == [["bm25", 1, 0.25], ["bm25", 2, 0.5], ["bm25", 3, 0.75],
                                     ["dense", 1, 0.1], ["dense", 2, 0.2]]


def test_a_leaderboard_figure_gives_each_system_its_mean():
    means = pd.DataFrame({"AP": [0.3125, 0.5]}, index=["bm25", "dense"])
    frame = figure_frame(leaderboard_bars(means, "AP"))
    assert frame.values.tolist() == [["bm25", 0.3125], ["dense", 0.5]]   # one series: no series column
    assert list(frame.columns) == ["system", "AP"]


def test_a_heatmap_becomes_its_matrix_and_horizontal_bars_keep_category_first():
    heat = figure_frame(go.Figure(go.Heatmap(z=[[1.0, 0.5], [0.5, 1.0]], x=["a", "b"], y=["a", "b"])))
    assert heat.values.tolist() == [["a", 1.0, 0.5], ["b", 0.5, 1.0]]
    bars = go.Figure(go.Bar(x=[3, 4], y=["0.5", "0.6"], orientation="h"))
    bars.update_layout(xaxis_title="answers", yaxis_title="answer")
    assert figure_frame(bars).values.tolist() == [["0.5", 3], ["0.6", 4]]
    assert list(figure_frame(bars).columns) == ["answer", "answers"]


def test_heatmaps_side_by_side_become_one_matrix_their_columns_named_by_system():
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, shared_yaxes=True)
    fig.add_trace(go.Heatmap(z=[[1, 2], [3, 4]], x=[1, 2], y=["q1", "q2"], name="bm25"), row=1, col=1)
    fig.add_trace(go.Heatmap(z=[[5, 6], [7, 8]], x=[1, 2], y=["q1", "q2"], name="a&lt;b"), row=1, col=2)
    fig.update_yaxes(title_text="query", row=1, col=1)
    frame = figure_frame(fig)
    assert list(frame.columns) == ["query", "bm25: 1", "bm25: 2", "a<b: 1", "a<b: 2"]
    assert frame.values.tolist() == [["q1", 1, 2, 5, 6], ["q2", 3, 4, 7, 8]]
    # on other rows, the first heatmap alone (as for one heatmap)
    fig.data[1].y = ["q9", "q2"]
    assert figure_frame(fig).values.tolist() == [["q1", 1, 2], ["q2", 3, 4]]


def test_a_figure_read_back_from_a_cache_gives_the_same_numbers():
    """A figure cached by st.cache_data comes back through pickle with its numpy arrays in plotly's
    JSON form ({"dtype", "bdata"}); its text alternative still holds the numbers, not that form."""
    values = np.array([0.125, -0.5, 0.75])
    fig = go.Figure([go.Bar(x=["q1", "q2", "q3"], y=values, name="delta"),
                     go.Heatmap(z=np.array([[1.0, 0.5], [0.5, 1.0]]), x=["a", "b"], y=["a", "b"])])
    fig.update_layout(xaxis_title="query", yaxis_title="Δ")
    cached = pickle.loads(pickle.dumps(fig))
    assert isinstance(cached.data[0].y, dict)   # what the cache holds: the encoded form
    assert figure_frame(cached).values.tolist() == figure_frame(fig).values.tolist() == \
        [["a", 1.0, 0.5], ["b", 0.5, 1.0]]
    bars = go.Figure(cached.data[0])
    bars.update_layout(xaxis_title="query", yaxis_title="Δ")
    assert figure_frame(bars).values.tolist() == [["q1", 0.125], ["q2", -0.5], ["q3", 0.75]]


def test_names_the_figure_escaped_are_listed_as_typed():
    """Plotly renders HTML entities, so the chart shows ``nDCG(dcg='exp-log2')@10`` and ``a<b>``; its
    table shows them the same, not as ``&#x27;`` and ``&lt;``."""
    means = pd.DataFrame({"nDCG(dcg='exp-log2')@10": [0.5]}, index=["a<b> & c"])
    frame = figure_frame(leaderboard_bars(means, "nDCG(dcg='exp-log2')@10"))
    assert frame.values.tolist() == [["a<b> & c", 0.5]]
    assert list(frame.columns) == ["system", "nDCG(dcg='exp-log2')@10"]
    fig = go.Figure([go.Scatter(x=[0.1], y=[0.2], name="x&amp;y")])
    fig.update_layout(xaxis_title="AP &lt;1&gt;", yaxis_title="P@10")
    frame = figure_frame(fig)
    assert frame.columns.tolist() == ["AP <1>", "P@10"] and frame.values.tolist() == [[0.1, 0.2]]
