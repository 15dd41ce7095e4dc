"""Counting measures over the top k: P, R, Rprec, Success, Judged, NumRet, NumRel, NumRelRet.

P@k divides by k even when fewer than k documents were retrieved (trec_eval).
R@k divides by the number of relevant documents R; Rprec is P@R.
Judged@k divides by min(k, retrieved), as ir_measures; a document counts as
judged when the qrels hold it (any grade), proxy labels excluded.
NumRet, NumRel and NumRelRet are summed over queries, not averaged (trec_eval).
"""
from __future__ import annotations

import numpy as np

from .ap import BINARY_PARAMS
from .base import Family
from .context import Context, safe_divide


def _rel_count(ctx: Context, m):
    return ctx.top_sum(ctx.relevant(ctx.level(m)), 1.0, m.cutoff)


def _rel_curve(ctx: Context, m, max_k: int):
    return ctx.top_curve(ctx.relevant(ctx.level(m)), 1.0, max_k)


def _ks(max_k: int):
    return np.arange(1, max_k + 1, dtype=np.float64)[None, :]


def _p(ctx, m):
    return _rel_count(ctx, m) / m.cutoff


def _p_curve(ctx, m, max_k):
    return _rel_curve(ctx, m, max_k) / _ks(max_k)


def _r(ctx, m):
    return safe_divide(_rel_count(ctx, m), ctx.num_rel(ctx.level(m)))


def _r_curve(ctx, m, max_k):
    return safe_divide(_rel_curve(ctx, m, max_k), ctx.num_rel(ctx.level(m))[:, None])


def _rprec(ctx, m):
    level = ctx.level(m)
    num_rel = ctx.num_rel(level)
    rows = ctx.relevant(level)
    hits = ctx.top_sum(rows, rows.pos < num_rel[rows.query])
    return safe_divide(hits, num_rel)


def _success(ctx, m):
    return (_rel_count(ctx, m) > 0).astype(np.float64)


def _success_curve(ctx, m, max_k):
    return (_rel_curve(ctx, m, max_k) > 0).astype(np.float64)


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


def _num_ret(ctx, m):
    lengths = ctx.lengths.astype(np.float64)
    return lengths if m.cutoff is None else np.minimum(lengths, m.cutoff)


def _num_rel(ctx, m):
    return ctx.num_rel(ctx.level(m)).copy()


_JUDGED_ONLY = {"judged_only": BINARY_PARAMS["judged_only"]}

P = Family("P", "Precision at k: relevant documents in the top k, divided by k.", BINARY_PARAMS, _p, _p_curve,
           cutoff="required")
R = Family("R", "Recall at k: relevant documents in the top k, divided by all relevant documents.",
           BINARY_PARAMS, _r, _r_curve, cutoff="required")
RPREC = Family("Rprec", "Precision at rank R, R = number of relevant documents.", BINARY_PARAMS, _rprec,
               cutoff="none")
SUCCESS = Family("Success", "1 if a relevant document is in the top k, else 0.", BINARY_PARAMS, _success,
                 _success_curve, cutoff="required")
JUDGED = Family("Judged", "Share of the top k (or of all retrieved, if fewer) that the qrels judge.",
                {}, _judged, _judged_curve, cutoff="required")
NUM_RET = Family("NumRet", "Number of documents retrieved (summed over queries).", _JUDGED_ONLY, _num_ret,
                 aggregate="sum")
NUM_REL = Family("NumRel", "Number of relevant documents in the qrels (summed over queries).",
                 {"rel": BINARY_PARAMS["rel"]}, _num_rel, cutoff="none", aggregate="sum")
NUM_REL_RET = Family("NumRelRet", "Number of relevant documents retrieved (summed over queries).",
                     BINARY_PARAMS, _rel_count, aggregate="sum")

FAMILIES = (P, R, RPREC, SUCCESS, JUDGED, NUM_RET, NUM_REL, NUM_REL_RET)
