"""HTML rendering of result tables (st.table keeps cell text in the DOM, unlike the canvas grid)."""
from __future__ import annotations

import numpy as np
import pandas as pd


def leaderboard_styler(table: pd.DataFrame, markers: dict | None = None, tooltips: dict | None = None,
                       digits: int = 4):
    """Styler of a system x measure table: the best value per column bold, markers after values."""
    markers = markers or {}
    shown = pd.DataFrame(index=table.index, columns=table.columns, dtype=object)
    bold = pd.DataFrame("", index=table.index, columns=table.columns)
    for col in table.columns:
        values = table[col].to_numpy(dtype=float)
        best = np.nanmax(values) if len(values) else np.nan
        for system, value in zip(table.index, values):
            shown.at[system, col] = f"{value:.{digits}f}" + (f" {markers[(system, col)]}" if markers.get((system, col)) else "")
            if value == best:
                bold.at[system, col] = "font-weight: 700; background-color: rgba(46, 160, 67, 0.15)"
    styler = shown.style.apply(lambda _: bold, axis=None)
    if tooltips:
        tips = pd.DataFrame("", index=table.index, columns=table.columns)
        for (system, col), text in tooltips.items():
            if system in tips.index and col in tips.columns:
                tips.at[system, col] = text
        styler = styler.set_tooltips(tips)
    return styler
