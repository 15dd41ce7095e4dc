"""metrics.figures: the figures carry exactly the numbers they are given; bands and order changes by hand."""
from __future__ import annotations

from math import log2

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from metrics import stats
from metrics.errors import MetricsError
from metrics.report.figures.curves import (
    FIGURE_CONFIG,
    PALETTE,
    leaderboard_bars,
    mean_curves,
    metric_curve,
    order_changes,
    system_colors,
)


def per_query(rows: dict[str, list[float]]) -> pd.DataFrame:
    """A per-query curve as metrics.curve returns it: index qid, columns k = 1..K."""
    values = np.array(list(rows.values()), dtype=float)
    return pd.DataFrame(values, index=pd.Index(list(rows), name="qid"),
                        columns=pd.RangeIndex(1, values.shape[1] + 1, name="k"))


def tidy(curves: dict[str, list[float]], **extra: dict[str, list[float]]) -> pd.DataFrame:
    """Tidy mean frame system, k, value (+ extra columns such as lower/upper) from {system: values}."""
    rows = {"system": [], "k": [], "value": []} | {c: [] for c in extra}
    for system, values in curves.items():
        rows["system"] += [system] * len(values)
        rows["k"] += list(range(1, len(values) + 1))
        rows["value"] += values
        for column, by_system in extra.items():
            rows[column] += by_system[system]
    return pd.DataFrame(rows)


def lines(fig: go.Figure) -> list:
    return [t for t in fig.data if t.fill != "toself"]


def bands(fig: go.Figure) -> list:
    return [t for t in fig.data if t.fill == "toself"]


# ---------------------------------------------------------------- colours

def test_system_colors_follow_the_given_order_and_cycle():
    names = [f"s{i}" for i in range(len(PALETTE) + 2)]
    colors = system_colors(names + ["s0"])  # a repeated name keeps its first place
    assert list(colors) == names
    assert colors["s0"] == PALETTE[0] and colors["s1"] == PALETTE[1]
    assert colors[f"s{len(PALETTE)}"] == PALETTE[0]
    assert system_colors(["b", "a"]) == {"b": PALETTE[0], "a": PALETTE[1]}


def test_figure_config_downloads_png():
    assert FIGURE_CONFIG["toImageButtonOptions"]["format"] == "png"
    assert FIGURE_CONFIG["displaylogo"] is False


# ---------------------------------------------------------------- mean curves

def test_mean_curves_is_the_mean_over_queries():
    a = per_query({"q1": [1.0, 0.5, 0.25], "q2": [0.0, 0.5, 0.75]})
    b = per_query({"q1": [0.2, 0.4], "q2": [0.4, 0.4], "q3": [0.9, 1.0]})
    frame = mean_curves({"a": a, "b": b})
    assert list(frame.columns) == ["system", "k", "value"]
    assert frame["system"].tolist() == ["a"] * 3 + ["b"] * 2
    assert frame["k"].tolist() == [1, 2, 3, 1, 2]
    expected = [(1.0 + 0.0) / 2, (0.5 + 0.5) / 2, (0.25 + 0.75) / 2,
                (0.2 + 0.4 + 0.9) / 3, (0.4 + 0.4 + 1.0) / 3]
    assert frame["value"].to_numpy() == pytest.approx(expected)


def test_mean_curves_with_bootstrap_adds_a_band_around_the_mean():
    rng = np.random.default_rng(7)
    a = pd.DataFrame(rng.random((50, 4)), columns=range(1, 5))
    frame = mean_curves({"a": a}, n_boot=200, seed=3)
    assert list(frame.columns) == ["system", "k", "value", "lower", "upper"]
    lower, upper = stats.bootstrap_ci(a.to_numpy(), resamples=200, seed=3)
    assert frame["lower"].to_numpy() == pytest.approx(lower)
    assert frame["upper"].to_numpy() == pytest.approx(upper)
    assert (frame["lower"] <= frame["value"]).all() and (frame["value"] <= frame["upper"]).all()


def test_mean_curves_of_nothing_is_an_empty_tidy_frame():
    frame = mean_curves({})
    assert list(frame.columns) == ["system", "k", "value"] and frame.empty


# ---------------------------------------------------------------- order changes

def test_order_changes_two_systems_crossing_at_k3():
    frame = tidy({"a": [0.9, 0.8, 0.5, 0.4], "b": [0.1, 0.2, 0.6, 0.7]})
    assert order_changes(frame) == [{"k": 3, "before": ["a", "b"], "after": ["b", "a"]}]


def test_order_changes_ties_go_by_system_name():
    # k=1: a ahead; k=2: tie -> by name a, b (no change); k=3: b ahead
    frame = tidy({"b": [0.1, 0.5, 0.9], "a": [0.2, 0.5, 0.3]})
    assert order_changes(frame) == [{"k": 3, "before": ["a", "b"], "after": ["b", "a"]}]
    # a tie that differs only by summation noise is still a tie
    noisy = tidy({"b": [0.3, 0.1 + 0.2], "a": [0.3, 0.3]})
    assert order_changes(noisy) == []


