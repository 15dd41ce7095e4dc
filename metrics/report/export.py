"""Exports of result tables (CSV, LaTeX, JSON), each carrying a stamp of settings and inputs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd


def _latex_escape(text) -> str:
    return (str(text).replace("\\", r"\textbackslash{}").replace("_", r"\_").replace("&", r"\&")
            .replace("%", r"\%").replace("#", r"\#").replace("{", r"\{").replace("}", r"\}")
            .replace("^", r"\^{}").replace("~", r"\~{}"))


def to_latex(table: pd.DataFrame, marks: dict | None = None, stamp: dict | None = None, digits: int = 4) -> str:
    """A booktabs tabular of a system x measure table, the best value per column in bold.

    ``marks`` maps (system, measure) to a superscript marker (significance);
    ``stamp`` is written as leading ``%`` comment lines.
    """
    cols = list(table.columns)
    lines = [f"% {key}: {json.dumps(value)}" for key, value in (stamp or {}).items()]
    lines += [r"\begin{tabular}{l" + "r" * len(cols) + "}", r"\toprule",
              "System & " + " & ".join(_latex_escape(c) for c in cols) + r" \\", r"\midrule"]
    best = {c: np.nanmax(table[c].to_numpy(dtype=float)) if len(table) else np.nan for c in cols}
    for system, row in table.iterrows():
        cells = []
        for c in cols:
            text = f"{row[c]:.{digits}f}"
            if row[c] == best[c]:
                text = r"\textbf{" + text + "}"
            if marks and marks.get((system, c)):
                text += "$^{" + marks[(system, c)] + "}$"
            cells.append(text)
        lines.append(_latex_escape(system) + " & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


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
