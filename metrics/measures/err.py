"""Expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan 2009), as gdeval and ir_measures.

ERR@k = sum over 1-based ranks r <= k of (1/r) * R_r * prod over j < r of (1 - R_j),
with the stopping probability R = (2^g - 1) / 2^max_grade for a document of
grade g (0 for unjudged documents and grades <= 0). ``max_grade`` defaults to
4, gdeval's fixed maximum (TREC Web track grades 0..4), which ir_measures'
ERR uses; grades above it count as max_grade.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Param
from .context import Context
from .segments import segment_accumulate


def _terms(ctx: Context, m):
    """Documents with a positive grade and their terms R_r * prod (1 - R_j) / r."""
    def build():
        labelled = ctx.labelled()
        grade = ctx.ranked.rel[labelled.rows]
        positive = grade > 0
        rows = labelled.where(positive)
        top = m.param("max_grade")
        stop = (np.exp2(np.minimum(grade[positive], top).astype(np.float64)) - 1.0) / 2.0 ** top
        kept = segment_accumulate(rows.query, 1.0 - stop, np.multiply)  # prod of (1 - R_j) for j <= r
        before = np.ones(len(rows))
        same = rows.query[1:] == rows.query[:-1]
        before[1:] = np.where(same, kept[:-1], 1.0)
        return rows, stop * before / (rows.pos + 1.0)
    return ctx.cached(("err", m.param("max_grade")), build)


def _err(ctx: Context, m):
    rows, terms = _terms(ctx, m)
    return ctx.top_sum(rows, terms, m.cutoff)


def _err_curve(ctx: Context, m, max_k: int):
    rows, terms = _terms(ctx, m)
    return ctx.top_curve(rows, terms, max_k)


ERR = Family("ERR", "Expected reciprocal rank: a cascade user who stops at a document with "
             "probability (2^grade - 1) / 2^max_grade.",
             {"max_grade": Param(int, 4, None, "grade with stopping probability (2^g - 1)/2^g (gdeval: 4)"),
              "judged_only": Param(bool, False, None, "drop unjudged documents first (condensed list)")},
             _err, _err_curve)

FAMILIES = (ERR,)
ALIASES: dict[str, Family] = {}
TREC = ()
