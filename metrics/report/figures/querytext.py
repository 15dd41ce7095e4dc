"""Plotly figures of the query-text analysis: score against query length with trend lines, and
mean score by length bucket (pure functions of the frames of metrics.analysis.querytext)."""
from __future__ import annotations

import html
from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from .curves import new_figure


def length_scatter(points: pd.DataFrame, trend: pd.DataFrame, *, measure: str,
                   colors: Mapping[str, str] | None = None) -> go.Figure:
    """Per-query ``value`` against ``length`` (:func:`length_vs_score`), one colour per system, and each
    system's least-squares line (:func:`length_trend`) over the lengths seen; the qid is ``customdata[0]``."""
    colors = colors or {}
    fig = new_figure(xaxis_title="query length (terms)", yaxis_title=html.escape(measure))
    lines = trend.set_index("system")
    for system, rows in points.groupby("system", sort=False, observed=True):
        color = colors.get(str(system))
        fig.add_trace(go.Scatter(
            x=rows["length"], y=rows["value"], mode="markers", name=html.escape(str(system)),
            marker={"color": color, "opacity": 0.7}, customdata=np.column_stack([rows["qid"], rows["text"]]),
            hovertemplate="%{customdata[0]}: %{customdata[1]}<br>length %{x}, value %{y:.4f}<extra></extra>"))
        if str(system) in lines.index and np.isfinite(lines.loc[str(system), "slope"]):
            line = lines.loc[str(system)]
            xs = np.array([rows["length"].min(), rows["length"].max()], dtype=float)
            fig.add_trace(go.Scatter(
                x=xs, y=line["intercept"] + line["slope"] * xs, mode="lines", line={"color": color, "dash": "dash"},
                name=f"{html.escape(str(system))} trend (slope {line['slope']:+.3f}, r {line['r']:+.2f})"))
    return fig


def bucket_bars(buckets: pd.DataFrame, *, measure: str, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Mean ``measure`` per length bucket (:func:`by_length_bucket`), grouped bars per system, the
    number of queries in each bucket on hover."""
    colors = colors or {}
    fig = new_figure(barmode="group", xaxis_title="query length (terms)", yaxis_title=f"mean {html.escape(measure)}")
    for system, rows in buckets.groupby("system", sort=False, observed=True):
        fig.add_trace(go.Bar(x=rows["bucket"].astype(str), y=rows["mean"], name=html.escape(str(system)),
                             marker_color=colors.get(str(system)), customdata=rows["n_queries"],
                             hovertemplate="%{x} terms: %{y:.4f} over %{customdata} queries<extra></extra>"))
    return fig