def test_order_changes_three_systems_and_several_cutoffs():
    frame = tidy({"a": [0.5, 0.5, 0.5, 0.5], "b": [0.4, 0.6, 0.6, 0.3], "c": [0.3, 0.3, 0.7, 0.7]})
    assert order_changes(frame) == [
        {"k": 2, "before": ["a", "b", "c"], "after": ["b", "a", "c"]},
        {"k": 3, "before": ["b", "a", "c"], "after": ["c", "b", "a"]},
        {"k": 4, "before": ["c", "b", "a"], "after": ["c", "a", "b"]},
    ]


def test_order_changes_only_where_every_system_has_a_value():
    # b's run is two deep: k=3 and k=4 have one system only
    frame = tidy({"a": [0.9, 0.1, 0.5, 0.6], "b": [0.5, 0.5]})
    assert order_changes(frame) == [{"k": 2, "before": ["a", "b"], "after": ["b", "a"]}]
    assert order_changes(tidy({"a": [0.1, 0.9]})) == []


# ---------------------------------------------------------------- metric_curve

def test_metric_curve_draws_one_line_per_system_with_the_given_numbers():
    frame = tidy({"bm25": [0.5, 0.45, 0.4], "dense": [0.3, 0.5, 0.55]})
    label = "nDCG(dcg='exp-log2')@k"
    fig = metric_curve(frame, measure_label=label)
    assert isinstance(fig, go.Figure)
    assert [t.name for t in fig.data] == ["bm25", "dense"]
    for trace, (system, part) in zip(fig.data, frame.groupby("system", sort=False)):
        np.testing.assert_array_equal(np.asarray(trace.x), part["k"].to_numpy())
        np.testing.assert_array_equal(np.asarray(trace.y), part["value"].to_numpy())
        assert trace.line.color == system_colors(["bm25", "dense"])[system]
        assert system in trace.hovertemplate and "%{x}" in trace.hovertemplate
        assert "%{y:.4f}" in trace.hovertemplate
    assert fig.layout.yaxis.title.text == label
    assert fig.layout.xaxis.type == "linear"
    assert fig.layout.height == 420
    assert fig.layout.legend.orientation == "h" and fig.layout.legend.y == 0 and fig.layout.legend.yref == "container"
    assert fig.layout.template == go.layout.Template(pio.templates["plotly_white"])
    assert not bands(fig) and not fig.layout.shapes


def test_metric_curve_accepts_per_query_curves():
    a = per_query({"q1": [1.0, 0.5], "q2": [0.0, 0.5]})
    b = per_query({"q1": [0.2, 0.4], "q2": [0.6, 0.8]})
    fig = metric_curve({"a": a, "b": b}, measure_label="nDCG@k")
    assert [t.name for t in fig.data] == ["a", "b"]
    assert np.asarray(fig.data[0].y) == pytest.approx([0.5, 0.5])
    assert np.asarray(fig.data[1].y) == pytest.approx([0.4, 0.6])


def test_metric_curve_log_x():
    fig = metric_curve(tidy({"a": [0.1, 0.2, 0.3]}), measure_label="P@k", log_x=True)
    assert fig.layout.xaxis.type == "log"


def test_metric_curve_band_from_columns():
    frame = tidy({"a": [0.5, 0.6, 0.7], "b": [0.2, 0.3, 0.4]},
                 lower={"a": [0.4, 0.5, 0.6], "b": [0.1, 0.2, 0.3]},
                 upper={"a": [0.6, 0.7, 0.8], "b": [0.3, 0.4, 0.5]})
    fig = metric_curve(frame, measure_label="nDCG@k")
    assert len(fig.data) == 4
    assert [t.name for t in lines(fig)] == ["a", "b"]
    band_a = bands(fig)[0]
    assert band_a.name == "a 95% CI" and band_a.showlegend is False and band_a.legendgroup == "a"
    # closed polygon: upper from k=1 to 3, then lower back from 3 to 1
    np.testing.assert_array_equal(np.asarray(band_a.x), [1, 2, 3, 3, 2, 1])
    assert np.asarray(band_a.y) == pytest.approx([0.6, 0.7, 0.8, 0.6, 0.5, 0.4])
    assert band_a.fillcolor.startswith("rgba(")
    assert "customdata[0]:.4f" in lines(fig)[0].hovertemplate
    np.testing.assert_allclose(np.asarray(lines(fig)[0].customdata), [[0.4, 0.6], [0.5, 0.7], [0.6, 0.8]])
    # bands are drawn under the lines
    assert [t.fill for t in fig.data[:2]] == ["toself", "toself"]


