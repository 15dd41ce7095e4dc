"""Counts: NumQ, NumRet, NumRel, NumRelRet and num_nonrel_judged_ret, summed over queries.

Per query: NumQ = 1 (its sum is the number of queries averaged over);
NumRet = documents retrieved; NumRel = documents in the qrels with grade >= rel;
NumRelRet = relevant documents retrieved; num_nonrel_judged_ret = retrieved
documents judged with 0 <= grade < rel. Summaries are sums, as in trec_eval.
Under -c trec_eval's summary of num_rel counts every qrels line with a grade
> 0, whatever -l says (``complete_summary`` below); per query it honours -l.
"""
from __future__ import annotations

import numpy as np

from .base import Family
from .context import Context
from .cutoff import BINARY_PARAMS, rel_count
from .trec_names import TrecMeasure


def _num_q(ctx: Context, m):
    return np.ones(ctx.n, dtype=np.float64)


def _num_ret(ctx: Context, m):
    return ctx.retrieved_upto(m.cutoff)


def _num_rel(ctx: Context, m):
    return ctx.num_rel(ctx.level(m)).copy()


def _num_nonrel_judged_ret(ctx: Context, m):
    level = ctx.level(m)
    pooled = ctx.pooled()
    return ctx.top_sum(pooled, ctx.ranked.rel[pooled.rows] < level)


_JUDGED_ONLY = {"judged_only": BINARY_PARAMS["judged_only"]}

NUM_Q = Family("NumQ", "Number of queries (1 per query, summed).", {}, _num_q, cutoff="none", aggregate="sum")
NUM_REL = Family("NumRel", "Number of relevant documents in the qrels (summed over queries).",
                 {"rel": BINARY_PARAMS["rel"]}, _num_rel, cutoff="none", aggregate="sum")
NUM_REL_RET = Family("NumRelRet", "Number of relevant documents retrieved (summed over queries).",
                     BINARY_PARAMS, rel_count, aggregate="sum")
# ir_measures counts relevant retrieved documents as NumRet(rel=1): with rel, NumRet is NumRelRet.
NUM_RET = Family("NumRet", "Number of documents retrieved (summed over queries); NumRet(rel=r) is NumRelRet(rel=r).",
                 _JUDGED_ONLY, _num_ret, aggregate="sum", routes={"rel": NUM_REL_RET})
NUM_NONREL_JUDGED_RET = Family("num_nonrel_judged_ret", "Number of retrieved documents judged non-relevant "
                               "(0 <= grade < rel), summed over queries.", BINARY_PARAMS, _num_nonrel_judged_ret,
                               cutoff="none", aggregate="sum")

FAMILIES = (NUM_Q, NUM_RET, NUM_REL, NUM_REL_RET, NUM_NONREL_JUDGED_RET)
ALIASES: dict[str, Family] = {}


def _positive_judgments(grades: np.ndarray) -> float:
    return float(np.count_nonzero(np.asarray(grades) > 0))


TREC = (
    TrecMeasure("num_q", "plain", lambda p, o: "NumQ", value="long", per_query=False),
    TrecMeasure("num_ret", "plain", lambda p, o: "NumRet", value="long"),
    TrecMeasure("num_rel", "plain", lambda p, o: "NumRel", value="long", complete_summary=_positive_judgments),
    TrecMeasure("num_rel_ret", "plain", lambda p, o: "NumRelRet", value="long"),
    TrecMeasure("num_nonrel_judged_ret", "plain", lambda p, o: "num_nonrel_judged_ret", value="long"),
)
