"""Plotly figures for the arithmetic of one query and for the teaching sandbox (no Streamlit).

Inputs are the frames of :mod:`metrics.explain` and :mod:`metrics.sandbox`:
``explain`` frames (one row per rank), a :class:`~metrics.explain.RelevanceMatrix`,
and the sandbox's discount and gain tables. Colours of grades are fixed
(:data:`GRADE_COLORS`), so a grade looks the same in every figure and table;
unjudged documents have their own colour and marker.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ...analysis.explain import STATUS, RelevanceMatrix
from ...errors import MetricsError
from .curves import LAYOUT, PALETTE, TOOLBAR_MARGIN, new_figure, plain
from .palette import BETTER, HIGHLIGHT, WORSE

__all__ = ["GRADE_COLORS", "UNJUDGED_COLOR", "NOT_RETRIEVED_COLOR", "grade_color", "text_color", "ranked_lists",
           "contribution_waterfall", "contribution_pair", "cumulative_gain", "relevance_heatmap", "discount_curve",
           "gain_bars"]

GRADE_COLORS: dict[int, str] = {0: "#f2efe6", 1: "#c7e9b4", 2: "#7fcdbb", 3: "#2c7fb8", 4: "#253494"}
"""Colour per grade (grades above 4 take 4's, negative grades take 0's)."""
UNJUDGED_COLOR = "#e377c2"
NOT_RETRIEVED_COLOR = "#ffffff"
_LINE_COLOR = "rgba(120, 120, 120, 0.45)"


def grade_color(grade, status: str = "judged") -> str:
    """Colour of a grade chip: by grade, or :data:`UNJUDGED_COLOR` / white for unjudged / not retrieved."""
    if status == "not retrieved":
        return NOT_RETRIEVED_COLOR
    if status == "unjudged" or grade is None or pd.isna(grade):
        return UNJUDGED_COLOR
    return GRADE_COLORS[int(min(max(int(grade), 0), 4))]


def text_color(grade, status: str = "judged") -> str:
    """Readable text colour on :func:`grade_color`."""
    if status in ("unjudged", "not retrieved") or grade is None or pd.isna(grade):
        return "#222222"
    return "#ffffff" if int(grade) >= 3 else "#222222"



def _grade_text(grade, status) -> str:
    if status == "unjudged":
        return "?"
    if status == "not retrieved" or pd.isna(grade):
        return ""
    return str(int(grade))


def _status_text(grade, status) -> str:
    if status == "unjudged":
        return "unjudged"
    if status == "not retrieved":
        return "not retrieved"
    return ("inferred grade " if status == "inferred" else "grade ") + _grade_text(grade, status)


def _require(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MetricsError(f"{what}: frame lacks column(s) {', '.join(missing)}",
                           fix="pass a frame from metrics.explain.explain")


# ---------------------------------------------------------------- side-by-side lists

def ranked_lists(frames: Mapping[str, pd.DataFrame], *, colors: Mapping[str, str] | None = None) -> go.Figure:
    """Ranked lists side by side: a column per system, a marker per rank coloured by grade.

    ``frames`` maps system -> :func:`metrics.explain.explain` frame. Unjudged
    documents are "?" markers in :data:`UNJUDGED_COLOR`, proxy-labelled ones
    diamonds. Grey segments join the same document in neighbouring columns, so
    a document that moves is easy to follow. Traces: one "same document"
    line trace (name ``"same document"``), then one marker trace per system.
    """
    systems = [str(s) for s in frames]
    if not systems:
        raise MetricsError("no ranked lists to draw", fix="pick at least one system")
    depth = max((len(f) for f in frames.values()), default=1)
    # the system names head the columns (x axis on top): a top margin clear of the chart toolbars above them
    fig = new_figure(height=max(320, 34 * depth + 120), showlegend=False, hovermode="closest",
                     margin={"t": TOOLBAR_MARGIN + 30},
                     xaxis={"tickmode": "array", "tickvals": list(range(len(systems))), "ticktext": systems,
                            "range": [-0.5, len(systems) - 0.5], "side": "top", "showgrid": False,
                            "zeroline": False},
                     yaxis={"title": "rank", "autorange": "reversed", "dtick": 1, "zeroline": False})

    columns = []
    for x, system in enumerate(systems):
        frame = frames[system]
        _require(frame, ("rank", "docno", "grade", "status"), "ranked_lists")
        frame = frame[frame["status"] != "not retrieved"]
        columns.append(pd.DataFrame({"x": x, "rank": frame["rank"].to_numpy(),
                                     "docno": frame["docno"].astype(str).to_numpy()}))
    # segments between neighbouring columns, joined on docno: x0,y0 -> x1,y1, None-separated
    seg_x, seg_y = [], []
    for left, right in zip(columns[:-1], columns[1:]):
        pairs = left.merge(right, on="docno", suffixes=("_l", "_r"))
        if pairs.empty:
            continue
        n = len(pairs)
        xs = np.empty(3 * n, dtype=object)
        ys = np.empty(3 * n, dtype=object)
        xs[0::3], xs[1::3], xs[2::3] = pairs["x_l"].to_numpy(), pairs["x_r"].to_numpy(), None
        ys[0::3], ys[1::3], ys[2::3] = pairs["rank_l"].to_numpy(), pairs["rank_r"].to_numpy(), None
        seg_x.extend(xs.tolist())
        seg_y.extend(ys.tolist())
    fig.add_trace(go.Scatter(x=seg_x, y=seg_y, mode="lines", name="same document",
                             line={"color": _LINE_COLOR, "width": 1.5}, hoverinfo="skip"))

    palette = colors or {}
    for x, system in enumerate(systems):
        frame = frames[system]
        frame = frame[frame["status"] != "not retrieved"]
        status = frame["status"].astype(str).to_numpy()
        grade = frame["grade"].to_numpy(dtype=object)
        titles = frame["title"].fillna("").astype(str).to_numpy() if "title" in frame.columns else None
        if titles is None:
            titles = [""] * len(frame)
        hover = [f"<b>{plain(system)}</b> rank {r}<br>{plain(d)}" + (f"<br>{plain(t)}" if t else "")
                 + f"<br>{_status_text(g, s)}"
                 for r, d, g, s, t in zip(frame["rank"], frame["docno"].astype(str), grade, status, titles)]
        fig.add_trace(go.Scatter(
            x=np.full(len(frame), x), y=frame["rank"].to_numpy(), mode="markers+text", name=plain(system),
            text=[_grade_text(g, s) for g, s in zip(grade, status)], textposition="middle center",
            textfont={"color": [text_color(g, s) for g, s in zip(grade, status)], "size": 11},
            marker={"size": 24, "color": [grade_color(g, s) for g, s in zip(grade, status)],
                    "symbol": ["diamond" if s == "inferred" else "circle" for s in status],
                    "line": {"color": palette.get(system, PALETTE[x % len(PALETTE)]), "width": 2}},
            hovertext=hover, hoverinfo="text",
        ))
    return fig


# ---------------------------------------------------------------- per-rank arithmetic

def contribution_waterfall(frame: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Waterfall of contributions gain / log2(rank + 1) per rank, ending in the total DCG@depth.

    ``frame`` is a :func:`metrics.explain.explain` frame; the last bar is its
    final ``dcg`` (a total, not recomputed here).
    """
    _require(frame, ("rank", "gain", "contribution", "dcg"), "contribution_waterfall")
    depth = len(frame)
    ranks = frame["rank"].to_numpy()
    gains = frame["gain"].to_numpy(dtype=np.float64)
    contributions = frame["contribution"].to_numpy(dtype=np.float64)
    total = float(frame["dcg"].iloc[-1]) if depth else 0.0
    labels = [str(r) for r in ranks] + [f"DCG@{depth}"]
    hover = [f"rank {r}: gain {g:g} / log2({r}+1) = {c:.4f}" for r, g, c in zip(ranks, gains, contributions)]
    fig = new_figure(title=title, yaxis_title="DCG", xaxis_title="rank", showlegend=False,
                  xaxis={"type": "category"})
    fig.add_trace(go.Waterfall(
        x=labels, y=np.append(contributions, total), measure=["relative"] * depth + ["total"],
        text=[f"{c:.3f}" for c in contributions] + [f"{total:.4f}"], textposition="outside",
        hovertext=hover + [f"DCG@{depth} = {total:.4f}"], hoverinfo="text",
        increasing={"marker": {"color": GRADE_COLORS[3]}}, totals={"marker": {"color": "#555555"}},
        connector={"line": {"color": _LINE_COLOR}},
    ))
    return fig


