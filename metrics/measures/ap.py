"""Average precision (trec_eval ``map`` / ``map_cut``) and its geometric mean (``gm_map``).

AP@k = (sum over relevant documents at rank r <= k of P@r) / R, where R is
the number of relevant documents in the qrels (not min(k, R), as trec_eval).
gm_map has AP as its per-query value and summarises queries by the geometric
mean exp(mean(log(max(AP, 1e-5)))), trec_eval's floor for a zero AP.
"""
from __future__ import annotations

from .base import Family
from .context import Context, safe_divide
from .cutoff import BINARY_PARAMS
from .trec_names import TrecMeasure


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
GM_MAP = Family("gm_map", "AP per query, summarised by the geometric mean over queries (AP floored at 1e-5).",
                BINARY_PARAMS, _ap, cutoff="none", aggregate="gmean")

FAMILIES = (AP, GM_MAP)
ALIASES = {"MAP": AP}
TREC = (
    TrecMeasure("map", "plain", lambda p, o: "AP"),
    TrecMeasure("gm_map", "plain", lambda p, o: "gm_map", per_query=False),
    TrecMeasure("map_cut", "cut_long", lambda k, o: f"AP@{k}", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
)
