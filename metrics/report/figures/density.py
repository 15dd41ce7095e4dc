"""Many points drawn as their density: a heatmap of counts on equal cells, darker where more fall.

A browser takes seconds to draw thousands of SVG marks (the 6,980 queries of MS MARCO dev, twice
that for two systems), and no one can tell one mark of a pixel from the next; a grid of
:data:`DENSITY_BINS` x :data:`DENSITY_BINS` cells draws at once and says how many points fall where.
"""
from __future__ import annotations

import numpy as np
import plotly.colors
import plotly.graph_objects as go

DENSITY_BINS = 40
DENSITY_SCALE = "Blues"
DENSITY_LIGHTEST = 0.6
"""The density's colours: plotly's Blues from 0.6 (one point, 3.2:1 on white, WCAG 2.1 1.4.11)
to 1.0 (the densest cell), darker where more points fall."""


def unit_range(values: np.ndarray) -> tuple[float, float]:
    """The axis range of scores: [0, 1] widened to hold every value (an empty array gives [0, 1])."""
    if not len(values):
        return 0.0, 1.0
    return float(min(values.min(), 0.0)), float(max(values.max(), 1.0))


def add_density(fig: go.Figure, x: np.ndarray, y: np.ndarray, x_edges: np.ndarray, y_edges: np.ndarray, *,
                x_name: str, y_name: str, unit: str = "queries") -> None:
    """The points (x, y) as a heatmap trace of their counts on the cells between ``x_edges`` and
    ``y_edges`` (an empty cell left blank), on a log scale of counts. ``x_name`` and ``y_name`` name
    the axes in the hover text (already made inert by the caller); ``unit`` names what is counted."""
    counts = np.histogram2d(y, x, bins=[y_edges, x_edges])[0].astype(np.int64)   # rows: the y cells
    top = int(counts.max()) if counts.size else 0
    # plotly's colour scales are linear in z: stops at 1, 10, 100, ... and the top count, coloured by
    # their logarithm, make it a log scale between them
    ticks = [10 ** i for i in range(int(np.log10(top)) + 1) if 10 ** i < top] + [top] if top > 1 else [1, 2]
    where = [float(np.log(t) / np.log(ticks[-1])) for t in ticks]
    colours = plotly.colors.sample_colorscale(DENSITY_SCALE, [DENSITY_LIGHTEST + (1 - DENSITY_LIGHTEST) * w
                                                              for w in where])
    scale = [[(t - 1) / (ticks[-1] - 1), c] for t, c in zip(ticks, colours)]
    x_cells, y_cells = _cells(x_edges), _cells(y_edges)
    fig.add_trace(go.Heatmap(
        x=_centres(x_edges), y=_centres(y_edges),
        z=np.where(counts > 0, counts, np.nan), zmin=1, zmax=ticks[-1], name=unit,
        colorscale=scale, colorbar={"title": {"text": unit}, "tickvals": _spaced(ticks), "thickness": 12},
        text=[[f"{x_name} in {x_cell}<br>{y_name} in {y_cell}" for x_cell in x_cells] for y_cell in y_cells],
        hoverongaps=False, hovertemplate=f"%{{text}}<br>%{{z}} {unit}<extra></extra>"))


def _centres(edges: np.ndarray) -> np.ndarray:
    """The cells' centres, rounded to 12 decimals (0.0375, not 0.037500000000000006: the chart's
    data table shows them)."""
    return np.round((edges[:-1] + edges[1:]) / 2, 12)


def _cells(edges: np.ndarray) -> list[str]:
    """Each cell as text, ``[a, b)``; the last holds its upper edge, ``[a, b]``."""
    last = len(edges) - 2
    return [f"[{a:.3f}, {b:.3f}{']' if i == last else ')'}" for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]


def _spaced(ticks: list[int], gap: float = 0.08) -> list[int]:
    """The colour bar's labelled counts: the first and the last, and between them each at least
    ``gap`` of the bar's length (linear in the count) from the one below and the top."""
    span = max(ticks[-1] - ticks[0], 1)
    kept = [ticks[0]]
    for t in ticks[1:-1]:
        if (t - kept[-1]) / span >= gap and (ticks[-1] - t) / span >= gap:
            kept.append(t)
    return kept + [ticks[-1]]
