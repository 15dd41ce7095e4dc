"""Reciprocal rank (trec_eval ``recip_rank``): 1 / rank of the first relevant document.

RR@k is 0 when the first relevant document lies below rank k.
"""
from __future__ import annotations

from .base import Family
from .context import Context
from .cutoff import BINARY_PARAMS
from .trec_names import TrecMeasure


def _first_hits(ctx: Context, level: int):
    """The first relevant document of every query, and 1 / its rank."""
    def build():
        first = ctx.relevant(level).where(ctx.hits(level) == 1)
        return first, 1.0 / (first.pos + 1.0)
    return ctx.cached(("rr", level), build)


def _rr(ctx: Context, m):
    rows, reciprocal = _first_hits(ctx, ctx.level(m))
    return ctx.top_sum(rows, reciprocal, m.cutoff)


def _rr_curve(ctx: Context, m, max_k: int):
    rows, reciprocal = _first_hits(ctx, ctx.level(m))
    return ctx.top_curve(rows, reciprocal, max_k)


RR = Family("RR", "Reciprocal rank of the first relevant document.", BINARY_PARAMS, _rr, _rr_curve)

FAMILIES = (RR,)
ALIASES = {"MRR": RR}
TREC = (TrecMeasure("recip_rank", "plain", lambda p, o: "RR"),)
