"""Per-run evaluation context: segment helpers and cached intermediate arrays.

Every helper works on all queries at once. Sums go through ``np.bincount``
(or ``np.cumsum`` along rows for curves), which add values in rank order
within each query, so a query's value never depends on the other queries in
the same batch: the same kernels give identical floats on any partition.
"""
from __future__ import annotations

import numpy as np

from ..errors import MetricsError
from ..ranking import Ranked, positions


def gain_of(rel: np.ndarray, dcg: str = "log2", gains: dict | None = None) -> np.ndarray:
    """Gain per grade: ``rel`` (log2, trec_eval), ``2**rel - 1`` (exp-log2) or a custom map.

    Grades missing from a custom map keep their own value (trec_eval's rule);
    a gain <= 0 contributes nothing, so negative grades count as non-relevant.
    Fractional gains are kept as they are (trec_eval truncates them).
    """
    rel = np.asarray(rel)
    if gains:
        gain = rel.astype(np.float64)
        for grade, value in gains.items():
            gain[rel == grade] = value
    elif dcg == "exp-log2":
        gain = np.exp2(np.clip(rel, 0, 1023).astype(np.float64)) - 1.0
    else:
        gain = rel.astype(np.float64)
    return np.where(gain > 0, gain, 0.0)


def discount(pos: np.ndarray) -> np.ndarray:
    """log2(rank + 1) for 0-based positions: the divisor of DCG."""
    return np.log2(pos + 2.0)


