"""Plotly figures of measure behaviour: pure functions of the frames of :mod:`metrics.stats.behaviour`.

Every figure starts from :data:`metrics.report.figures.curves.LAYOUT`; system and measure names
are user text, so they are HTML-escaped wherever plotly renders them (legends, ticks, hover text).
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from . import palette
from .curves import PALETTE, band_trace, new_figure
from .curves import plain as _esc
from .density import DENSITY_BINS, add_density, unit_range

SWAP = palette.HIGHLIGHT
MAX_POINTS = 5000
"""Beyond this many (system, query) points the per-query scatter draws their density
(:mod:`.density`): 100 systems of 50 topics stay points, two MS MARCO dev runs (13,960) become cells,
which the browser draws in a fraction of the seconds that as many SVG marks take."""


def tau_heatmap(matrix: pd.DataFrame, *, title: str = "Kendall's τ-b") -> go.Figure:
    """A measures x measures correlation matrix as a heatmap on [-1, 1], the value in each cell."""
    labels = [_esc(c) for c in matrix.columns]
    z = matrix.to_numpy(dtype=np.float64)
    fig = new_figure(title=title, height=120 + 48 * len(labels), xaxis={"side": "bottom"},
               yaxis={"autorange": "reversed"})
    fig.add_trace(go.Heatmap(z=z, x=labels, y=labels, zmin=-1, zmax=1, colorscale="RdBu",
                             text=[[f"{v:.3f}" for v in row] for row in z], texttemplate="%{text}",
                             hovertemplate="%{y} vs %{x}: %{text}<extra></extra>"))
    return fig


def means_scatter(table: pd.DataFrame, a: str, b: str, swaps: pd.DataFrame, *,
                  colors: Mapping[str, str] | None = None) -> go.Figure:
    """System means under measure ``a`` (x) against ``b`` (y); each pair the two measures order
    differently (:func:`metrics.stats.behaviour.swapped_pairs`) joined by a red dashed line."""
    fig = new_figure(xaxis_title=_esc(a), yaxis_title=_esc(b), showlegend=True)
    for system_x, system_y in zip(swaps["system_x"], swaps["system_y"]):
        fig.add_trace(go.Scatter(x=[table.loc[system_x, a], table.loc[system_y, a]],
                                 y=[table.loc[system_x, b], table.loc[system_y, b]], mode="lines",
                                 line={"color": SWAP, "dash": "dash", "width": 1.5}, hoverinfo="skip",
                                 showlegend=False))
    swapped = set(swaps["system_x"]) | set(swaps["system_y"])
    colors = colors or {}
    for i, system in enumerate(table.index):
        fig.add_trace(go.Scatter(
            x=[table.loc[system, a]], y=[table.loc[system, b]], mode="markers+text", name=_esc(system),
            text=[_esc(system)], textposition="top center",
            marker={"size": 13 if system in swapped else 10, "color": colors.get(system, PALETTE[i % len(PALETTE)]),
                    "line": {"color": SWAP if system in swapped else "white", "width": 2}},
            hovertext=[f"{_esc(system)}: {table.loc[system, a]:.4f} / {table.loc[system, b]:.4f}"],
            hoverinfo="text"))
    return fig


def query_scatter(frame: pd.DataFrame, a: str, b: str, *, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Per-query scores under measure ``a`` (x) against ``b`` (y), one colour per system.

    Beyond :data:`MAX_POINTS` points, the density of every (system, query) pair pooled, its title
    saying how many pairs of how many systems it counts.
    """
    wide = frame[frame["measure"].isin([a, b])].pivot_table(index=["system", "qid"], columns="measure",
                                                            values="value", aggfunc="first", observed=True)
    fig = new_figure(xaxis_title=_esc(a), yaxis_title=_esc(b))
    if len(wide) > MAX_POINTS:
        x, y = (wide[m].to_numpy(dtype=np.float64) for m in (a, b))
        shown = np.isfinite(x) & np.isfinite(y)
        x, y = x[shown], y[shown]
        systems = wide.index.get_level_values(0)[shown].nunique()
        add_density(fig, x, y, np.linspace(*unit_range(x), DENSITY_BINS + 1),
                    np.linspace(*unit_range(y), DENSITY_BINS + 1), x_name=_esc(a), y_name=_esc(b),
                    unit="pairs")
        fig.update_layout(title=f"{len(x):,} (system, query) pairs of {systems:,} systems, drawn as their density")
        return fig
    colors = colors or {}
    for i, system in enumerate(dict.fromkeys(frame["system"])):
        if system not in wide.index.get_level_values(0):
            continue
        part = wide.xs(system, level="system")
        fig.add_trace(go.Scatter(x=part[a], y=part[b], mode="markers", name=_esc(system), opacity=0.7,
                                 marker={"color": colors.get(system, PALETTE[i % len(PALETTE)])},
                                 hovertext=[f"{_esc(system)} · query {_esc(q)}" for q in part.index],
                                 hoverinfo="text+x+y"))
    return fig


