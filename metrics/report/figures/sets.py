"""The figures a command writes, by name: an evaluation's bars per measure, and a comparison's
per-query differences. Names are file stems (:func:`file_stem`); :mod:`.files` writes them."""
from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from ...stats import per_query
from .compare import delta_bars, delta_histogram, paired_scatter
from .curves import leaderboard_bars

__all__ = ["comparison_figures", "evaluation_figures", "file_stem"]


def file_stem(*parts: str) -> str:
    """A file name of words: every run of characters other than letters, digits, ``.``, ``_`` and ``-``
    becomes one ``-`` (``nDCG(dcg='exp-log2')@10`` -> ``nDCG-dcg-exp-log2-10``)."""
    return "_".join(re.sub(r"[^A-Za-z0-9._-]+", "-", str(p)).strip("-.") or "x" for p in parts)


def _unique(figures: dict, stem: str) -> str:
    name, n = stem, 2
    while name in figures:
        name, n = f"{stem}-{n}", n + 1
    return name


def evaluation_figures(means_table: pd.DataFrame) -> dict:
    """``{stem: figure}``: a bar per system of each measure of ``means_table`` (index system,
    columns measures: :func:`metrics.means`), named ``means_<measure>``."""
    figures: dict = {}
    for measure in means_table.columns:
        figures[_unique(figures, file_stem("means", measure))] = leaderboard_bars(means_table, str(measure))
    return figures


def comparison_figures(frame: pd.DataFrame, baseline: str, systems: Sequence[str], measures: Sequence[str]) -> dict:
    """``{stem: figure}``: for each measure and system against the baseline, the per-query
    differences sorted (``delta_…``), the paired scatter (``scatter_…``) and their histogram (``hist_…``).
    ``frame`` is the tidy frame of :func:`metrics.evaluate`."""
    figures: dict = {}
    for measure in measures:
        for system in systems:
            rows = per_query(frame, measure, baseline, system)
            for kind, build in (("delta", delta_bars), ("scatter", paired_scatter), ("hist", delta_histogram)):
                figures[_unique(figures, file_stem(kind, measure, system))] = build(
                    rows, measure=measure, baseline=baseline, system=system)
    return figures
