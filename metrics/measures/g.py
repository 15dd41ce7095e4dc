"""G and binG: gain-based measures that combine AP and nDCG (trec_eval, experimental).

With g_i the gain of the document at 0-based rank i, S_i = g_0 + ... + g_i,
the ideal ranking's positive gains IG_0 >= IG_1 >= ... (P of them) and the
cost C_i = sum over j <= i of max(IG_j, 1) (IG_j = 0 past the P-th):

- G = [sum over i with g_i != 0 of g_i / log2(2 + C_i - S_i)] / (IG_0 + ... + IG_(P-1));
- binG = [sum over relevant documents at rank i (1-based) of 1 / log2(1 + i - h_i + 1)] / R,
  h_i = relevant documents down to rank i, i.e. 1 / log2(2 + non-relevant documents above it).

Gains for G as nDCG (``dcg``, custom ``gains``); binG is binary (``rel``).
"""
from __future__ import annotations

import numpy as np

from .base import Family
from .context import Context, safe_divide
from .cutoff import BINARY_PARAMS
from .ndcg import GAIN_PARAMS, gain_spelling
from .segments import segment_accumulate
from .trec_names import TrecMeasure


def _g(ctx: Context, m):
    rows, gain, _ = ctx.gain_rows(m)
    results = segment_accumulate(rows.query, gain)
    iq, _, igain, offsets = ctx.ideal_gains(m)
    excess = segment_accumulate(iq, np.maximum(igain - 1.0, 0.0))
    n_pos = np.diff(offsets)
    q, pos = rows.query, rows.pos
    has = n_pos[q] > 0
    at = np.where(has, offsets[q] + np.minimum(pos, n_pos[q] - 1), 0)
    cost = (pos + 1.0) + (np.where(has, excess[at], 0.0) if len(excess) else 0.0)
    terms = gain / np.log2(2.0 + cost - results)
    return safe_divide(np.bincount(q, weights=terms, minlength=ctx.n),
                       np.bincount(iq, weights=igain, minlength=ctx.n))


def _bing(ctx: Context, m):
    level = ctx.level(m)
    rel = ctx.relevant(level)
    terms = 1.0 / np.log2(3.0 + rel.pos - ctx.hits(level))
    return safe_divide(ctx.top_sum(rel, terms), ctx.num_rel(level))


G = Family("G", "Normalised gain G: each gain discounted by log2(2 + ideal cost - gain so far).",
           GAIN_PARAMS, _g, cutoff="none")
BING = Family("binG", "Binary G: mean over relevant documents of 1 / log2(2 + non-relevant above it).",
              BINARY_PARAMS, _bing, cutoff="none")

FAMILIES = (G, BING)
ALIASES: dict[str, Family] = {}
TREC = (
    TrecMeasure("binG", "plain", lambda p, o: "binG"),
    TrecMeasure("G", "pairs", lambda pairs, o: gain_spelling("G", pairs)),
)
