"""HTML rendering of result tables (cell text stays in the DOM, unlike the canvas grid of st.dataframe)."""
from __future__ import annotations

from html import escape

import numpy as np
import pandas as pd

from metrics.report.text import format_p
from ndcg_lab.ui.text import plain_frame

BEST_STYLE = "font-weight: 700; background-color: rgba(46, 160, 67, 0.15)"
MISSING = "–"
TABLE_CLASS = "ndcg-table"
# Streamlit's st.table look (small text, thin rules) in either theme: colours from the text's own.
TABLE_CSS = (f"table.{TABLE_CLASS} {{border-collapse: collapse; font-size: 0.875rem; margin-bottom: 1rem}} "
             f"table.{TABLE_CLASS} th, table.{TABLE_CLASS} td {{padding: 0.25rem 0.375rem; text-align: right; "
             "border-bottom: 1px solid rgba(128, 128, 128, 0.25); font-variant-numeric: tabular-nums} "
             f"table.{TABLE_CLASS} th {{font-weight: 400; opacity: 0.8}} "
             f"table.{TABLE_CLASS} th.row_heading, table.{TABLE_CLASS} th.index_name {{text-align: left}} "
             f"table.{TABLE_CLASS} td.best {{{BEST_STYLE}}}")


SHOWN_ROWS = 1_000
"""Rows of a long list (a document or a pair per row) that a page shows: a to-do list or the
documents only one system retrieves run to 100,000 rows (8 MB a visit) on 7M-line runs; the
rest are in the list's download."""


def first_rows(frame: pd.DataFrame, order: str) -> tuple[pd.DataFrame, str]:
    """The first :data:`SHOWN_ROWS` rows of ``frame`` and, when it holds more, a sentence that says
    so (``order``: what puts them first); else ``frame`` and ''."""
    if len(frame) <= SHOWN_ROWS:
        return frame, ""
    return frame.iloc[:SHOWN_ROWS], f"The first {SHOWN_ROWS:,} of {len(frame):,} are shown ({order})."


def best_mask(table: pd.DataFrame) -> pd.DataFrame:
    """True where a cell holds its column's highest value (every tied cell; none in an all-NaN column)."""
    values = table.to_numpy(dtype=float)
    if values.size == 0:
        return pd.DataFrame(False, index=table.index, columns=table.columns)
    finite = np.where(np.isnan(values), -np.inf, values)
    best = finite.max(axis=0)
    mask = (finite == best) & ~np.isnan(values)
    return pd.DataFrame(mask, index=table.index, columns=table.columns)


def leaderboard_html(table: pd.DataFrame, markers: dict | None = None, tooltips: dict | None = None,
                     digits: int = 4) -> str:
    """A system x measure table as one HTML ``<table>`` for ``st.html``: values to ``digits``
    decimals with their marker (▲/▼) after them, the best value of each column bold, a tooltip as
    the cell's ``title``. Every name, value and tooltip goes through ``html.escape`` (quotes too):
    system and measure names are the user's.

    One HTML element instead of ``st.table``, whose frontend renders every cell, index entry and
    header as a Markdown block of its own (45 on the legal sample's first screen). Written here
    rather than by pandas' ``Styler.to_html``, which leaves a tooltip's ``title`` unescaped."""
    markers, tooltips = markers or {}, tooltips or {}
    best = best_mask(table).to_numpy()
    values = table.to_numpy(dtype=float)
    head = "".join(f'<th class="col_heading" scope="col">{escape(str(col))}</th>' for col in table.columns)
    rows = []
    for i, system in enumerate(table.index):
        cells = []
        for j, col in enumerate(table.columns):
            text = MISSING if np.isnan(values[i, j]) else f"{values[i, j]:.{digits}f}"
            marker = markers.get((system, col))
            text = f"{text} {marker}" if marker else text
            tip = tooltips.get((system, col))
            attributes = (' class="best"' if best[i, j] else "") + (f' title="{escape(tip)}"' if tip else "")
            cells.append(f"<td{attributes}>{escape(text)}</td>")
        rows.append(f'<tr><th class="row_heading" scope="row">{escape(str(system))}</th>{"".join(cells)}</tr>')
    corner = escape(str(table.index.name)) if table.index.name is not None else ""
    return (f"<style>{TABLE_CSS}</style>"
            f'<table class="{TABLE_CLASS}"><thead><tr><th class="index_name">{corner}</th>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>")


def significance_details(tests: pd.DataFrame) -> pd.DataFrame:
    """The leaderboard's paired tests (``metrics.stats.versus_baseline`` rows) as text cells for
    ``st.table``, names escaped: text in the DOM, no interactive grid."""
    shown = pd.DataFrame({
        "Measure": tests["measure"].astype(str).to_numpy(),
        "Baseline mean": [f"{v:.4f}" for v in tests["baseline_mean"].to_numpy(dtype=float)],
        "Mean": [f"{v:.4f}" for v in tests["mean"].to_numpy(dtype=float)],
        "p": [format_p(v) for v in tests["p_value"].to_numpy(dtype=float)],
        "p (corrected)": [format_p(v) for v in tests["p_adjusted"].to_numpy(dtype=float)],
        "Sig.": tests["marker"].astype(str).to_numpy(),
    }, index=pd.Index(tests["system"].astype(str).to_numpy(), name="System"))
    return plain_frame(shown)