def test_metric_curve_band_from_argument_for_some_systems():
    frame = tidy({"a": [0.5, 0.6], "b": [0.2, 0.3]})
    fig = metric_curve(frame, measure_label="nDCG@k", band={"b": (np.array([0.1, 0.2]), np.array([0.3, 0.4]))})
    assert [t.name for t in bands(fig)] == ["b 95% CI"]
    assert np.asarray(bands(fig)[0].y) == pytest.approx([0.3, 0.4, 0.2, 0.1])
    with pytest.raises(MetricsError):
        metric_curve(frame, measure_label="nDCG@k", band={"a": (np.array([0.1]), np.array([0.3]))})


def test_metric_curve_marks_order_changes():
    frame = tidy({"a": [0.9, 0.8, 0.5, 0.4], "b": [0.1, 0.2, 0.6, 0.7]})
    changes = order_changes(frame)
    fig = metric_curve(frame, measure_label="nDCG@k", order_changes=changes)
    assert [s.x0 for s in fig.layout.shapes] == [3] and fig.layout.shapes[0].line.dash == "dot"
    (note,) = fig.layout.annotations
    assert note.x == 3 and note.text == "k=3" and "b > a" in note.hovertext
    # on a log axis an annotation's x is log10(k) while the line stays in data units
    logged = metric_curve(frame, measure_label="nDCG@k", order_changes=[3], log_x=True)
    assert logged.layout.shapes[0].x0 == 3
    assert logged.layout.annotations[0].x == pytest.approx(np.log10(3))


def test_metric_curve_keeps_crowded_order_change_labels_apart():
    frame = tidy({"a": [0.5] * 100})
    changes = [80, 81, 82, 83, 84, 85, 20]
    fig = metric_curve(frame, measure_label="nDCG@k", order_changes=changes)
    assert sorted(s.x0 for s in fig.layout.shapes) == sorted(changes)  # every change keeps its line
    labelled = [(a.x, a.yshift) for a in fig.layout.annotations]
    assert labelled == [(20, 0), (80, 0), (81, -14), (82, -28)]  # three rows, then no room near k=80


def test_metric_curve_hover_keeps_user_text_inert():
    fig = metric_curve(tidy({"<b>run</b> %{y}": [0.1]}), measure_label="nDCG@k")
    assert fig.data[0].name == "&lt;b&gt;run&lt;/b&gt; %\u200b{y}"   # plotly renders <b>, <a href> in a legend
    assert "&lt;b&gt;run" in fig.data[0].hovertemplate and "run&lt;/b&gt; %{y}" not in fig.data[0].hovertemplate


def test_metric_curve_needs_the_tidy_columns():
    with pytest.raises(MetricsError):
        metric_curve(pd.DataFrame({"system": ["a"], "value": [0.1]}), measure_label="nDCG@k")


# ---------------------------------------------------------------- leaderboard

def test_leaderboard_bars():
    table = pd.DataFrame({"nDCG@10": [0.4, 0.6], "AP": [0.3, 0.2]}, index=pd.Index(["bm25", "dense"], name="system"))
    fig = leaderboard_bars(table, "nDCG@10")
    (bar,) = fig.data
    assert list(bar.x) == ["bm25", "dense"] and np.asarray(bar.y) == pytest.approx([0.4, 0.6])
    assert list(bar.marker.color) == [PALETTE[0], PALETTE[1]]
    assert fig.layout.yaxis.title.text == "nDCG@10"
    best_first = leaderboard_bars(table, "nDCG@10", sort=True).data[0]
    assert list(best_first.x) == ["dense", "bm25"] and list(best_first.marker.color) == [PALETTE[1], PALETTE[0]]
    with pytest.raises(MetricsError, match="RR"):
        leaderboard_bars(table, "RR")


# ---------------------------------------------------------------- with the library

def test_metric_curve_of_library_curves():
    evaluate = pytest.importorskip("metrics.evaluation", exc_type=ImportError)
    qrels = pd.DataFrame({"qid": ["q1", "q1", "q2"], "docno": ["d1", "d2", "d5"], "label": [2, 1, 1]})
    run_a = pd.DataFrame({"qid": ["q1", "q1", "q1", "q2", "q2", "q2"],
                          "docno": ["d1", "d3", "d2", "d4", "d5", "d6"], "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    curves = {"a": evaluate.curve(qrels, run_a, "nDCG", max_k=3)}
    frame = mean_curves(curves)
    # linear gain; the ideal is cut at k too: IDCG@1 = 2, IDCG@2 = IDCG@3 = 2 + 1/log2(3) for q1
    q1 = [2 / 2, 2 / (2 + 1 / log2(3)), (2 + 1 / log2(4)) / (2 + 1 / log2(3))]
    q2 = [0.0, (1 / log2(3)) / 1, (1 / log2(3)) / 1]  # d5 (rel 1) at rank 2; IDCG = 1
    expected = [(x + y) / 2 for x, y in zip(q1, q2)]
    assert frame["value"].to_numpy() == pytest.approx(expected)
    fig = metric_curve(frame, measure_label="nDCG@k")
    assert np.asarray(fig.data[0].y) == pytest.approx(expected)
