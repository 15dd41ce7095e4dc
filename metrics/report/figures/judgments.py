"""Plotly figures of the Judgments page: pure functions of metrics.judgments frames, no Streamlit.

Same look and colours as :mod:`metrics.figures` (``LAYOUT``, ``system_colors``);
pages pass ``config=FIGURE_CONFIG`` to ``st.plotly_chart``.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from ...errors import MetricsError
from .curves import PALETTE, metric_curve, new_figure, plain, system_colors


def _need(frame: pd.DataFrame, columns, what: str, fix: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MetricsError(f"{what}: frame lacks column(s) {', '.join(missing)}", fix=fix)


def judged_curve(curves, *, colors: Mapping[str, str] | None = None, log_x: bool = False) -> go.Figure:
    """Judged@k for k = 1..K, one line per system (``metrics.figures.metric_curve`` on the Judged family).

    ``curves`` is ``{system: per-query Judged curve}`` or a tidy mean frame. The
    y-axis spans 0..1: the share of the top k that the qrels judge.
    """
    fig = metric_curve(curves, measure_label="Judged@k", colors=colors, log_x=log_x)
    fig.update_yaxes(range=[0, 1.02])
    return fig


def strategy_ranks(table: pd.DataFrame, *, labels: Mapping[str, str] | None = None,
                   colors: Mapping[str, str] | None = None, measure: str = "") -> go.Figure:
    """Rank of every system under each strategy: one line per system across the strategies (a bump chart).

    ``table`` is ``metrics.judgments.strategy_table``'s frame (``system,
    strategy, value, rank``). Rank 1 is at the top; crossing lines are rank
    changes. ``labels`` maps strategy keys to axis labels; the hover shows the
    value of ``measure``.
    """
    _need(table, ("system", "strategy", "value", "rank"), "strategy_ranks",
          "pass the frame of metrics.judgments.strategy_table")
    strategies = list(dict.fromkeys(str(s) for s in table["strategy"]))
    systems = list(dict.fromkeys(str(s) for s in table["system"]))
    labels = labels or {}
    palette = colors if colors is not None else system_colors(systems)
    n = max(len(systems), 1)
    fig = new_figure(xaxis_title="treatment of unjudged documents", yaxis_title=f"rank by {measure}".strip(),
                  hovermode="closest", showlegend=True)
    fig.update_yaxes(autorange="reversed", tickmode="array", tickvals=list(range(1, n + 1)), range=[n + 0.5, 0.5])
    for system in systems:
        part = table[table["system"].astype(str) == system].set_index("strategy")
        part.index = part.index.astype(str)
        part = part.reindex(strategies)
        ranks = part["rank"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        values = part["value"].to_numpy(dtype=float)
        x = [labels.get(s, s) for s in strategies]
        fig.add_trace(go.Scatter(
            x=x, y=ranks, name=plain(system), mode="lines+markers", line={"color": palette.get(system, PALETTE[0]),
                                                                   "width": 2},
            marker={"size": 10}, customdata=values,
            hovertemplate=f"<b>{plain(system)}</b><br>%{{x}}<br>rank %{{y}}<br>{plain(measure)} = "
                          "%{customdata:.4f}<extra></extra>",
        ))
        # value labels as annotations: drawn above every line, on an opaque box, so that no line
        # crossing to its next rank runs through a number
        for label, rank_, value in zip(x, ranks, values):
            if np.isfinite(rank_) and np.isfinite(value):
                fig.add_annotation(x=label, y=rank_, text=f"{value:.4f}", showarrow=False, yshift=15,
                                   font={"size": 10, "color": palette.get(system, PALETTE[0])},
                                   bgcolor="rgba(255, 255, 255, 0.92)", borderpad=1)
    return fig


def first_unjudged_box(frame: pd.DataFrame, *, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Distribution over queries of the first unjudged rank, one box per system.

    ``frame`` is ``metrics.judgments.first_unjudged``'s (``qid, system,
    first_unjudged``); queries judged throughout (<NA>) are left out and
    counted in the trace name. Low boxes mean a shallow pool for that system.
    """
    _need(frame, ("qid", "system", "first_unjudged"), "first_unjudged_box",
          "pass the frame of metrics.judgments.first_unjudged")
    systems = list(dict.fromkeys(str(s) for s in frame["system"]))
    palette = colors if colors is not None else system_colors(systems)
    fig = new_figure(xaxis_title="system", yaxis_title="rank of the first unjudged document", showlegend=False)
    for system in systems:
        part = frame[frame["system"].astype(str) == system]
        values = part["first_unjudged"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        keep = np.isfinite(values)
        fig.add_trace(go.Box(
            y=values[keep], name=plain(system), marker_color=palette.get(system, PALETTE[0]), boxpoints="all",
            jitter=0.4, pointpos=0, text=part["qid"].astype(str).to_numpy()[keep],
            hovertemplate=f"<b>{plain(system)}</b><br>query %{{text}}<br>first unjudged at rank %{{y}}<extra></extra>",
        ))
    return fig


def overlap_heatmap(matrix: pd.DataFrame, *, k: int | None = None) -> go.Figure:
    """Mean Jaccard overlap of the systems' top-k lists (``metrics.judgments.topk_jaccard``'s matrix).

    Low overlap with a pool built from few systems means many documents of the
    others were never judged.
    """
    names = [str(s) for s in matrix.index]
    values = matrix.to_numpy(dtype=float)
    title = f"Jaccard@{k}" if k else "Jaccard"
    fig = new_figure(xaxis_title="", yaxis_title="", height=max(260, 70 * len(names) + 120))
    fig.add_trace(go.Heatmap(
        z=values, x=names, y=names, zmin=0, zmax=1, colorscale="Blues", colorbar={"title": title},
        text=[[f"{v:.2f}" if np.isfinite(v) else "" for v in row] for row in values], texttemplate="%{text}",
        hovertemplate=f"%{{y}} vs %{{x}}<br>mean {title} = %{{z:.3f}}<extra></extra>",
    ))
    fig.update_yaxes(autorange="reversed")
    return fig