def contribution_pair(frame_a: pd.DataFrame, frame_b: pd.DataFrame, names: tuple[str, str], *,
                      colors: Mapping[str, str] | None = None) -> go.Figure:
    """Two runs on one query, rank by rank: their contributions gain / log2(rank + 1) side by side
    (top), and the difference B - A as a waterfall ending in DCG@depth(B) - DCG@depth(A) (bottom).

    ``frame_a`` and ``frame_b`` are :func:`metrics.explain.explain` frames of the same query and
    depth; the totals are their final ``dcg`` (not recomputed). Traces: A, B (bars), then
    ``B − A`` (the waterfall).
    """
    for frame in (frame_a, frame_b):
        _require(frame, ("rank", "docno", "contribution", "dcg"), "contribution_pair")
    if len(frame_a) != len(frame_b):
        raise MetricsError(f"contribution_pair: the frames have {len(frame_a)} and {len(frame_b)} ranks",
                           fix="explain both runs at the same depth")
    a, b = (str(n) for n in names)
    palette = colors or {}
    depth = len(frame_a)
    ranks = [str(r) for r in frame_a["rank"]]
    ca, cb = (f["contribution"].to_numpy(dtype=np.float64) for f in (frame_a, frame_b))
    total = (float(frame_b["dcg"].iloc[-1]) - float(frame_a["dcg"].iloc[-1])) if depth else 0.0
    fig = make_subplots(rows=2, cols=1, shared_xaxes=False, vertical_spacing=0.14, row_heights=[0.5, 0.5],
                        subplot_titles=("contribution per rank", f"{plain(b)} − {plain(a)}"))
    fig.update_layout(**LAYOUT)
    fig.update_layout(height=560, barmode="group", hovermode="closest")
    for i, (name, frame, values) in enumerate(((a, frame_a, ca), (b, frame_b, cb))):
        docs = frame["docno"].fillna("").astype(str).map(plain).tolist()
        fig.add_trace(go.Bar(x=ranks, y=values, name=plain(name), customdata=docs,
                             marker_color=palette.get(name, PALETTE[i % len(PALETTE)]),
                             hovertemplate=f"{plain(name)} rank %{{x}}: %{{customdata}}<br>"
                                           "contribution %{y:.4f}<extra></extra>"), row=1, col=1)
    diff = cb - ca
    fig.add_trace(go.Waterfall(
        x=ranks + [f"Δ DCG@{depth}"], y=np.append(diff, total).tolist(), measure=["relative"] * depth + ["total"],
        name=f"{plain(b)} − {plain(a)}", text=[f"{d:+.3f}" if d else "" for d in diff] + [f"{total:+.4f}"],
        textposition="outside", hovertemplate="rank %{x}: %{y:+.4f}<extra></extra>",
        increasing={"marker": {"color": BETTER}}, decreasing={"marker": {"color": WORSE}},
        totals={"marker": {"color": "#555555"}}, connector={"line": {"color": _LINE_COLOR}}, showlegend=False,
    ), row=2, col=1)
    fig.update_xaxes(type="category", title_text="rank", row=2, col=1)
    fig.update_xaxes(type="category", row=1, col=1)
    fig.update_yaxes(title_text="gain / log2(rank+1)", row=1, col=1)
    fig.update_yaxes(title_text="difference", row=2, col=1)
    return fig