class Context:
    """Arrays shared by all measures of one run, built lazily and cached."""

    def __init__(self, ranked: Ranked, rel_level: int = 1, judged_only: bool = False):
        self.ranked = ranked
        self.rel_level = rel_level
        self.judged_only = judged_only
        self.n = ranked.n_queries
        index_type = np.int32 if len(ranked.rel) < 2**31 else np.int64
        self.query_index = np.repeat(np.arange(self.n, dtype=index_type), ranked.lengths)
        self.pos = positions(ranked.offsets).astype(index_type, copy=False)
        self._cache: dict = {}
        self._views: dict = {}

    def view(self, judged_only: bool) -> "Context":
        """The context for condensed lists when a measure asks for ``judged_only``."""
        if judged_only == self.judged_only or self.judged_only:
            return self
        if judged_only not in self._views:
            self._views[judged_only] = Context(self.ranked.condensed(), self.rel_level, True)
        return self._views[judged_only]

    def cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    # -- segment helpers -------------------------------------------------
    def _dense_layout(self) -> bool:
        """Whether a (queries x depth) matrix is cheap: lists of (nearly) equal length."""
        return self.cached("dense_layout", lambda: self.n * self.depth <= 2 * len(self.pos) + 1024)

    @property
    def depth(self) -> int:
        return int(self.ranked.lengths.max(initial=0))

    def seg_sum(self, values: np.ndarray, cutoff: int | None = None, key=None) -> np.ndarray:
        """Per-query sum of ``values`` over the top ``cutoff`` ranks (all ranks if None).

        Sums run in rank order, so the result equals column ``cutoff`` of the
        curve exactly. With a ``key`` naming a reusable array, the running sums
        are built once as a (queries x depth) matrix and every cutoff is a
        column of it; otherwise one bincount pass.
        """
        if key is not None and self._dense_layout():
            depth = self.depth
            if depth == 0:
                return np.zeros(self.n)
            matrix = self.cached(("running", key), lambda: self.dense_cumsum(values, depth))
            return matrix[:, (depth if cutoff is None else min(cutoff, depth)) - 1].copy()
        if cutoff is not None:
            values = np.where(self.pos < cutoff, values, 0.0)
        return np.bincount(self.query_index, weights=values, minlength=self.n).astype(np.float64)

    def release_running(self) -> None:
        """Drop cached per-document arrays and running-sum matrices of the last measure family."""
        shared = ("relevant", "hits", "num_rel", "dense_layout", "ideal")
        for ctx in (self, *self._views.values()):
            for key in [k for k in ctx._cache if (k[0] if isinstance(k, tuple) else k) not in shared]:
                del ctx._cache[key]

    def dense_cumsum(self, values: np.ndarray, max_k: int) -> np.ndarray:
        """(queries x max_k) matrix: column k-1 is the sum of ``values`` over the top k."""
        lengths = self.ranked.lengths
        if self.n and max_k == self.depth and np.all(lengths == max_k):
            matrix = np.asarray(values, dtype=np.float64).reshape(self.n, max_k)
            return np.cumsum(matrix, axis=1)
        matrix = np.zeros((self.n, max_k), dtype=np.float64)
        inside = self.pos < max_k
        matrix[self.query_index[inside], self.pos[inside]] = values[inside]
        return np.cumsum(matrix, axis=1, out=matrix)

    def num_ret_upto(self, max_k: int) -> np.ndarray:
        """(queries x max_k): number of documents retrieved within the top k."""
        return np.minimum(self.ranked.lengths[:, None], np.arange(1, max_k + 1)[None, :]).astype(np.float64)

    # -- relevance ---------------------------------------------------------
    def level(self, measure) -> int:
        rel = measure.param("rel") if "rel" in measure.family.params else None
        return self.rel_level if rel is None else int(rel)

    def relevant(self, level: int) -> np.ndarray:
        """Per retrieved document: judged with grade >= level (binary relevance)."""
        return self.cached(("relevant", level), lambda: self.ranked.judged & (self.ranked.rel >= level))

    def hits(self, level: int) -> np.ndarray:
        """Per retrieved document: relevant documents at or above its rank (exact integers)."""
        def build():
            total = np.cumsum(self.relevant(level), dtype=np.int64)
            start = np.concatenate(([0], total))[self.ranked.offsets[:-1]]
            total -= np.repeat(start, self.ranked.lengths)
            return total
        return self.cached(("hits", level), build)

    def num_rel(self, level: int) -> np.ndarray:
        """Per query: judged documents with grade >= level in the qrels."""
        def build():
            r = self.ranked
            iq = np.repeat(np.arange(self.n), np.diff(r.ideal_offsets))
            return np.bincount(iq, weights=(r.ideal_rel >= level), minlength=self.n).astype(np.float64)
        return self.cached(("num_rel", level), build)

    # -- gains ---------------------------------------------------------------
    def gain_key(self, measure):
        """Hashable identity of a measure's gain function (dcg, custom gains)."""
        gains = measure.param("gains")
        return (measure.param("dcg"), tuple(sorted(gains.items())) if gains else None)

    def contributions(self, measure) -> np.ndarray:
        """Per retrieved document: gain / log2(rank + 1); unjudged documents gain 0."""
        dcg, gains = self.gain_key(measure)

        def build():
            gain = gain_of(self.ranked.rel, dcg, dict(gains) if gains else None)
            gain = np.where(self.ranked.judged, gain, 0.0)
            return gain / discount(self.pos)
        return self.cached(("contrib", dcg, gains), build)

    def ideal(self, measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query index, 0-based ideal rank, contribution) of the ideal ranking's positive gains."""
        dcg, gains = self.gain_key(measure)

        def build():
            r = self.ranked
            iq = np.repeat(np.arange(self.n), np.diff(r.ideal_offsets))
            gain = gain_of(r.ideal_rel, dcg, dict(gains) if gains else None)
            order = np.lexsort((-gain, iq))
            iq, gain = iq[order], gain[order]
            positive = gain > 0
            iq, gain = iq[positive], gain[positive]
            counts = np.bincount(iq, minlength=self.n)
            offsets = np.zeros(self.n + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            pos = positions(offsets)
            return iq, pos, gain / discount(pos)
        return self.cached(("ideal", dcg, gains), build)

    def ideal_dcg(self, measure, cutoff: int | None) -> np.ndarray:
        iq, pos, contrib = self.ideal(measure)
        if cutoff is not None:
            contrib = np.where(pos < cutoff, contrib, 0.0)
        return np.bincount(iq, weights=contrib, minlength=self.n).astype(np.float64)

    def ideal_dcg_curve(self, measure, max_k: int) -> np.ndarray:
        iq, pos, contrib = self.ideal(measure)
        matrix = np.zeros((self.n, max_k), dtype=np.float64)
        inside = pos < max_k
        matrix[iq[inside], pos[inside]] = contrib[inside]
        return np.cumsum(matrix, axis=1)


def safe_divide(numerator, denominator) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    num, den = np.broadcast_arrays(np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64))
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out
