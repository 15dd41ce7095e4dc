"""nDCG averaged over points of the ranking: ndcg_rel and Rndcg (trec_eval, experimental).

With D_i the DCG of the run down to 0-based rank i, I_j the ideal DCG down to
ideal rank j, P the number of positive ideal gains, n the documents retrieved
and R_ret the retrieved documents with a positive gain:

- ndcg_rel = [sum over retrieved i with gain > 0 of D_i / I_min(i, P-1)
  + (P - R_ret) * D_(n-1) / I_(P-1)] / P: nDCG averaged over the relevant
  documents, an unretrieved one counting the nDCG at the end of the list.
- Rndcg = mean of D_min(b-1, n-1) / I_(b-1) over the "R levels" b: the ideal
  ranks where the ideal gain changes (the end of each run of equal gains, the
  last one at b = P), plus D_(n-1) / I_(P-1) when n >= P + 2 (trec_eval's
  implied last level at the end of the list). 0 when no document is relevant
  at the binary level; when no level exists (only with custom gains that are
  all 0) trec_eval divides 0 by 0 and so does this kernel (NaN).

Gains as nDCG (``dcg``, custom ``gains``); the defaults give trec_eval's numbers.
"""
from __future__ import annotations

import numpy as np

from .base import Family
from .context import NAN, Context
from .cutoff import BINARY_PARAMS
from .ndcg import GAIN_PARAMS, gain_spelling
from .segments import lookup_at, segment_accumulate
from .trec_names import TrecMeasure


def running_dcg(ctx: Context, m):
    """Rows with a non-zero gain, their gains and the run's DCG down to each of them."""
    def build():
        rows, gain, contrib = ctx.gain_rows(m)
        return rows, gain, segment_accumulate(rows.query, contrib)
    return ctx.cached(("running_dcg",) + ctx.gain_key(m), build)


def running_ideal(ctx: Context, m):
    """The ideal ranking's positive gains (query, rank, gain, offsets) and the ideal DCG down to each."""
    def build():
        iq, pos, gain, offsets = ctx.ideal_gains(m)
        _, _, contrib = ctx.ideal(m)
        return iq, pos, gain, offsets, segment_accumulate(iq, contrib)
    return ctx.cached(("running_ideal",) + ctx.gain_key(m), build)


def _dcg_at(rows, dcg, query, pos):
    """The run's DCG of ``query`` down to 0-based rank ``pos`` (0 above its first gain)."""
    return lookup_at(rows.query, rows.pos, dcg, query, pos)


def _ndcg_rel(ctx: Context, m):
    rows, gain, dcg = running_dcg(ctx, m)
    _, _, _, offsets, ideal = running_ideal(ctx, m)
    n_pos = np.diff(offsets)
    rel = gain > 0
    q, pos = rows.query[rel], rows.pos[rel]
    at = offsets[q] + np.minimum(pos, n_pos[q] - 1)
    total = np.bincount(q, weights=dcg[rel] / ideal[at], minlength=ctx.n)
    rel_ret = np.bincount(q, minlength=ctx.n)
    queries = np.arange(ctx.n)
    has = n_pos > 0
    end_dcg = _dcg_at(rows, dcg, queries, ctx.lengths - 1)
    end_ideal = np.where(has, ideal[np.maximum(offsets[1:] - 1, 0)] if len(ideal) else 0.0, 1.0)
    total = total + np.where(has, (n_pos - rel_ret) * end_dcg / end_ideal, 0.0)
    return np.where(has & (total > 0), total / np.maximum(n_pos, 1), 0.0)


def _rndcg(ctx: Context, m):
    rows, _, dcg = running_dcg(ctx, m)
    iq, ipos, igain, offsets, ideal = running_ideal(ctx, m)
    n_pos = np.diff(offsets)
    run_end = np.ones(len(igain), dtype=bool)
    if len(igain):
        run_end[:-1] = (igain[1:] != igain[:-1]) | (iq[1:] != iq[:-1])
    ends = np.flatnonzero(run_end)
    q = iq[ends]
    terms = _dcg_at(rows, dcg, q, ipos[ends]) / ideal[ends]
    total = np.bincount(q, weights=terms, minlength=ctx.n)
    count = np.bincount(q, minlength=ctx.n).astype(np.float64)
    queries = np.arange(ctx.n)
    final = (n_pos >= 1) & (ctx.lengths >= n_pos + 2)
    end_ideal = ideal[np.maximum(offsets[1:] - 1, 0)] if len(ideal) else np.ones(ctx.n)
    end_term = _dcg_at(rows, dcg, queries, ctx.lengths - 1) / np.where(final, end_ideal, 1.0)
    total = total + np.where(final, end_term, 0.0)
    count = count + final
    value = np.full(ctx.n, NAN)
    np.divide(total, count, out=value, where=count > 0)
    return np.where(ctx.num_rel(ctx.level(m)) > 0, value, 0.0)


NDCG_REL = Family("ndcg_rel", "nDCG averaged over the relevant documents (trec_eval, experimental).",
                  GAIN_PARAMS, _ndcg_rel, cutoff="none")
RNDCG = Family("Rndcg", "nDCG averaged at the R levels of the ideal ranking (trec_eval, experimental).",
               {**GAIN_PARAMS, "rel": BINARY_PARAMS["rel"]}, _rndcg, cutoff="none")

FAMILIES = (NDCG_REL, RNDCG)
ALIASES: dict[str, Family] = {}
TREC = (
    TrecMeasure("ndcg_rel", "pairs", lambda pairs, o: gain_spelling("ndcg_rel", pairs)),
    TrecMeasure("Rndcg", "pairs", lambda pairs, o: gain_spelling("Rndcg", pairs)),
)
