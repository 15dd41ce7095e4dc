"""Rank-biased precision (Moffat & Zobel 2008) and its residual (trec_eval ``rbp``, ``rbp_resid``).

RBP(p)@k = (1 - p) * sum over 0-based ranks i < k of g_i * p^i.

Gains: with ``rel=r``, g = 1 for grade >= r, else 0 (binary). Without ``rel``
(the default, as trec_eval) g is the document's grade, or its custom gain,
rescaled per query as trec_eval does: over the gains of the grades 0..max
grade of the query's qrels and of every grade in a custom map, with
lo = min(0, those gains) and hi = max(0, those gains), g becomes
(g - lo) / (hi - lo) when lo < 0 or hi > 1. Unjudged documents and negative
grades gain 0. So grades 0..4 give gains grade / 4 when the query has a 4,
and binary grades are left as they are.

rbp_resid(p)@k = 1 - (1 - p) * sum over judged ranks i < n of p^i, n =
min(k, retrieved): the most RBP could still rise if every unjudged document
in the list had gain 1 (equal to p^n + (1 - p) * sum over unjudged i of p^i);
0 when the list holds no unjudged document (trec_eval's rule). "Judged" here
means a grade >= 0, as in trec_eval.

RBP's default p is ir_measures' 0.8; trec_eval's ``rbp`` is RBP(p=0.9) and
``rbp_resid`` defaults to p = 0.9 like trec_eval.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Param
from .context import Context
from .ndcg import gain_spelling
from .trec_names import TrecMeasure

_P = "persistence: the chance that the user looks at the next document"


def _level_gains(ctx: Context, m, grade: np.ndarray, query: np.ndarray) -> np.ndarray:
    """trec_eval's rescaled gain of each (grade >= 0) document."""
    gains = m.param("gains") or {}
    gain = grade.astype(np.float64)
    for level, value in gains.items():
        gain[grade == level] = value
    max_grade = ctx.max_grade()
    # the highest grade <= the query's maximum that keeps its own gain (not in the custom map)
    own = max_grade.copy()
    for _ in range(len(gains)):
        own = np.where(np.isin(own, list(gains)), own - 1, own)
    custom = np.array(list(gains.values()), dtype=np.float64)
    hi = np.maximum(np.maximum(own, 0).astype(np.float64), custom.max(initial=0.0))
    lo = np.minimum(0.0, custom.min(initial=0.0))
    lo = np.full(ctx.n, lo)
    rescale = (lo < 0) | (hi > 1)
    span = np.where(rescale, hi - lo, 1.0)
    return np.where(rescale[query], (gain - lo[query]) / span[query], gain)


def _rbp_rows(ctx: Context, m):
    pooled = ctx.pooled()
    grade = ctx.ranked.rel[pooled.rows]
    rel = m.param("rel")
    gain = (grade >= rel).astype(np.float64) if rel is not None else _level_gains(ctx, m, grade, pooled.query)
    return pooled, gain


def _rbp(ctx: Context, m):
    p = m.param("p")
    rows, gain = _rbp_rows(ctx, m)
    return (1.0 - p) * ctx.top_sum(rows, gain * np.power(p, rows.pos), m.cutoff)


def _rbp_curve(ctx: Context, m, max_k: int):
    p = m.param("p")
    rows, gain = _rbp_rows(ctx, m)
    return (1.0 - p) * ctx.top_curve(rows, gain * np.power(p, rows.pos), max_k)


def _rbp_resid(ctx: Context, m):
    p = m.param("p")
    pooled = ctx.pooled()
    judged = ctx.top_sum(pooled, 1.0, m.cutoff)
    judged_weight = ctx.top_sum(pooled, np.power(p, pooled.pos), m.cutoff)
    unjudged = ctx.retrieved_upto(m.cutoff) - judged
    return np.where(unjudged > 0, 1.0 - (1.0 - p) * judged_weight, 0.0)


_JUDGED_ONLY = Param(bool, False, None, "drop unjudged documents first (condensed list)")
RBP = Family("RBP", "Rank-biased precision: (1 - p) * sum of gain * p^(rank - 1).",
             {"p": Param(float, 0.8, None, _P),
              "rel": Param(int, None, None, "binary: minimum grade with gain 1 (default: graded, as trec_eval)"),
              "gains": Param(dict, None, None, "custom gain per grade (rescaled as trec_eval's rbp)"),
              "judged_only": _JUDGED_ONLY},
             _rbp, _rbp_curve)
RBP_RESID = Family("rbp_resid", "Residual of RBP: how much RBP could rise if unjudged documents had gain 1.",
                   {"p": Param(float, 0.9, None, _P), "judged_only": _JUDGED_ONLY}, _rbp_resid)

FAMILIES = (RBP, RBP_RESID)
ALIASES: dict[str, Family] = {}


def _p_of(pairs) -> float:
    p = 0.9
    for key, value in pairs:
        if key == "p":
            p = value
    return p


TREC = (
    TrecMeasure("rbp", "pairs", lambda pairs, o: gain_spelling("RBP", pairs, f"p={_p_of(pairs)!r}")),
    TrecMeasure("rbp_resid", "pairs", lambda pairs, o: f"rbp_resid(p={_p_of(pairs)!r})"),
)
