"""Plotly figures of "Where it differs": the re-ranking headroom, the depth sweep, the DCG difference
by rank band and grade, and recall curves (pure functions of the frames of
:mod:`metrics.analysis.headroom` and :mod:`metrics.analysis.bands`; no Streamlit).

Grades keep the colours of :data:`metrics.report.figures.explain.GRADE_COLORS`, systems those of
:func:`metrics.report.figures.curves.system_colors`; every user-given name is made inert text.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...errors import MetricsError
from . import palette
from .curves import PALETTE, new_figure, plain
from .explain import GRADE_COLORS

__all__ = ["headroom_bars", "sweep_curve", "band_bars", "recall_curves", "FIRST_COLOR", "ORACLE_COLOR",
           "RERANKED_COLOR"]

FIRST_COLOR = palette.GREY
ORACLE_COLOR = palette.BLUISH_GREEN
RERANKED_COLOR = palette.BLUE


def _require(frame: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MetricsError(f"{what}: frame lacks column(s) {', '.join(missing)}",
                           fix="pass a frame of metrics.analysis.headroom or metrics.analysis.bands")


def headroom_bars(per_query: pd.DataFrame, *, measure: str, first: str, reranked: str, most: int = 200) -> go.Figure:
    """Per query, by headroom descending (the ``most`` queries with the most headroom): a bar from
    the first stage's value to the oracle's (the headroom) and a marker at the re-ranked value.
    Traces: ``headroom``, then the re-ranked run."""
    _require(per_query, ("qid", "first", "oracle", "reranked", "headroom", "share"), "headroom_bars")
    rows = per_query.sort_values("headroom", ascending=False, kind="stable")
    shown = rows.iloc[:most]
    title = f"the {len(shown)} of {len(rows)} queries with the most headroom" if len(rows) > len(shown) else None
    rows = shown
    qids = rows["qid"].astype(str).map(plain).tolist()
    share = ["n/a (no headroom)" if not np.isfinite(v) else f"{100 * v:.1f}%" for v in rows["share"]]
    fig = new_figure(title=title, xaxis={"title": "query (most headroom first)", "type": "category"},
                  yaxis_title=plain(measure), barmode="overlay", hovermode="closest")
    fig.add_trace(go.Bar(x=qids, y=rows["oracle"] - rows["first"], base=rows["first"], name="headroom",
                         marker={"color": ORACLE_COLOR, "opacity": 0.35},
                         customdata=np.column_stack([rows["first"], rows["oracle"]]),
                         hovertemplate="query %{x}<br>first stage %{customdata[0]:.4f}<br>oracle "
                                       "%{customdata[1]:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(x=qids, y=rows["reranked"], mode="markers", name=plain(reranked),
                             marker={"color": RERANKED_COLOR, "size": 8, "symbol": "diamond"},
                             customdata=share, hovertemplate=f"query %{{x}}<br>{plain(reranked)} %{{y:.4f}}"
                                                             "<br>share of the headroom %{customdata}<extra></extra>"))
    return fig


def sweep_curve(sweep: pd.DataFrame, summary: Mapping, *, measure: str, alpha: float = 0.05) -> go.Figure:
    """The measure against the re-ranking depth d, with the first stage, the oracle and the full
    re-ranking as reference lines. A filled marker: significantly different from the first stage
    (adjusted p < ``alpha``). Traces: ``re-rank top d``; shapes: the three reference lines."""
    _require(sweep, ("depth", "mean", "diff", "p_value", "p_adjusted", "p_previous"), "sweep_curve")
    depth = sweep["depth"].to_numpy()
    significant = sweep["p_adjusted"].to_numpy() < alpha
    fig = new_figure(xaxis={"title": "re-ranking depth d (the first stage's top d re-ranked)", "type": "log",
                         "tickvals": depth.tolist()},
                  yaxis_title=plain(measure), showlegend=False)
    fig.add_trace(go.Scatter(
        x=depth, y=sweep["mean"], mode="lines+markers", name="re-rank top d",
        line={"color": RERANKED_COLOR},
        marker={"size": 11, "color": np.where(significant, RERANKED_COLOR, "white").tolist(),
                "line": {"color": RERANKED_COLOR, "width": 2}},
        customdata=np.column_stack([sweep["diff"], sweep["p_adjusted"], sweep["p_previous"]]),
        hovertemplate="top %{x} re-ranked: %{y:.4f}<br>vs first stage %{customdata[0]:+.4f}, p adj "
                      "%{customdata[1]:.3g}<br>vs the depth before: p %{customdata[2]:.3g}<extra></extra>"))
    for key, label, colour in (("first", "first stage", FIRST_COLOR), ("oracle", "oracle of the top k", ORACLE_COLOR),
                               ("reranked", "re-ranked run", RERANKED_COLOR)):
        value = float(summary[key])
        fig.add_hline(y=value, line={"color": colour, "dash": "dash", "width": 1},
                      annotation_text=f"{label} {value:.4f}", annotation_position="top left")
    return fig


def band_bars(parts: pd.DataFrame, labels, *, n_queries: int, measure: str, a: str, b: str) -> go.Figure:
    """Mean DCG@k(B) - DCG@k(A) over ``n_queries`` per rank band, stacked by grade (a trace per grade,
    highest first), with each band's total as a marker (trace ``band total``). ``parts`` is
    :attr:`Bands.parts`."""
    _require(parts, ("band", "grade", "diff"), "band_bars")
    if n_queries < 1:
        raise MetricsError("band_bars needs at least one query", fix="compare runs that share queries")
    labels = [str(x) for x in labels]
    mean = parts.groupby(["band", "grade"], sort=False)["diff"].sum() / n_queries
    fig = new_figure(barmode="relative", xaxis={"title": "rank band", "type": "category",
                                                          "categoryorder": "array", "categoryarray": labels},
                  yaxis_title=f"{plain(measure)}: {plain(b)} − {plain(a)}")
    for grade in sorted(parts["grade"].unique().tolist(), reverse=True):
        values = [float(mean.get((label, grade), 0.0)) for label in labels]
        fig.add_trace(go.Bar(x=labels, y=values, name=f"grade {grade}",
                             marker_color=GRADE_COLORS[int(min(max(grade, 0), 4))],
                             marker_line={"color": "#555555", "width": 0.5},
                             hovertemplate=f"band %{{x}}, grade {grade}: %{{y:+.4f}}<extra></extra>"))
    totals = parts.groupby("band", sort=False)["diff"].sum() / n_queries
    fig.add_trace(go.Scatter(x=labels, y=[float(totals.get(label, 0.0)) for label in labels], mode="markers",
                             name="band total", marker={"symbol": "diamond", "size": 11, "color": "#222222"},
                             hovertemplate="band %{x}: %{y:+.4f}<extra></extra>"))
    fig.add_hline(y=0, line={"color": palette.GREY, "width": 1})
    return fig


def recall_curves(recall: pd.DataFrame, *, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Mean recall@k over k for each system (``recall``: columns ``system, k, value``)."""
    _require(recall, ("system", "k", "value"), "recall_curves")
    fig = new_figure(xaxis_title="k", yaxis={"title": "mean R@k", "range": [0, 1.02]}, hovermode="x unified")
    for i, (system, rows) in enumerate(recall.groupby("system", sort=False)):
        colour = (colors or {}).get(system, PALETTE[i % len(PALETTE)])
        fig.add_trace(go.Scatter(x=rows["k"], y=rows["value"], mode="lines", name=plain(system),
                                 line={"color": colour, "width": 2},
                                 hovertemplate="%{y:.4f}<extra>" + plain(system) + "</extra>"))
    return fig
