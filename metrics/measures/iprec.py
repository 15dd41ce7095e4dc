"""Interpolated precision at recall levels (trec_eval ``iprec_at_recall``) and ``11pt_avg``.

IPrec@x = max over ranks r' >= r_c of P@r', where r_c is the rank of the c-th
relevant document and c = round(x * R) (trec_eval 10 rounds half away from
zero; 9.0.8, bundled in pytrec_eval, used floor(x * R + 0.9)); 0 when fewer
than c relevant documents were retrieved. For c = 0 it is the best precision
anywhere in the list (0 when nothing relevant was retrieved, and 0/0 = NaN
when the list is empty, as in trec_eval under -J).
11pt_avg(levels=...) is the mean of IPrec over the levels, default 0, 0.1, ..., 1.
"""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from .base import Family, Param
from .context import NAN, Context
from .cutoff import BINARY_PARAMS
from .segments import segment_reverse_max
from .trec_names import TrecMeasure

ELEVEN_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _lround(x: np.ndarray) -> np.ndarray:
    """C's lround for x >= 0: halves away from zero (x - floor(x) is exact)."""
    whole = np.floor(x)
    return (whole + (x - whole >= 0.5)).astype(np.int64)


ROUNDINGS = ("trec_eval10", "trec_eval9")
"""How a recall level x becomes a count c of relevant documents: lround(x R) in trec_eval 10,
(long)(x R + 0.9) in 9.0.8 and before (pytrec_eval, ir_measures, PyTerrier), as trec_eval 10's
m_iprec_at_recall.c and m_11pt_avg.c state; tests/metrics/test_parity.py checks it on pytrec_eval."""


def interpolated_precision(ctx: Context, levels, level: int | None = None, *,
                           rounding: str = "trec_eval10") -> np.ndarray:
    """(queries x levels) interpolated precision at each recall level, for all queries at once.

    ``rounding`` (one of :data:`ROUNDINGS`) picks the cut-off rule of trec_eval 10 or of 9.0.8.
    """
    if rounding not in ROUNDINGS:
        raise MetricsError(f"rounding={rounding!r} is not an option", fix=f"use one of {', '.join(ROUNDINGS)}")
    level = ctx.rel_level if level is None else int(level)
    levels = np.asarray(levels, dtype=np.float64).reshape(-1)
    rel = ctx.relevant(level)
    best_from = ctx.cached(("iprec_best", level),  # shared by every recall level
                           lambda: segment_reverse_max(rel.query, ctx.hits(level) / (rel.pos + 1.0)))
    num_ret, rel_ret, num_rel = ctx.counts(level)
    share = levels[None, :] * num_rel[:, None]
    needed = _lround(share) if rounding == "trec_eval10" else np.floor(share + 0.9).astype(np.int64)
    first = np.searchsorted(rel.query, np.arange(ctx.n), side="left")
    nth = np.maximum(needed, 1)
    found = nth <= rel_ret[:, None]
    at = np.minimum(first[:, None] + nth - 1, max(len(best_from) - 1, 0))
    out = np.where(found, best_from[at] if len(best_from) else 0.0, 0.0)
    # trec_eval sees an empty list where the run has none, except a missing query without -J
    # (there it scores one unjudged placeholder document)
    empty = (num_ret == 0) & (~ctx.ranked.missing | ctx.judged_only)
    return np.where((needed == 0) & empty[:, None], NAN, out)


def _iprec(ctx: Context, m):
    return interpolated_precision(ctx, [m.cutoff], ctx.level(m))[:, 0]


def _eleven_point(ctx: Context, m):
    levels = m.param("levels")
    values = interpolated_precision(ctx, levels, ctx.level(m))
    total = np.zeros(ctx.n)
    for column in range(len(levels) - 1, -1, -1):  # trec_eval adds from the highest level down
        total = total + values[:, column]
    return total / len(levels)


IPREC = Family("IPrec", "Interpolated precision at a recall level: the best precision at or below the rank "
               "where that share of the relevant documents is reached.", BINARY_PARAMS, _iprec,
               cutoff="required", cutoff_type=float)
ELEVEN_PT = Family("11pt_avg", "Mean interpolated precision over recall levels (default 0, 0.1, ..., 1).",
                   {**BINARY_PARAMS, "levels": Param(tuple, ELEVEN_POINTS, None, "recall levels")},
                   _eleven_point, cutoff="none")

FAMILIES = (IPREC, ELEVEN_PT)
ALIASES: dict[str, Family] = {}


def _levels(values) -> str:
    levels = tuple(sorted(values))
    return "11pt_avg" if levels == ELEVEN_POINTS else f"11pt_avg(levels=({','.join(map(repr, levels))},))"


TREC = (
    TrecMeasure("iprec_at_recall", "cut_double", lambda x, o: f"IPrec@{x!r}", ELEVEN_POINTS),
    TrecMeasure("11pt_avg", "params", lambda values, o: _levels(values), ELEVEN_POINTS),
)