def cumulative_gain(frame: pd.DataFrame, *, title: str | None = None) -> go.Figure:
    """Cumulative DCG and IDCG over rank (left axis) and nDCG@rank = DCG/IDCG (right axis).

    Traces, by name: ``DCG``, ``IDCG``, ``nDCG``.
    """
    _require(frame, ("rank", "dcg", "idcg", "ndcg"), "cumulative_gain")
    rank = frame["rank"].to_numpy()
    fig = new_figure(title=title, xaxis_title="rank", hovermode="x unified",
                  yaxis={"title": "cumulative gain", "rangemode": "tozero"},
                  yaxis2={"title": "nDCG@rank", "overlaying": "y", "side": "right", "range": [0, 1.05],
                          "tickmode": "linear", "tick0": 0, "dtick": 0.2, "showgrid": False})
    fig.add_trace(go.Scatter(x=rank, y=frame["dcg"], name="DCG", mode="lines+markers",
                             line={"color": GRADE_COLORS[3], "width": 2}))
    fig.add_trace(go.Scatter(x=rank, y=frame["idcg"], name="IDCG", mode="lines+markers",
                             line={"color": "#555555", "width": 2, "dash": "dash"}))
    fig.add_trace(go.Scatter(x=rank, y=frame["ndcg"], name="nDCG", mode="lines", yaxis="y2",
                             line={"color": HIGHLIGHT, "width": 1.5, "dash": "dot"}))
    return fig


