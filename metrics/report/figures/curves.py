"""Plotly figure builders: pure functions of frames, no Streamlit.

Inputs are the library's frames:

- a *per-query curve* (``metrics.curve``): index ``qid``, columns ``k = 1..K``;
- a *mean curve* (tidy): columns ``system, k, value`` and optionally
  ``lower, upper`` (a bootstrap band), one row per system and cutoff;
- a *means table* (``metrics.means``): index ``system``, one column per measure;
- a *per-query precision-recall frame* (:func:`iprec_frame`): index ``qid``, columns the recall
  levels, and its tidy mean ``system, recall, value`` (plus ``lower, upper``).

Every builder returns a ``go.Figure`` with the shared look (:data:`LAYOUT`);
pages hand it to ``st.plotly_chart(fig, config=FIGURE_CONFIG)``.
Colours come from :func:`system_colors`, so a system keeps its colour in
every figure as long as the page passes the same ordered list of systems.
"""
from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.colors
import plotly.graph_objects as go

from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS
from ...stats import bootstrap_ci
from . import palette

PALETTE: tuple[str, ...] = palette.SYSTEMS
"""Qualitative palette (Okabe-Ito, :mod:`.palette`); system i (in the order given) gets
``PALETTE[i % len(PALETTE)]``."""

FIGURE_CONFIG: dict = {
    "toImageButtonOptions": {"format": "png", "scale": 2, "filename": "ndcg-lab"},
    "displaylogo": False,
}
"""Suggested ``config`` for ``st.plotly_chart``: the camera button downloads a 2x PNG."""

HEIGHT = 420
TOOLBAR_MARGIN = 48
"""Top margin (px) kept clear for the chart toolbars (plotly's mode bar and Streamlit's), which sit
over the top right corner of a chart: nothing the reader needs is drawn there."""
LAYOUT: dict = {
    "template": "plotly_white",
    "colorway": list(palette.SYSTEMS),
    "height": HEIGHT,
    "margin": {"l": 10, "r": 10, "t": TOOLBAR_MARGIN, "b": 10},
    # the legend below the plot, at the figure's bottom edge (the margin grows to hold it), never
    # in the top band where the toolbars are
    "legend": {"orientation": "h", "yref": "container", "yanchor": "bottom", "y": 0, "xanchor": "left", "x": 0},
}

BAND_ALPHA = 0.18
# Order-change labels: rows to stagger them over, and the least gap (axis fraction) on a row.
_LABEL_ROWS = 3
_LABEL_GAP = 0.06
# Largest bootstrap count matrix held at once (elements): 2**22 float64 = 32 MB.


def system_colors(systems: Iterable[str], palette: Sequence[str] = PALETTE) -> dict[str, str]:
    """``{system: colour}``: the i-th distinct name (in the order given) gets ``palette[i % len]``.

    Pass the workspace's full, fixed list of systems (not the user's current
    selection) so that filtering does not recolour the remaining systems.
    """
    names = list(dict.fromkeys(str(s) for s in systems))
    return {name: palette[i % len(palette)] for i, name in enumerate(names)}


def rgba(colour: str, alpha: float) -> str:
    """``#rrggbb`` or ``rgb(r, g, b)`` -> ``rgba(r, g, b, alpha)``."""
    if colour.startswith("#"):
        r, g, b = plotly.colors.hex_to_rgb(colour)
    else:
        r, g, b = plotly.colors.unlabel_rgb(colour)[:3]
    return f"rgba({int(r)}, {int(g)}, {int(b)}, {alpha})"


def plain(text: str) -> str:
    """User text made inert inside a hovertemplate: no HTML, no %{...} placeholders."""
    return html.escape(str(text)).replace("%{", "%\u200b{")


def new_figure(**layout) -> go.Figure:
    """An empty figure in the house layout (:data:`LAYOUT`), then ``layout``."""
    fig = go.Figure()
    fig.update_layout(**LAYOUT)
    fig.update_layout(**layout)
    return fig


# ---------------------------------------------------------------- leaderboard

def leaderboard_bars(means_table: pd.DataFrame, measure: str, *, colors: Mapping[str, str] | None = None,
                     sort: bool = False) -> go.Figure:
    """Bar chart of one measure across systems from ``metrics.means`` (index system, columns measures).

    One bar trace named ``measure``, a bar per system in table order (``sort=True``:
    best first); the y-axis title is the exact measure string.
    """
    if measure not in means_table.columns:
        available = ", ".join(map(str, means_table.columns)) or "none"
        raise MetricsError(f"means table has no column {measure!r}",
                           fix=f"pick one of the evaluated measures: {available}")
    column = means_table[measure].astype(float)
    if sort:
        column = column.sort_values(ascending=False, kind="stable")
    systems = [str(s) for s in column.index]
    palette = colors if colors is not None else system_colors(means_table.index)
    fig = new_figure(yaxis_title=measure, xaxis_title="system", showlegend=False)
    fig.add_trace(go.Bar(
        x=systems, y=column.to_numpy(), name=measure,
        marker_color=[palette.get(s, PALETTE[0]) for s in systems],
        text=[f"{v:.4f}" for v in column.to_numpy()], textposition="outside",
        hovertemplate=f"%{{x}}<br>{measure} = %{{y:.4f}}<extra></extra>",
    ))
    return fig