def asl_curves(curves: Mapping[str, pd.DataFrame], *, alpha: float = 0.05, test: str = "paired bootstrap") -> go.Figure:
    """Sakai's ASL curves: for each measure, the pairs of systems sorted by ASL (rank, asl)."""
    fig = new_figure(xaxis_title="system pairs, sorted by ASL", yaxis_title=f"ASL ({_esc(test)})")
    for i, (measure, curve) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=curve["rank"], y=curve["asl"], mode="lines+markers", name=_esc(measure),
                                 line={"color": PALETTE[i % len(PALETTE)], "shape": "hv"}))
    fig.add_hline(y=alpha, line={"dash": "dot", "color": "#555"}, annotation_text=f"α = {alpha:g}")
    return fig


def swap_curves(summaries: Mapping[str, pd.DataFrame], *, column: str = "swap_rate") -> go.Figure:
    """Swap rate against topic-set size, one line per measure (:func:`metrics.stats.behaviour.swap_summary`)."""
    fig = new_figure(xaxis_title="topics per set", yaxis_title="swap rate")
    for i, (measure, summary) in enumerate(summaries.items()):
        fig.add_trace(go.Scatter(x=summary["topics"], y=summary[column], mode="lines+markers", name=_esc(measure),
                                 line={"color": PALETTE[i % len(PALETTE)]}))
    return fig


def reduction_curves(tau: pd.DataFrame, *, column: str = "tau") -> go.Figure:
    """Kendall's tau (or tau_ap) with the full qrels' order against the reduction level, one line per measure:
    the mean over the seeded draws, with a shaded band from the lowest to the highest draw where the
    frame has one (``<column>_low``, ``<column>_high``)."""
    kind = tau["reduction"].iloc[0] if len(tau) else "keep"
    fig = new_figure(xaxis_title="% of judgments kept per query" if kind == "keep" else "pool depth",
               yaxis_title="τ-b with the full qrels" if column == "tau" else "τ_AP with the full qrels",
               yaxis_range=[-1.05, 1.05])
    for i, (measure, part) in enumerate(tau.groupby("measure", sort=False)):
        colour = PALETTE[i % len(PALETTE)]
        if f"{column}_low" in part.columns:
            fig.add_trace(band_trace(_esc(measure), part["level"].to_numpy(dtype=np.float64),
                                      part[f"{column}_low"].to_numpy(dtype=np.float64),
                                      part[f"{column}_high"].to_numpy(dtype=np.float64), colour, "draws"))
        fig.add_trace(go.Scatter(x=part["level"], y=part[column], mode="lines+markers", name=_esc(measure),
                                 legendgroup=_esc(measure), line={"color": colour}))
    return fig


def confusion_heatmap(matrix: pd.DataFrame, *, a: str = "A", b: str = "B") -> go.Figure:
    """Counts of (grade under A, grade under B) on the pairs both judge."""
    fig = new_figure(xaxis_title=f"grade under {_esc(b)}", yaxis_title=f"grade under {_esc(a)}", height=360,
               yaxis={"autorange": "reversed", "type": "category"}, xaxis={"type": "category"})
    z = matrix.to_numpy()
    fig.add_trace(go.Heatmap(z=z, x=[str(c) for c in matrix.columns], y=[str(i) for i in matrix.index],
                             colorscale="Blues", text=z, texttemplate="%{text}",
                             hovertemplate="A %{y}, B %{x}: %{z}<extra></extra>"))
    return fig
