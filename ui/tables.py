"""HTML rendering of result tables (st.table keeps cell text in the DOM, unlike the canvas grid)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ui.text import md

BEST_STYLE = "font-weight: 700; background-color: rgba(46, 160, 67, 0.15)"
MISSING = "–"


def best_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True where a cell holds its column's highest value (every tied cell; none in an all-NaN column)."""
    values = table.to_numpy(dtype=float)
    if values.size == 0:
        return pd.DataFrame(False, index=table.index, columns=table.columns)
    finite = np.where(np.isnan(values), -np.inf, values)
    best = finite.max(axis=0)
    mask = (finite == best) & ~np.isnan(values)
    return pd.DataFrame(mask, index=table.index, columns=table.columns)


def leaderboard_styler(table: pd.DataFrame, markers: dict | None = None, tooltips: dict | None = None,
                       digits: int = 4):
    """Styler of a system x measure table: the best value per column bold, markers after values.
    System and measure names are escaped (st.table renders Markdown in every cell and header)."""
    markers = markers or {}
    shown = pd.DataFrame(index=table.index, columns=table.columns, dtype=object)
    best = best_mask(table)
    bold = best.replace({True: BEST_STYLE, False: ""}).astype(object)
    for col in table.columns:
        for system, value in zip(table.index, table[col].to_numpy(dtype=float)):
            text = MISSING if np.isnan(value) else f"{value:.{digits}f}"
            marker = markers.get((system, col))
            shown.at[system, col] = f"{text} {marker}" if marker else text
    if tooltips:
        tips = pd.DataFrame("", index=table.index, columns=table.columns)
        for (system, col), text in tooltips.items():
            if system in tips.index and col in tips.columns:
                tips.at[system, col] = text
    names = pd.Index([md(s) for s in table.index], name=table.index.name)
    measures = pd.Index([md(c) for c in table.columns], name=table.columns.name)
    shown.index = bold.index = names
    shown.columns = bold.columns = measures
    styler = shown.style.apply(lambda _: bold, axis=None)
    if tooltips:
        tips.index, tips.columns = names, measures
        styler = styler.set_tooltips(tips)
    return styler