# ---------------------------------------------------------------- mean curves

def _k_of(frame: pd.DataFrame) -> np.ndarray:
    try:
        return np.asarray(frame.columns, dtype=np.int64)
    except (TypeError, ValueError):
        raise MetricsError("curve frame columns must be the cutoffs k (integers)",
                           fix="pass the frame from metrics.curve (index qid, columns 1..K)") from None


def mean_curves(curves: Mapping[str, pd.DataFrame], *, n_boot: int | None = None, seed: int = 0,
                level: float = 0.95, x: str = "k") -> pd.DataFrame:
    """Mean over queries of per-query curves: tidy ``system, k, value`` (plus ``lower, upper``).

    ``curves`` maps system -> ``metrics.curve`` frame (index qid, columns k); with ``x="recall"``
    the columns are recall levels (:func:`iprec_frame`) and the tidy frame's column is ``recall``.
    value(k) = (1/|Q|) sum_q curve[q, k]; a NaN in a column makes that mean NaN.
    With ``n_boot`` the frame gains ``lower, upper``: the percentile bootstrap interval of each
    mean over ``n_boot`` resamples of the queries (:func:`metrics.stats.bootstrap_ci`; the same seed
    for every system, so paired systems share resamples).
    """
    if x not in ("k", "recall"):
        raise MetricsError(f"mean_curves: x={x!r} is not an option", fix="use x='k' or x='recall'")
    parts = []
    for system, frame in curves.items():
        k = _k_of(frame) if x == "k" else np.asarray(frame.columns, dtype=np.float64)
        values = frame.to_numpy(dtype=np.float64)
        part = {"system": np.full(len(k), str(system), dtype=object), x: k,
                "value": values.mean(axis=0) if len(values) else np.full(len(k), np.nan)}
        if n_boot is not None:
            part["lower"], part["upper"] = bootstrap_ci(values, resamples=n_boot, seed=seed, level=level)
        parts.append(pd.DataFrame(part))
    columns = ["system", x, "value"] + (["lower", "upper"] if n_boot is not None else [])
    x_type = "int64" if x == "k" else "float64"
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=x_type if c == x else "float64") for c in columns}
                            ).astype({"system": "string"})
    tidy = pd.concat(parts, ignore_index=True)[columns]
    return tidy.astype({"system": "string", x: x_type})


# ---------------------------------------------------------------- order changes

def order_changes(mean_frame: pd.DataFrame) -> list[dict]:
    """Cutoffs k where some pair of systems is ordered the other way round from the last cutoff that
    told the two apart.

    ``mean_frame`` is tidy ``system, k, value``. A pair of systems tied at k (equal to 12 decimals)
    has no order there: a tie is never a change, and a pair that leads, ties, then trails changes
    where it trails. Only cutoffs where every system has a value are compared. Returns
    ``[{"k", "before", "after"}]`` with ``before``/``after`` the orders at the previous cutoff and
    at k (value descending, ties by system name ascending), best first.
    """
    _require_columns(mean_frame, ("system", "k", "value"), "order_changes")
    matrix = mean_frame.pivot_table(index="system", columns="k", values="value", aggfunc="first",
                                    dropna=False).sort_index()
    matrix = matrix.loc[:, matrix.notna().all(axis=0)]
    if matrix.shape[0] < 2 or matrix.shape[1] < 2:
        return []
    names = np.asarray([str(s) for s in matrix.index], dtype=object)
    ks = np.asarray(matrix.columns, dtype=np.int64)
    values = np.round(matrix.to_numpy(dtype=np.float64), TIE_DECIMALS)
    # stable argsort of -value per column: best first, ties keep name order
    order = np.argsort(-values, axis=0, kind="stable")
    i, j = np.triu_indices(len(names), 1)
    sign = np.sign(values[i] - values[j])            # pairs x cutoffs; 0 = tied at that cutoff
    last = np.zeros(len(i))                          # each pair's last non-zero sign so far
    changed = []
    for c in range(sign.shape[1]):
        if c and (sign[:, c] * last < 0).any():
            changed.append(c)
        last = np.where(sign[:, c] != 0, sign[:, c], last)
    return [{"k": int(ks[c]), "before": names[order[:, c - 1]].tolist(), "after": names[order[:, c]].tolist()}
            for c in changed]