# ---------------------------------------------------------------- whole collection

# Heatmap categories, in colour-bar order.
_CATEGORIES = ("not retrieved", "unjudged", "0", "1", "2", "3", "4+")
_CATEGORY_COLORS = (NOT_RETRIEVED_COLOR, UNJUDGED_COLOR, *GRADE_COLORS.values())


# Margins that hold what automargin would make room for, so that plotly draws the heatmap once: it
# otherwise draws it, measures its 300 query labels and colour bar, grows the margins and draws again
# (0.13 s against 0.05 s for two systems in Chromium). Plotly still grows a margin that is too small.
_LABEL_PX = 8        # per character of a query id at the tick labels' 12 px, with room to spare
_LEFT_PAD = 44       # the axis title "query" and the ticks
_BAR_MARGIN = 150    # the colour bar and its longest label, "not retrieved"
_BOTTOM_MARGIN = 60  # the rank axis and its title


def relevance_heatmap(matrices: RelevanceMatrix | Sequence[RelevanceMatrix], *,
                      title: str | None = None) -> go.Figure:
    """Queries x positions, each cell coloured by the grade of the document there, for one run or
    for several side by side (one column each, titled by its system, on the same query rows).

    Unjudged cells take :data:`UNJUDGED_COLOR`, empty positions white;
    grades <= 0 share one colour, grades >= 4 another. Proxy-labelled cells
    take their label's colour and say "inferred" on hover. Several matrices must hold the same
    queries in the same order (:func:`metrics.analysis.explain.relevance_matrix` with ``qids``).
    """
    matrices = [matrices] if isinstance(matrices, RelevanceMatrix) else list(matrices)
    if not matrices:
        raise MetricsError("relevance_heatmap: no matrix given", fix="give one RelevanceMatrix per system")
    qids = [str(q) for q in matrices[0].qids]
    if any([str(q) for q in m.qids] != qids for m in matrices[1:]):
        raise MetricsError("relevance_heatmap: the matrices hold different queries",
                           fix="make every matrix with the same qids (relevance_matrix(..., qids=rows))")
    n_cat = len(_CATEGORIES)
    scale = []
    for i, colour in enumerate(_CATEGORY_COLORS):
        scale += [[i / n_cat, colour], [(i + 1) / n_cat, colour]]
    several = len(matrices) > 1
    fig = make_subplots(rows=1, cols=len(matrices), shared_yaxes=True, horizontal_spacing=0.02,
                        subplot_titles=[plain(str(m.system)) for m in matrices] if several else None)
    fig.update_layout(**LAYOUT)
    longest = max((len(q) for q in qids), default=1)
    fig.update_layout(title=title, height=max(320, 14 * len(qids) + 120),
                      margin={"l": _LEFT_PAD + _LABEL_PX * min(longest, 40), "r": _BAR_MARGIN,
                              "t": TOOLBAR_MARGIN, "b": _BOTTOM_MARGIN})
    for column, matrix in enumerate(matrices, start=1):
        status = matrix.status
        grade = np.nan_to_num(matrix.grade, nan=0.0)
        category = np.where(status == 0, 0, np.where(status == 2, 1, 2 + np.clip(grade, 0, 4))).astype(np.int64)
        status_text = np.asarray(STATUS, dtype=object)[status]
        who = f"{plain(str(matrix.system))}: " if several else ""
        hover = np.empty(status.shape, dtype=object)
        for qi, q in enumerate(qids):  # hover labels only: a loop over the rows drawn, not a computation
            hover[qi] = [f"{who}query {plain(q)}, rank {p + 1}<br>{plain(d) if d is not None else ''}<br>"
                         + _status_text(g, s)
                         for p, (d, s, g) in enumerate(zip(matrix.docno[qi], status_text[qi], matrix.grade[qi]))]
        fig.add_trace(go.Heatmap(
            z=category, x=np.arange(1, matrix.depth + 1), y=qids, zmin=-0.5, zmax=n_cat - 0.5,
            name=plain(str(matrix.system)), colorscale=scale, hovertext=hover, hoverinfo="text", xgap=1, ygap=1,
            showscale=column == 1,
            colorbar={"tickmode": "array", "tickvals": list(range(n_cat)), "ticktext": list(_CATEGORIES),
                      "title": "grade"},
        ), row=1, col=column)
        fig.update_xaxes(title_text="rank", row=1, col=column)
    fig.update_yaxes(type="category", autorange="reversed")
    fig.update_yaxes(title_text="query", row=1, col=1)
    return fig


