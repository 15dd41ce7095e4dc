"""HTML rendering of result tables (st.table keeps cell text in the DOM, unlike the canvas grid)."""
from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.report.text import format_p
from ui.text import md, plain_frame

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


def significance_details(tests: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's paired tests (``metrics.stats.versus_baseline`` rows) as text cells for
    ``st.table``, names escaped: the same element as the leaderboard itself, so the first screen
    loads no interactive grid."""
    shown = pd.DataFrame({
        "Measure": tests["measure"].astype(str).to_numpy(),
        "Baseline mean": [f"{v:.4f}" for v in tests["baseline_mean"].to_numpy(dtype=float)],
        "Mean": [f"{v:.4f}" for v in tests["mean"].to_numpy(dtype=float)],
        "p": [format_p(v) for v in tests["p_value"].to_numpy(dtype=float)],
        "p (corrected)": [format_p(v) for v in tests["p_adjusted"].to_numpy(dtype=float)],
        "Sig.": tests["marker"].astype(str).to_numpy(),
    }, index=pd.Index(tests["system"].astype(str).to_numpy(), name="System"))
    return plain_frame(shown)
