"""Measures at a rank cutoff k: P, R, Success, relative_P, unj and Judged.

With R relevant documents in the qrels and rel@k relevant among the top k:

- P@k = rel@k / k, dividing by k even when fewer than k were retrieved (trec_eval ``P``);
- R@k = rel@k / R (trec_eval ``recall``);
- Success@k = 1 if rel@k > 0 else 0 (trec_eval ``success``);
- relative_P@k = rel@k / min(k, R): precision relative to the best possible (trec_eval ``relative_P``);
- unj@k = (documents in the top k that are unjudged or judged with a negative grade) / k (trec_eval ``unj``);
- Judged@k = (top-k documents the qrels hold, any grade) / min(k, retrieved), as ir_measures.

Each is 0 when its divisor is 0.
"""
from __future__ import annotations

import numpy as np

from .base import Family, Param
from .context import Context, safe_divide
from .trec_names import TrecMeasure

BINARY_PARAMS = {
    "rel": Param(int, None, None, "minimum grade that counts as relevant (default: the -l level, 1)"),
    "judged_only": Param(bool, False, None, "drop unjudged documents first (condensed list)"),
}
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


def rel_count(ctx: Context, m, cutoff=None):
    """Relevant documents retrieved, per query (within ``cutoff``, default the measure's)."""
    return ctx.top_sum(ctx.relevant(ctx.level(m)), 1.0, m.cutoff if cutoff is None else cutoff)


def _rel_curve(ctx: Context, m, max_k: int):
    return ctx.top_curve(ctx.relevant(ctx.level(m)), 1.0, max_k)


def _ks(max_k: int):
    return np.arange(1, max_k + 1, dtype=np.float64)[None, :]


def _p(ctx, m):
    return rel_count(ctx, m) / m.cutoff


def _p_curve(ctx, m, max_k):
    return _rel_curve(ctx, m, max_k) / _ks(max_k)


def _r(ctx, m):
    return safe_divide(rel_count(ctx, m), ctx.num_rel(ctx.level(m)))


def _r_curve(ctx, m, max_k):
    return safe_divide(_rel_curve(ctx, m, max_k), ctx.num_rel(ctx.level(m))[:, None])


def _success(ctx, m):
    return (rel_count(ctx, m) > 0).astype(np.float64)


def _success_curve(ctx, m, max_k):
    return (_rel_curve(ctx, m, max_k) > 0).astype(np.float64)


def _relative_p(ctx, m):
    num_rel = ctx.num_rel(ctx.level(m))
    return safe_divide(rel_count(ctx, m), np.minimum(num_rel, m.cutoff))


def _relative_p_curve(ctx, m, max_k):
    num_rel = ctx.num_rel(ctx.level(m))[:, None]
    return safe_divide(_rel_curve(ctx, m, max_k), np.minimum(num_rel, _ks(max_k)))


def _unjudged(ctx, m):
    """Unjudged in the top k: retrieved there minus those judged with a grade >= 0."""
    return (ctx.retrieved_upto(m.cutoff) - ctx.top_sum(ctx.pooled(), 1.0, m.cutoff)) / m.cutoff


def _unjudged_curve(ctx, m, max_k):
    return (ctx.num_ret_upto(max_k) - ctx.top_curve(ctx.pooled(), 1.0, max_k)) / _ks(max_k)


def _truly_judged(ctx: Context):
    """Documents the real qrels judge (proxy labels excluded)."""
    def build():
        labelled = ctx.labelled()
        return labelled.where(~ctx.ranked.inferred[labelled.rows])
    return ctx.cached("truly_judged", build)


def _judged(ctx, m):
    judged = ctx.top_sum(_truly_judged(ctx), 1.0, m.cutoff)
    return safe_divide(judged, np.minimum(ctx.lengths, m.cutoff))


def _judged_curve(ctx, m, max_k):
    return safe_divide(ctx.top_curve(_truly_judged(ctx), 1.0, max_k), ctx.num_ret_upto(max_k))


P = Family("P", "Precision at k: relevant documents in the top k, divided by k.", BINARY_PARAMS, _p, _p_curve,
           cutoff="required")
R = Family("R", "Recall at k: relevant documents in the top k, divided by all relevant documents.",
           BINARY_PARAMS, _r, _r_curve, cutoff="required")
SUCCESS = Family("Success", "1 if a relevant document is in the top k, else 0.", BINARY_PARAMS, _success,
                 _success_curve, cutoff="required")
RELATIVE_P = Family("relative_P", "Relevant documents in the top k divided by min(k, R): precision relative "
                    "to the best possible at k.", BINARY_PARAMS, _relative_p, _relative_p_curve, cutoff="required")
UNJ = Family("unj", "Share of the top k (divided by k) that is unjudged or judged with a negative grade.",
             {"judged_only": BINARY_PARAMS["judged_only"]}, _unjudged, _unjudged_curve, cutoff="required")
JUDGED = Family("Judged", "Share of the top k (or of all retrieved, if fewer) that the qrels judge.",
                {}, _judged, _judged_curve, cutoff="required")

FAMILIES = (P, R, SUCCESS, RELATIVE_P, UNJ, JUDGED)
ALIASES = {"Precision": P, "Recall": R}
TREC = (
    TrecMeasure("P", "cut_long", lambda k, o: f"P@{k}", DEFAULT_CUTOFFS),
    TrecMeasure("recall", "cut_long", lambda k, o: f"R@{k}", DEFAULT_CUTOFFS),
    TrecMeasure("success", "cut_long", lambda k, o: f"Success@{k}", (1, 5, 10)),
    TrecMeasure("relative_P", "cut_long", lambda k, o: f"relative_P@{k}", DEFAULT_CUTOFFS),
    TrecMeasure("unj", "cut_long", lambda k, o: f"unj@{k}", (5, 10, 20)),
)