# ---------------------------------------------------------------- teaching

def discount_curve(frame: pd.DataFrame, *, marks: Sequence[int] = (1, 5, 10)) -> go.Figure:
    """The discount 1/log2(rank + 1) over rank, with ``marks`` labelled by their exact value.

    ``frame`` has columns ``rank, discount`` (:func:`metrics.sandbox.discount_curve`).
    """
    _require(frame, ("rank", "discount"), "discount_curve")
    fig = new_figure(xaxis_title="rank", yaxis_title="discount 1 / log2(rank + 1)", showlegend=False,
                  yaxis={"range": [0, 1.1]})
    fig.add_trace(go.Scatter(x=frame["rank"], y=frame["discount"], mode="lines+markers", name="discount",
                             line={"color": GRADE_COLORS[3]},
                             hovertemplate="rank %{x}: 1/log2(%{x}+1) = %{y:.4f}<extra></extra>"))
    first = float(frame["discount"].iloc[0])
    for rank in marks:
        row = frame[frame["rank"] == rank]
        if row.empty:
            continue
        value = float(row["discount"].iloc[0])
        less = "" if rank == 1 else f" ({1 - value / first:.0%} less)"
        fig.add_annotation(x=rank, y=value, text=f"rank {rank}: {value:.3f}{less}", showarrow=True, arrowhead=2,
                           ax=30, ay=-30, bgcolor="rgba(255,255,255,0.85)")
    return fig


def gain_bars(table: pd.DataFrame) -> go.Figure:
    """Linear and exponential gain per grade, side by side (:func:`metrics.sandbox.gain_table`)."""
    _require(table, ("grade", "linear gain", "exponential gain"), "gain_bars")
    fig = new_figure(xaxis_title="grade", yaxis_title="gain", barmode="group", xaxis={"dtick": 1})
    fig.add_trace(go.Bar(x=table["grade"], y=table["linear gain"], name="linear: rel",
                         marker_color=GRADE_COLORS[2], text=table["linear gain"], textposition="outside"))
    fig.add_trace(go.Bar(x=table["grade"], y=table["exponential gain"], name="exponential: 2^rel - 1",
                         marker_color=GRADE_COLORS[4], text=table["exponential gain"], textposition="outside"))
    return fig
