"""nDCG, DCG and IDCG (Jarvelin & Kekalainen 2002), as trec_eval's ``ndcg`` and ``ndcg_cut``.

DCG@k = sum over ranks r <= k of gain(rel_r) / log2(r + 1). IDCG@k is the
same sum over the qrels' judged documents with gain > 0, sorted by gain.
nDCG@k = DCG/IDCG, 0 when IDCG is 0. Gains: ``dcg=log2`` uses the grade
(trec_eval), ``dcg=exp-log2`` uses 2^rel - 1, ``gains={grade: gain}`` a
custom map (trec_eval's ``ndcg.1=3,2=9``); unjudged documents and negative
grades gain 0 unless the map says otherwise, and a custom gain may be
negative (it then lowers DCG, as in trec_eval). Fractional gains are sorted
exactly for the ideal ranking; trec_eval compares gains truncated to whole
numbers there, so two gains less than 1 apart may come out in either order.
"""
from __future__ import annotations

from ..errors import MetricsError
from .base import Family, Param
from .context import Context, safe_divide
from .trec_names import TrecMeasure, is_int

GAIN_PARAMS = {
    "dcg": Param(str, "log2", ("log2", "exp-log2"), "gain function: log2 = grade, exp-log2 = 2^grade - 1"),
    "gains": Param(dict, None, None, "custom gain per grade, e.g. {0:0,1:1,2:3}; other grades keep their gain"),
    "judged_only": Param(bool, False, None, "drop unjudged documents first (condensed list)"),
}


def gains_from_pairs(pairs, name: str) -> dict[int, float]:
    """Gain per grade from trec_eval's ``level=gain`` pairs (other names, such as p, are skipped)."""
    gains: dict[int, float] = {}
    for key, value in pairs:
        if not is_int(key):
            continue
        level = int(key)
        if level < 0:
            raise MetricsError(f"{name}: trec_eval gives a gain for level {level} to unjudged documents "
                               "(-1: not in the qrels, -2: judged with a negative grade)",
                               fix="give gains for grades 0 and above")
        gains.setdefault(level, float(value))
    return gains


def gain_spelling(family: str, pairs, extra: str = "") -> str:
    """Our spelling of a gain-based trec_eval measure: ``nDCG(gains={1:3.0,2:9.0})``."""
    gains = gains_from_pairs(pairs, family)
    params = [f"gains={{{','.join(f'{k}:{v!r}' for k, v in gains.items())}}}"] if gains else []
    if extra:
        params.append(extra)
    return family + (f"({','.join(params)})" if params else "")


def _dcg(ctx: Context, m):
    rows, _, contributions = ctx.gain_rows(m)
    return ctx.top_sum(rows, contributions, m.cutoff)


def _ndcg(ctx: Context, m):
    return safe_divide(_dcg(ctx, m), ctx.ideal_dcg(m, m.cutoff))


def _idcg(ctx: Context, m):
    return ctx.ideal_dcg(m, m.cutoff)


def _dcg_curve(ctx: Context, m, max_k: int):
    rows, _, contributions = ctx.gain_rows(m)
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
ALIASES = {"ndcg": NDCG}
TREC = (
    TrecMeasure("dcg", "pairs", lambda pairs, o: gain_spelling("DCG", pairs), shared="ndcg"),
    TrecMeasure("ideal_dcg", "pairs", lambda pairs, o: gain_spelling("IDCG", pairs), shared="ndcg"),
    TrecMeasure("ndcg", "pairs", lambda pairs, o: gain_spelling("nDCG", pairs), shared="ndcg"),
    TrecMeasure("ndcg_cut", "cut_long", lambda k, o: f"nDCG@{k}", (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
)
