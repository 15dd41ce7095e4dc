"""Reciprocal rank (trec_eval ``recip_rank``): 1 / rank of the first relevant document.

RR@k is 0 when the first relevant document lies below rank k.
"""
from __future__ import annotations

from .ap import BINARY_PARAMS
from .base import Family
from .context import Context


def _first_hit_reciprocal(ctx: Context, level: int):
    def build():
        first = ctx.relevant(level) & (ctx.hits(level) == 1)
        return first / (ctx.pos + 1.0)
    return ctx.cached(("rr", level), build)


def _rr(ctx: Context, m):
    level = ctx.level(m)
    return ctx.seg_sum(_first_hit_reciprocal(ctx, level), m.cutoff, key=("rr", level))


def _rr_curve(ctx: Context, m, max_k: int):
    return ctx.dense_cumsum(_first_hit_reciprocal(ctx, ctx.level(m)), max_k)


RR = Family("RR", "Reciprocal rank of the first relevant document.", BINARY_PARAMS, _rr, _rr_curve)

FAMILIES = (RR,)