def _require_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise MetricsError(f"{what}: frame lacks column(s) {', '.join(missing)}",
                           fix="pass a tidy mean frame with columns system, k, value (see mean_curves)")


# ---------------------------------------------------------------- the curve figure

def metric_curve(curves: Mapping[str, pd.DataFrame] | pd.DataFrame, *, measure_label: str, log_x: bool = False,
                 band: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
                 order_changes: Sequence[int] | Sequence[Mapping] | None = None,
                 colors: Mapping[str, str] | None = None, band_label: str = "95% CI") -> go.Figure:
    """A measure at every cutoff k, one line per system (e.g. NDCG@k for k = 1..run depth).

    ``curves`` is the tidy mean frame ``system, k, value`` (optional ``lower,
    upper`` columns draw the band), as :func:`mean_curves` returns; a
    ``{system: per-query curve}`` dict is accepted and averaged with
    :func:`mean_curves`. ``band`` ({system: (lower, upper)} aligned with that
    system's k, ascending) overrides the columns. ``order_changes`` are cutoffs
    (ints, or the dicts of :func:`order_changes`) marked by dotted vertical
    lines with a ``k=…`` label where there is room (hover on it: the orders).
    ``measure_label`` is the exact measure string (``nDCG(dcg='exp-log2')@k``),
    used as the y-axis title and in the hover.

    Traces: band polygons first (name ``"{system} {band_label}"``, no legend
    entry, legend-grouped with their line), then one line per system (name =
    system) in order of first appearance.
    """
    frame = mean_curves(curves) if isinstance(curves, Mapping) else curves
    _require_columns(frame, ("system", "k", "value"), "metric_curve")
    systems = list(dict.fromkeys(str(s) for s in frame["system"]))
    palette = colors if colors is not None else system_colors(systems)
    has_band_columns = {"lower", "upper"} <= set(frame.columns)

    fig = new_figure(
        xaxis_title="k (cutoff)", yaxis_title=measure_label, hovermode="closest",
        xaxis={"type": "log" if log_x else "linear"},
    )
    grouped = {str(name): part.sort_values("k", kind="stable")
               for name, part in frame.groupby("system", sort=False, observed=True)}
    lines = []
    for system in systems:
        part = grouped[system]
        k = part["k"].to_numpy(dtype=np.int64)
        value = part["value"].to_numpy(dtype=np.float64)
        colour = palette.get(system, PALETTE[0])
        lower: np.ndarray | None = None
        upper: np.ndarray | None = None
        if band is not None and system in band:
            lower, upper = (np.asarray(a, dtype=np.float64) for a in band[system])
            if lower.shape != k.shape or upper.shape != k.shape:
                raise MetricsError(f"band for {system!r} has {lower.size}/{upper.size} values for {k.size} cutoffs",
                                   fix="give lower and upper with one value per k of that system")
        elif band is None and has_band_columns:
            lower = part["lower"].to_numpy(dtype=np.float64)
            upper = part["upper"].to_numpy(dtype=np.float64)
        if lower is not None and upper is not None:
            fig.add_trace(band_trace(system, k, lower, upper, colour, band_label))
        customdata = None
        hover = f"<b>{plain(system)}</b><br>k = %{{x}}<br>{plain(measure_label)} = %{{y:.4f}}"
        if lower is not None and upper is not None:
            customdata = np.column_stack([lower, upper])
            hover += f"<br>{band_label} [%{{customdata[0]:.4f}}, %{{customdata[1]:.4f}}]"
        lines.append(go.Scatter(
            x=k, y=value, name=plain(system), mode="lines", legendgroup=system,
            line={"color": colour, "width": 2}, customdata=customdata,
            hovertemplate=hover + "<extra></extra>",
        ))
    fig.add_traces(lines)
    if order_changes:
        ks = frame["k"].to_numpy(dtype=np.float64)
        _mark_order_changes(fig, order_changes, log_x=log_x, k_range=(ks.min(), ks.max()))
    return fig


def band_trace(system: str, k: np.ndarray, lower: np.ndarray, upper: np.ndarray, colour: str,
                band_label: str) -> go.Scatter:
    """A closed polygon (upper left-to-right, lower right-to-left) filled in the system's colour."""
    keep = np.isfinite(lower) & np.isfinite(upper)
    k, lower, upper = k[keep], lower[keep], upper[keep]
    return go.Scatter(
        x=np.concatenate([k, k[::-1]]), y=np.concatenate([upper, lower[::-1]]),
        name=f"{system} {band_label}", legendgroup=system, showlegend=False,
        mode="lines", line={"width": 0, "color": colour}, fill="toself",
        fillcolor=rgba(colour, BAND_ALPHA), hoverinfo="skip",
    )


