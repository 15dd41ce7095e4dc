"""Plotly figure of a fusion sweep: the measure against the swept parameter (pure function of a frame)."""
from __future__ import annotations

import html

import pandas as pd
import plotly.graph_objects as go

from ...errors import MetricsError
from . import palette
from .curves import LAYOUT

TUNED = palette.HIGHLIGHT


def sweep_curve(curve: pd.DataFrame, *, measure: str, parameter: str, title: str | None = None) -> go.Figure:
    """Mean ``measure`` at every setting of a sweep, the best setting marked.

    ``curve``: columns ``setting`` and ``value``, plus ``k`` (an RRF sweep, drawn on a numeric
    axis) or ``w:<run>`` columns (a weight sweep: with two runs the first run's weight is the
    axis, with more the setting labels are). The best setting is the first of the highest means.
    """
    if not {"setting", "value"} <= set(curve.columns) or curve.empty:
        raise MetricsError("a sweep curve needs rows with columns setting and value",
                           fix="give the frame of ndcg_lab.ui.fusion.sweep or metrics.analysis.fusion_tuning.sweep")
    weights = [c for c in curve.columns if str(c).startswith("w:")]
    if parameter == "k" and "k" in curve.columns:
        x, axis = curve["k"].astype(float), "RRF k"
    elif len(weights) == 2:
        x, axis = curve[weights[0]].astype(float), f"weight of {weights[0][2:]} (the other: 1 − it)"
    else:
        x, axis = curve["setting"].astype(str), "weights (" + ", ".join(w[2:] for w in weights) + ")"
    y = curve["value"].astype(float)
    best = int(y.to_numpy().argmax())
    fig = go.Figure()
    fig.update_layout(**LAYOUT)
    fig.update_layout(title=html.escape(title or f"{measure} against {parameter}"), xaxis_title=axis,
                      yaxis_title=html.escape(measure), showlegend=False)
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines+markers", name=measure,
                             customdata=curve["setting"].astype(str),
                             hovertemplate="%{customdata}: %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=[x.iloc[best]], y=[y.iloc[best]], mode="markers", name="best",
                             marker={"size": 12, "color": TUNED, "symbol": "star"},
                             hovertemplate=f"best: {html.escape(str(curve['setting'].iloc[best]))}, "
                                           "%{y:.4f}<extra></extra>"))
    return fig
