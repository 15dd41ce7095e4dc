"""nDCG, DCG and IDCG (Jarvelin & Kekalainen 2002), as trec_eval's ``ndcg_cut``.

DCG@k = sum over ranks r <= k of gain(rel_r) / log2(r + 1). IDCG@k is the
same sum over the qrels' judged documents sorted by gain. nDCG@k = DCG/IDCG,
0 when IDCG is 0. Gains: ``dcg=log2`` uses the grade (trec_eval),
``dcg=exp-log2`` uses 2^rel - 1, ``gains={grade: gain}`` a custom map.
"""
from __future__ import annotations

from .base import Family, Param
from .context import Context, safe_divide

GAIN_PARAMS = {
    "dcg": Param(str, "log2", ("log2", "exp-log2"), "gain function: log2 = grade, exp-log2 = 2^grade - 1"),
    "gains": Param(dict, None, None, "custom gain per grade, e.g. {0:0,1:1,2:3}; other grades keep their value"),
    "judged_only": Param(bool, False, None, "drop unjudged documents first (condensed list)"),
}


def _dcg(ctx: Context, m):
    rows, contributions = ctx.gain_rows(m)
    return ctx.top_sum(rows, contributions, m.cutoff)


def _ndcg(ctx: Context, m):
    return safe_divide(_dcg(ctx, m), ctx.ideal_dcg(m, m.cutoff))


def _idcg(ctx: Context, m):
    return ctx.ideal_dcg(m, m.cutoff)


def _dcg_curve(ctx: Context, m, max_k: int):
    rows, contributions = ctx.gain_rows(m)
    return ctx.top_curve(rows, contributions, max_k)


def _ndcg_curve(ctx: Context, m, max_k: int):
    return safe_divide(_dcg_curve(ctx, m, max_k), ctx.ideal_dcg_curve(m, max_k))


def _idcg_curve(ctx: Context, m, max_k: int):
    return ctx.ideal_dcg_curve(m, max_k)


NDCG = Family("nDCG", "Normalised discounted cumulative gain (Jarvelin & Kekalainen 2002).",
              GAIN_PARAMS, _ndcg, _ndcg_curve)
DCG = Family("DCG", "Discounted cumulative gain: sum of gain / log2(rank + 1).", GAIN_PARAMS, _dcg, _dcg_curve)
IDCG = Family("IDCG", "DCG of the ideal ranking of the judged documents.", GAIN_PARAMS, _idcg, _idcg_curve)

FAMILIES = (NDCG, DCG, IDCG)
