"""Charts with a text alternative: every figure is drawn with its numbers in a table beneath it.

A chart is a picture; a screen reader, a reader who cannot tell its colours apart and anyone who
wants the exact value get the same numbers from the "Data of this chart" expander (WCAG 2.1
1.1.1, non-text content). Pages call :func:`plotly_chart` where they would call
``st.plotly_chart``; :func:`data_table` gives the same expander to Streamlit's own charts.
"""
from __future__ import annotations

import base64
import html
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

DATA_LABEL = "Data of this chart"
"""The expander's title: the same words under every chart, so a reader learns where to look."""


def _decoded(values: Any) -> Any:
    """A typed array in plotly's JSON form ``{"dtype", "bdata"[, "shape"]}`` (what a figure read back
    from a cache holds) as a numpy array; anything else as it is."""
    if isinstance(values, dict) and "bdata" in values:
        array = np.frombuffer(base64.b64decode(values["bdata"]), dtype=values["dtype"])
        shape = values.get("shape")
        if shape:
            array = array.reshape([int(d) for d in (shape if isinstance(shape, list) else str(shape).split(","))])
        return array
    return values


def _text(value: Any) -> Any:
    """A label as the chart shows it: plotly renders HTML entities, so a name the figure escaped
    (``nDCG(dcg=&#x27;exp-log2&#x27;)@10``, ``a&lt;b&gt;``) is shown, and listed, as it was typed; a
    table cell is text, never markup."""
    return html.unescape(value) if isinstance(value, str) else value


def _values(values: Any) -> list:
    """A trace's coordinate (tuple, list, array or None) as a list; typed arrays decoded, labels as shown."""
    if values is None:
        return []
    return [_text(v) for v in np.asarray(_decoded(values), dtype=object).ravel()]


def _axis_title(fig: go.Figure, axis: str, fallback: str) -> str:
    title = getattr(getattr(fig.layout, axis, None), "title", None)
    text = getattr(title, "text", None)
    return _text(str(text)) if text else fallback


def _heatmaps(fig: go.Figure) -> list[tuple[str, pd.DataFrame]]:
    """(name, matrix) of each heatmap trace of ``fig``, rows labelled by its ``y``, columns by its ``x``."""
    found = []
    for i, trace in enumerate(fig.data):
        z = _decoded(getattr(trace, "z", None))
        matrix = None if z is None else np.asarray(z, dtype=object)
        if matrix is not None and matrix.ndim == 2:
            rows = _values(getattr(trace, "y", None)) or list(range(matrix.shape[0]))
            cols = _values(getattr(trace, "x", None)) or list(range(matrix.shape[1]))
            found.append((_text(str(getattr(trace, "name", None) or f"series {i + 1}")),
                          pd.DataFrame(matrix, index=[str(r) for r in rows], columns=[str(c) for c in cols])))
    return found


def figure_frame(fig: go.Figure) -> pd.DataFrame:
    """The numbers a figure draws, one row per point: ``series, <x title>, <y title>``.

    A heatmap (``z``) becomes its matrix, rows labelled by ``y`` and columns by ``x``; heatmaps on
    the same rows (systems side by side) become one matrix, each column named ``<trace>: <x>``, and
    of heatmaps on different rows the first is the table. A trace
    with only ``x`` (a histogram of raw values) lists those values. Traces without points (an
    annotation's helper) are left out; an unnamed trace is "series i".
    """
    x_name, y_name = _axis_title(fig, "xaxis", "x"), _axis_title(fig, "yaxis", "y")
    if y_name == x_name:
        y_name = f"{y_name} (y)"
    heat = _heatmaps(fig)
    if heat:   # the matrix; several heatmaps on the same rows side by side, each column named by its trace
        if len(heat) == 1 or any(list(h.index) != list(heat[0][1].index) for _, h in heat[1:]):
            return heat[0][1].reset_index(names=y_name)
        return pd.concat([h.add_prefix(f"{name}: ") for name, h in heat], axis=1).reset_index(names=y_name)
    parts = []
    for i, trace in enumerate(fig.data):
        name = _text(str(getattr(trace, "name", None) or f"series {i + 1}"))
        xs, ys = _values(getattr(trace, "x", None)), _values(getattr(trace, "y", None))
        across, along = x_name, y_name
        if getattr(trace, "orientation", None) == "h" and xs and ys:
            xs, ys, across, along = ys, xs, y_name, x_name   # horizontal bars: categories on y
        if not xs and not ys:
            continue
        n = max(len(xs), len(ys))
        columns = {"series": [name] * n, across: (xs + [None] * n)[:n] if xs else list(range(1, n + 1))}
        if ys:
            columns[along] = (ys + [None] * n)[:n]
        parts.append(pd.DataFrame(columns))
    if not parts:
        return pd.DataFrame({"series": []})
    frame = pd.concat(parts, ignore_index=True)
    if frame["series"].nunique() == 1:
        frame = frame.drop(columns="series")
    return frame


def data_table(frame: pd.DataFrame, *, where: Any = st) -> None:
    """The text alternative of a chart drawn from ``frame``: its rows in a closed expander."""
    with where.expander(DATA_LABEL, icon=":material/table:"):
        st.dataframe(frame, hide_index=True, width="stretch", placeholder="—")   # a value that does not exist


def plotly_chart(fig: go.Figure, *, where: Any = st, **kwargs: Any) -> Any:
    """``st.plotly_chart(fig, **kwargs)`` in ``where`` (a column, a container; default the page),
    then the figure's numbers (:func:`figure_frame`) in the expander beneath it. Returns what
    ``st.plotly_chart`` returns (the selection event with ``on_select``)."""
    shown = where.plotly_chart(fig, **kwargs)
    data_table(figure_frame(fig), where=where)
    return shown
