"""Exports of result tables (CSV, LaTeX, JSON), each carrying a stamp of settings and inputs."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from ..stats import CORRECTIONS, TESTS
from .text import markers_note


def to_latex(table: pd.DataFrame, marks: dict | None = None, stamp: dict | None = None, digits: int = 4, *,
             environment: bool = False, caption: str | None = None, label: str | None = None,
             placement: str = "t") -> str:
    """A booktabs tabular of a system x measure table, the best value per column in bold.

    ``marks`` maps (system, measure) to a superscript LaTeX marker (significance);
    ``stamp`` is written as leading ``%`` comment lines, then a comment naming the packages the
    table needs (booktabs; amssymb for the markers ``\\blacktriangle``). Rendered by pandas'
    Styler, whose LaTeX escaping covers the system and measure names: & % $ # _ { } ~ ^ and backslash.

    ``environment=True`` wraps the tabular in a complete ``table`` float (``placement``, centred)
    with ``caption`` (plain text, escaped; default: what the cells and markers mean) and ``label``.
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
    marked = any((marks or {}).values())
    head = "".join(f"% {key}: {json.dumps(value)}\n" for key, value in (stamp or {}).items())
    head += "% needs \\usepackage{booktabs}" + ("\\usepackage{amssymb}" if marked else "") + "\n"
    if not environment:
        return head + body
    text = _escape(caption) if caption is not None else _default_caption(marked, (stamp or {}).get("baseline"))
    lines = [f"\\begin{{table}}[{placement}]", "\\centering", f"\\caption{{{text}}}"]
    if label:
        lines.append(f"\\label{{{label}}}")
    return head + "\n".join(lines) + "\n" + body + "\\end{table}\n"


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def _escape(text: str) -> str:
    """Plain text as LaTeX text: the ten special characters escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _default_caption(marked: bool, baseline) -> str:
    text = "Mean over queries per system and measure; the best value of each measure in bold."
    if marked:
        against = f" than the baseline {_escape(baseline)}" if baseline else " than the baseline"
        text += (" $^{\\blacktriangle}$ and $^{\\blacktriangledown}$: significantly better and worse"
                 f"{against}.")
    return text


def _cell(value: float, best: bool, mark: str | None, digits: int) -> str:
    text = f"{value:.{digits}f}"
    if best:
        text = r"\textbf{" + text + "}"
    if mark:
        text += "$^{" + mark + "}$"
    return text


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value):
    """A text cell a spreadsheet would run as a formula (it begins with = + - @, tab or CR),
    prefixed with a single quote (OWASP's advice for CSV injection); anything else as it is.
    Numbers stay numbers: -0.5 is a value, not a formula."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


def neutralised(table: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``table`` with every text cell, index entry and header passed through :func:`neutralise`."""
    out = table.map(neutralise) if len(table.columns) else table.copy()
    out.columns = _neutral_index(table.columns)
    out.index = _neutral_index(table.index)
    return out


def _neutral_index(index: pd.Index) -> pd.Index:
    if isinstance(index, pd.MultiIndex):
        return pd.MultiIndex.from_tuples([tuple(neutralise(v) for v in t) for t in index],
                                         names=[neutralise(n) for n in index.names])
    return pd.Index([neutralise(v) for v in index], name=neutralise(index.name))


def to_csv(table: pd.DataFrame, stamp: dict | None = None, *, sep: str = ",") -> str:
    """CSV (or TSV with ``sep="\\t"``) with ``# key: value`` stamp lines first (pandas reads it
    back with comment='#'); text cells that a spreadsheet would run as formulas are neutralised.
    Lines end in CRLF (RFC 4180), so that a cell holding a CR or LF is quoted, never split."""
    head = "".join(f"# {key}: {json.dumps(value)}\r\n" for key, value in (stamp or {}).items())
    return head + neutralised(table).to_csv(index=True, sep=sep, lineterminator="\r\n")


def to_json(table: pd.DataFrame, stamp: dict | None = None, extra: dict | None = None) -> str:
    """{"stamp": ..., "means": {system: {measure: value}}, ...extra}."""
    body = {"stamp": stamp or {},
            "means": {str(s): {str(m): float(v) for m, v in row.items()} for s, row in table.iterrows()}}
    body.update(extra or {})
    return json.dumps(body, indent=2)


def significance_stamp(baseline: str, test: str, correction: str, alpha: float = 0.05) -> dict:
    """The stamp entries that say what a table's significance markers mean: the baseline every
    system is tested against, the paired test and the multiple-testing correction (their codes, as
    ``metrics.stats.compare`` takes them), the level, and the line that reads the markers (▲ in
    text, blacktriangle in LaTeX: significantly better; ▼, blacktriangledown: significantly worse)."""
    note = markers_note(TESTS.get(test, test), CORRECTIONS.get(correction, correction), alpha)
    return {"baseline": baseline, "test": test, "correction": correction, "alpha": alpha,
            "markers": f"vs baseline {baseline}: {note} (in text: ▲ better, ▼ worse)"}
