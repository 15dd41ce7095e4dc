"""Plotly figures of a paired comparison (a system against a baseline): pure functions of frames.

Inputs:

- a *per-query frame* (:func:`metrics.stats.per_query`): columns ``qid,
  baseline, system, delta`` (delta = system - baseline), optionally ``text``
  (the topic, shown on hover);
- a *difference profile* (:func:`metrics.stats.difference_profile`): columns
  ``k, diff, ci_low, ci_high``.

Figures share :data:`metrics.figures.LAYOUT`; every bar and point carries its
qid as ``customdata[0]``, so a page can open the clicked query.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...errors import MetricsError
from ..text import shorten
from . import palette
from .curves import new_figure, plain, rgba
from .density import DENSITY_BINS, add_density, unit_range

BETTER = palette.BETTER
WORSE = palette.WORSE
TIE = palette.TIE
# Beyond this many queries the bar chart drops its qid tick labels (hover still names each query).
MAX_TICK_LABELS = 60
MAX_MARKS = 1000
"""Beyond this many queries the per-query charts stop drawing one SVG mark per query: the
differences become a filled step line (one path per sign, hover still names each query) and the
paired scatter a density of DENSITY_BINS x DENSITY_BINS cells (:mod:`.density`). A browser takes seconds to draw
7,000 bars and 7,000 points (MS MARCO dev), and no one can click one bar of 0.1 pixel anyway."""


def _require(frame: pd.DataFrame, columns, what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MetricsError(f"{what}: frame lacks column(s) {', '.join(missing)}",
                           fix="pass metrics.stats.per_query(...) (qid, baseline, system, delta)")


def sign_colors(delta, tolerance: float = 1e-9) -> list[str]:
    """Green where the system is better, red where worse, grey for ties (|delta| <= tolerance)."""
    delta = np.asarray(delta, dtype=np.float64)
    return np.where(delta > tolerance, BETTER, np.where(delta < -tolerance, WORSE, TIE)).tolist()


def _customdata(rows: pd.DataFrame) -> np.ndarray:
    text = rows["text"].fillna("").astype(str).map(shorten) if "text" in rows else pd.Series("", index=rows.index)
    return np.column_stack([rows["qid"].astype(str).to_numpy(), rows["baseline"].to_numpy(dtype=float),
                            rows["system"].to_numpy(dtype=float), text.map(plain).to_numpy()]).astype(object)


def delta_bars(per_query: pd.DataFrame, *, measure: str, baseline: str, system: str,
               tolerance: float = 1e-9) -> go.Figure:
    """Per-query difference (system - baseline), one bar per query, sorted from most helped to most hurt.

    Bars are coloured by sign (:func:`sign_colors`); the x-axis is the qid as a
    category, so a click reports the qid as ``x`` (and as ``customdata[0]``).

    Beyond :data:`MAX_MARKS` queries the bars become a filled step line per sign (traces
    ``helped``, ``tied``, ``hurt``; the x-axis the same qids), which a click cannot select.
    """
    _require(per_query, ("qid", "baseline", "system", "delta"), "delta_bars")
    rows = per_query.sort_values(["delta", "qid"], ascending=[False, True], kind="stable")
    qids = rows["qid"].astype(str).tolist()
    many = len(qids) > MAX_MARKS
    fig = new_figure(xaxis_title=f"query (sorted by difference; {len(qids)} queries)",
                  yaxis_title=f"Δ {measure} ({system} − {baseline})", showlegend=False, bargap=0.15,
                  hovermode="x" if many else "closest", clickmode="event+select")
    fig.update_xaxes(type="category", categoryorder="array", categoryarray=qids,
                     showticklabels=len(qids) <= MAX_TICK_LABELS)
    hover = (f"query %{{customdata[0]}}<br>Δ = %{{y:+.4f}}<br>{plain(baseline)}: %{{customdata[1]:.4f}}"
             f"<br>{plain(system)}: %{{customdata[2]:.4f}}<br>%{{customdata[3]}}<extra></extra>")
    delta, custom = rows["delta"].to_numpy(dtype=float), _customdata(rows)
    if many:
        # sorted by delta, so each sign is one run of the rows
        for at, colour, name in ((delta > tolerance, BETTER, "helped"), (np.abs(delta) <= tolerance, TIE, "tied"),
                                 (delta < -tolerance, WORSE, "hurt")):
            if at.any():
                fig.add_trace(go.Scatter(x=np.asarray(qids, dtype=object)[at], y=delta[at], name=name, mode="lines",
                                         line={"color": colour, "width": 1, "shape": "hv"}, fill="tozeroy",
                                         fillcolor=colour, customdata=custom[at], hovertemplate=hover))
    else:
        fig.add_trace(go.Bar(x=qids, y=delta, name="Δ", marker_color=sign_colors(delta, tolerance),
                             customdata=custom, hovertemplate=hover))
    fig.add_hline(y=0, line={"color": "#555", "width": 1})
    return fig


def paired_scatter(per_query: pd.DataFrame, *, measure: str, baseline: str, system: str,
                   tolerance: float = 1e-9) -> go.Figure:
    """Baseline (x) against system (y) per query, with the diagonal y = x: points above it improved.

    Beyond :data:`MAX_MARKS` queries the points become their density (:func:`.density.add_density`), under the
    diagonal, and the title counts the queries above, below and on it.
    """
    _require(per_query, ("qid", "baseline", "system", "delta"), "paired_scatter")
    x = per_query["baseline"].to_numpy(dtype=float)
    y = per_query["system"].to_numpy(dtype=float)
    lo, hi = unit_range(np.concatenate([x, y]))
    fig = new_figure(xaxis_title=f"{baseline}: {measure}", yaxis_title=f"{system}: {measure}", showlegend=False,
                  hovermode="closest", clickmode="event+select")
    fig.update_xaxes(range=[lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo)])
    fig.update_yaxes(range=[lo - 0.02 * (hi - lo), hi + 0.02 * (hi - lo)], scaleanchor="x", scaleratio=1)
    many = len(x) > MAX_MARKS
    if many:
        edges = np.linspace(lo, hi, DENSITY_BINS + 1)
        add_density(fig, x, y, edges, edges, x_name=plain(baseline), y_name=plain(system))
    fig.add_trace(go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="y = x (no change)",
                             line={"color": "#888", "dash": "dash", "width": 1}, hoverinfo="skip"))
    if many:
        delta = per_query["delta"].to_numpy(dtype=float)
        fig.update_layout(title=f"{len(x)} queries: {int((delta > tolerance).sum())} above the diagonal, "
                                f"{int((delta < -tolerance).sum())} below it, "
                                f"{int((np.abs(delta) <= tolerance).sum())} on it")
        return fig
    hover = (f"query %{{customdata[0]}}<br>{plain(baseline)}: %{{x:.4f}}<br>{plain(system)}: %{{y:.4f}}"
             f"<br>%{{customdata[3]}}<extra></extra>")
    fig.add_trace(go.Scatter(x=x, y=y, mode="markers", name="queries",
                             marker={"color": sign_colors(per_query["delta"], tolerance), "size": 8,
                                     "line": {"width": 0.5, "color": "white"}},
                             customdata=_customdata(per_query), hovertemplate=hover))
    return fig


def delta_histogram(per_query: pd.DataFrame, *, measure: str, baseline: str, system: str,
                    bins: int | None = None) -> go.Figure:
    """Distribution of the per-query differences, with lines at 0 and at the mean difference."""
    _require(per_query, ("delta",), "delta_histogram")
    delta = per_query["delta"].to_numpy(dtype=float)
    n_bins = bins or int(np.clip(np.ceil(np.sqrt(max(len(delta), 1))) * 2, 10, 80))
    fig = new_figure(xaxis_title=f"Δ {measure} ({system} − {baseline})", yaxis_title="queries", showlegend=False,
                  bargap=0.05)
    fig.add_trace(go.Histogram(x=delta, nbinsx=n_bins, name="Δ", marker_color=rgba(palette.ACCENT, 0.75),
                               hovertemplate="Δ in %{x}<br>%{y} queries<extra></extra>"))
    fig.add_vline(x=0, line={"color": "#555", "width": 1})
    if len(delta):
        mean = float(delta.mean())
        fig.add_vline(x=mean, line={"color": BETTER if mean > 0 else WORSE, "dash": "dash", "width": 2},
                      annotation_text=f"mean Δ = {mean:+.4f}", annotation_position="top")
    return fig


def profile_figure(profile: pd.DataFrame, *, measure_label: str, baseline: str, system: str,
                   level: float = 0.95) -> go.Figure:
    """Mean difference at every cutoff k with its bootstrap CI band and the zero line.

    Points where the CI excludes 0 are drawn filled (green above, red below).
    """
    _require(profile, ("k", "diff", "ci_low", "ci_high"), "profile_figure")
    k = profile["k"].to_numpy(dtype=np.int64)
    diff, low, high = (profile[c].to_numpy(dtype=float) for c in ("diff", "ci_low", "ci_high"))
    label = f"{int(round(level * 100))}% CI"
    fig = new_figure(xaxis_title="k (cutoff)", yaxis_title=f"Δ {measure_label} ({system} − {baseline})",
                  hovermode="x unified")
    fig.add_trace(go.Scatter(x=np.concatenate([k, k[::-1]]), y=np.concatenate([high, low[::-1]]), fill="toself",
                             fillcolor=rgba(palette.ACCENT, 0.18), line={"width": 0}, name=label, hoverinfo="skip"))
    colors = np.where(low > 0, BETTER, np.where(high < 0, WORSE, palette.ACCENT)).tolist()
    fig.add_trace(go.Scatter(x=k, y=diff, mode="lines+markers", name="mean Δ",
                             line={"color": palette.ACCENT, "width": 2}, marker={"color": colors, "size": 6},
                             customdata=np.column_stack([low, high]),
                             hovertemplate=(f"k = %{{x}}<br>mean Δ = %{{y:+.4f}}<br>{label} "
                                            "[%{customdata[0]:+.4f}, %{customdata[1]:+.4f}]<extra></extra>")))
    fig.add_hline(y=0, line={"color": "#555", "width": 1})
    return fig


def figures_html(figures: dict[str, go.Figure], title: str) -> str:
    """One self-contained HTML page holding several figures under headings (plotly.js from the CDN)."""
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{plain(title)}</title></head><body>",
             f"<h1>{plain(title)}</h1>"]
    for i, (heading, fig) in enumerate(figures.items()):
        parts.append(f"<h2>{plain(heading)}</h2>")
        parts.append(fig.to_html(full_html=False, include_plotlyjs="cdn" if i == 0 else False))
    parts.append("</body></html>")
    return "\n".join(parts)