def _mark_order_changes(fig: go.Figure, changes, *, log_x: bool, k_range: tuple[float, float]) -> None:
    """A dotted vertical line at every change; a ``k=…`` label (hover: the orders) where there is room.

    Labels are staggered over a few rows; one that would still overlap its
    neighbour is left out (its line stays), so a noisy tail stays readable.
    """
    def position(k: float) -> float:  # fraction of the axis width
        lo, hi = (np.log10(v) for v in k_range) if log_x else k_range
        at = np.log10(k) if log_x else k
        return float((at - lo) / (hi - lo)) if hi > lo else 0.5

    def k_of(change) -> int:
        return int(change["k"]) if isinstance(change, Mapping) else int(change)

    last_on_row = [-np.inf] * _LABEL_ROWS
    for change in sorted(changes, key=k_of):
        k = k_of(change)
        detail = ([f"{key}: {' > '.join(map(str, change[key]))}" for key in ("before", "after") if key in change]
                  if isinstance(change, Mapping) else [])
        fig.add_vline(x=k, line={"dash": "dot", "width": 1, "color": "rgba(90, 90, 90, 0.8)"})
        at = position(k)
        row = next((r for r, last in enumerate(last_on_row) if at - last >= _LABEL_GAP), None)
        if row is None:
            continue
        last_on_row[row] = at
        # shapes take data units on a log axis, annotations its log10 (a plotly.js legacy)
        fig.add_annotation(
            x=float(np.log10(k)) if log_x else k, xref="x", y=1, yref="paper", yanchor="top",
            yshift=-14 * row, xanchor="right" if at > 0.9 else "left", text=f"k={k}", showarrow=False,
            font={"size": 10, "color": "#555"}, bgcolor="rgba(255, 255, 255, 0.7)",
            hovertext="<br>".join([f"order of systems changes at k={k}", *detail]),
        )


# ---------------------------------------------------------------- precision-recall

def iprec_frame(values: np.ndarray, qids: Sequence[str], levels: Sequence[float]) -> pd.DataFrame:
    """Per-query interpolated precision (``metrics.measures.iprec_curve``) as a frame: index
    ``qid``, one column per recall level, ready for ``mean_curves(..., x="recall")``."""
    levels = [float(x) for x in levels]
    values = np.asarray(values, dtype=np.float64).reshape(len(qids), len(levels))
    return pd.DataFrame(values, index=pd.Index([str(q) for q in qids], name="qid"),
                        columns=pd.Index(levels, name="recall"))


def precision_recall_curve(frame: pd.DataFrame, *, measure_label: str = "IPrec",
                           colors: Mapping[str, str] | None = None, band_label: str = "95% CI") -> go.Figure:
    """The interpolated precision-recall curve, one line per system.

    ``frame`` is the tidy mean ``system, recall, value`` (optional ``lower, upper`` draw the band)
    of :func:`mean_curves` with ``x="recall"``: value(x) = mean over queries of IPrec@x =
    max over ranks r' >= r_c of P@r', r_c the rank of the c-th relevant document, c = round(x R).
    Traces: band polygons first (name ``"{system} {band_label}"``, no legend entry), then one
    line with markers per system (name = system).
    """
    _require_columns(frame, ("system", "recall", "value"), "precision_recall_curve")
    systems = list(dict.fromkeys(str(s) for s in frame["system"]))
    palette = colors if colors is not None else system_colors(systems)
    has_band = {"lower", "upper"} <= set(frame.columns)
    fig = new_figure(xaxis_title="recall", yaxis_title=f"{measure_label} (interpolated precision)",
                  hovermode="closest", xaxis={"range": [-0.02, 1.02]}, yaxis={"range": [0, 1.02]})
    lines = []
    for system, part in frame.groupby("system", sort=False, observed=True):
        system = str(system)
        part = part.sort_values("recall", kind="stable")
        recall = part["recall"].to_numpy(dtype=np.float64)
        colour = palette.get(system, PALETTE[0])
        hover = f"<b>{plain(system)}</b><br>{plain(measure_label)}@%{{x:.2f}} = %{{y:.4f}}"
        customdata = None
        if has_band:
            lower, upper = part["lower"].to_numpy(dtype=np.float64), part["upper"].to_numpy(dtype=np.float64)
            fig.add_trace(band_trace(system, recall, lower, upper, colour, band_label))
            customdata = np.column_stack([lower, upper])
            hover += f"<br>{band_label} [%{{customdata[0]:.4f}}, %{{customdata[1]:.4f}}]"
        lines.append(go.Scatter(
            x=recall, y=part["value"].to_numpy(dtype=np.float64), name=plain(system), mode="lines+markers",
            legendgroup=system, line={"color": colour, "width": 2}, marker={"size": 5},
            customdata=customdata, hovertemplate=hover + "<extra></extra>"))
    fig.add_traces(lines)
    return fig
