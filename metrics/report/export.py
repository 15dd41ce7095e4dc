"""Exports of result tables (CSV, LaTeX, JSON), each carrying a stamp of settings and inputs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd


def to_latex(table: pd.DataFrame, marks: dict | None = None, stamp: dict | None = None, digits: int = 4) -> str:
    """A booktabs tabular of a system x measure table, the best value per column in bold.

    ``marks`` maps (system, measure) to a superscript LaTeX marker (significance);
    ``stamp`` is written as leading ``%`` comment lines. Rendered by pandas' Styler, whose
    LaTeX escaping covers the system and measure names: & % $ # _ { } ~ ^ and backslash.
    """
    cols = list(table.columns)
    values = table.to_numpy(dtype=float)
    best = np.nanmax(values, axis=0) if len(table) else np.full(len(cols), np.nan)
    cells = pd.DataFrame([[_cell(values[r, c], values[r, c] == best[c], (marks or {}).get((system, cols[c])), digits)
                           for c in range(len(cols))] for r, system in enumerate(table.index)],
                         index=pd.Index([str(s) for s in table.index]), columns=pd.Index([str(c) for c in cols]))
    cells.columns.name = "System"
    styler = cells.style.format_index(escape="latex", axis=0).format_index(escape="latex", axis=1)
    body = styler.to_latex(hrules=True, column_format="l" + "r" * len(cols))
    head = "".join(f"% {key}: {json.dumps(value)}\n" for key, value in (stamp or {}).items())
    return head + body


def _cell(value: float, best: bool, mark: str | None, digits: int) -> str:
    text = f"{value:.{digits}f}"
    if best:
        text = r"\textbf{" + text + "}"
    if mark:
        text += "$^{" + mark + "}$"
    return text


def to_csv(table: pd.DataFrame, stamp: dict | None = None) -> str:
    """CSV with ``# key: value`` stamp lines first (pandas reads it back with comment='#')."""
    head = "".join(f"# {key}: {json.dumps(value)}\n" for key, value in (stamp or {}).items())
    return head + table.to_csv(index=True)


def to_json(table: pd.DataFrame, stamp: dict | None = None, extra: dict | None = None) -> str:
    """{"stamp": ..., "means": {system: {measure: value}}, ...extra}."""
    body = {"stamp": stamp or {},
            "means": {str(s): {str(m): float(v) for m, v in row.items()} for s, row in table.iterrows()}}
    body.update(extra or {})
    return json.dumps(body, indent=2)
