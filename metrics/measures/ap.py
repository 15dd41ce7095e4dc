"""Average precision (trec_eval ``map`` / ``map_cut``).

AP@k = (sum over relevant documents at rank r <= k of P@r) / R, where R is
the number of relevant documents in the qrels (not min(k, R), as trec_eval).
"""
from __future__ import annotations

from .base import Family, Param
from .context import Context, safe_divide

BINARY_PARAMS = {
    "rel": Param(int, None, None, "minimum grade that counts as relevant (default: the -l level, 1)"),
    "judged_only": Param(bool, False, None, "drop unjudged documents first (condensed list)"),
}


def _precision_at_hits(ctx: Context, level: int):
    """P@rank at every relevant document: relevant so far / rank."""
    return ctx.cached(("prec_at_hits", level), lambda: ctx.hits(level) / (ctx.relevant(level).pos + 1.0))


def _ap(ctx: Context, m):
    level = ctx.level(m)
    return safe_divide(ctx.top_sum(ctx.relevant(level), _precision_at_hits(ctx, level), m.cutoff),
                       ctx.num_rel(level))


def _ap_curve(ctx: Context, m, max_k: int):
    level = ctx.level(m)
    return safe_divide(ctx.top_curve(ctx.relevant(level), _precision_at_hits(ctx, level), max_k),
                       ctx.num_rel(level)[:, None])


AP = Family("AP", "Average precision (mean over relevant documents of the precision at their rank).",
            BINARY_PARAMS, _ap, _ap_curve)

FAMILIES = (AP,)
