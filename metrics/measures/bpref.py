"""Measures for incomplete judgments: Bpref, gm_bpref and infAP (trec_eval ``bpref``, ``infAP``).

Only judged documents count; a negative grade means "pooled but unjudged"
(trec_eval's convention). With R relevant and N judged non-relevant documents
(0 <= grade < rel) in the qrels, and for a relevant document n of the judged
non-relevant documents ranked above it:

- Bpref = (1/R) * sum over retrieved relevant documents of
  (1 - min(n, R) / min(N, R)) if n > 0 else 1 (Buckley & Voorhees 2004);
- gm_bpref: Bpref per query, summarised by the geometric mean (floored at 1e-5);
- infAP = (1/R) * sum over retrieved relevant documents at 0-based rank j of
  1 if j = 0, else 1/(j+1) + (j/(j+1)) * ((r + n + u)/j) * ((r + e)/(r + n + 2e)),
  with r relevant and u pooled-but-unjudged documents above it and e = 1e-5
  (Yilmaz & Aslam 2006, trec_eval's estimator).
"""
from __future__ import annotations

import numpy as np

from .base import Family
from .context import Context, safe_divide
from .cutoff import BINARY_PARAMS
from .segments import segment_count
from .trec_names import TrecMeasure

INFAP_EPSILON = 1e-5
_REL = {"rel": BINARY_PARAMS["rel"]}


def _judged_counts(ctx: Context, level: int):
    """Judged documents in rank order: query, rank, and per relevant one the counts above it."""
    def build():
        labelled = ctx.labelled()
        grade = ctx.ranked.rel[labelled.rows]
        unjudged = grade < 0
        nonrel = (grade >= 0) & (grade < level)
        rel = (grade >= 0) & (grade >= level)
        q = labelled.query
        above = {name: segment_count(q, flags, inclusive=False)[rel]
                 for name, flags in (("rel", rel), ("nonrel", nonrel), ("unjudged", unjudged))}
        return q[rel], labelled.pos[rel].astype(np.float64), above
    return ctx.cached(("judged_counts", level), build)


def _bpref(ctx: Context, m):
    level = ctx.level(m)
    q, _, above = _judged_counts(ctx, level)
    num_rel, num_nonrel = ctx.num_rel(level), ctx.num_nonrel(level)
    nonrel = above["nonrel"].astype(np.float64)
    bound = np.minimum(num_nonrel, num_rel)[q]
    share = np.divide(np.minimum(nonrel, num_rel[q]), bound, out=np.zeros(len(q)), where=bound > 0)
    terms = np.where(nonrel > 0, 1.0 - share, 1.0)
    return safe_divide(np.bincount(q, weights=terms, minlength=ctx.n), num_rel)


def _infap(ctx: Context, m):
    level = ctx.level(m)
    q, j, above = _judged_counts(ctx, level)
    r, n, u = (above[k].astype(np.float64) for k in ("rel", "nonrel", "unjudged"))
    safe_j = np.maximum(j, 1.0)
    later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r + n + u) / safe_j)
             * ((r + INFAP_EPSILON) / (r + n + 2 * INFAP_EPSILON)))
    terms = np.where(j == 0, 1.0, later)
    return safe_divide(np.bincount(q, weights=terms, minlength=ctx.n), ctx.num_rel(level))


BPREF = Family("Bpref", "Binary preference: how many judged non-relevant documents rank above each "
               "relevant one (Buckley & Voorhees 2004).", _REL, _bpref, cutoff="none")
GM_BPREF = Family("gm_bpref", "Bpref per query, summarised by the geometric mean over queries.", _REL, _bpref,
                  cutoff="none", aggregate="gmean")
INFAP = Family("infAP", "Inferred AP for sampled judgments (Yilmaz & Aslam 2006).", _REL, _infap, cutoff="none")

FAMILIES = (BPREF, GM_BPREF, INFAP)
ALIASES = {"BPref": BPREF}
TREC = (
    TrecMeasure("bpref", "plain", lambda p, o: "Bpref"),
    TrecMeasure("gm_bpref", "plain", lambda p, o: "gm_bpref", per_query=False),
    TrecMeasure("infAP", "plain", lambda p, o: "infAP"),
)
