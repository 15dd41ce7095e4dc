"""Per-run evaluation context: row sets, segment sums and cached intermediate arrays.

Only labelled documents contribute to any measure (an unjudged document has
gain 0 and is not relevant), so kernels work on *row sets*: the rows of the
ranked arrays that carry a label, with each row's query and 0-based rank.
Judgments are sparse next to run lines (MS MARCO: ~1 per 1000 retrieved), so
every measure costs time in proportion to the labelled rows, not the run.

Sums go through ``np.bincount`` over rows in rank order (or ``np.cumsum``
along rows for curves), so values are added in rank order within each query,
exactly as trec_eval adds them, and a query's value never depends on the other
queries in the batch: the same kernels give identical floats on any partition.
"""
from __future__ import annotations

import numpy as np

from ..ordering import offsets_of, positions
from ..ranking import Ranked

NAN = np.copysign(np.nan, -1.0)
"""trec_eval's 0/0: on x86 a NaN with the sign bit set, which C's printf shows as -nan."""


def gain_of(rel: np.ndarray, dcg: str = "log2", gains: dict | None = None) -> np.ndarray:
    """Gain per grade: ``rel`` (log2, trec_eval), ``2**rel - 1`` (exp-log2) or a custom map.

    Default gains of negative grades are 0 (judged non-relevant, as trec_eval).
    A custom map gives its gain to each listed grade, even 0 or a negative
    gain (trec_eval allows both); grades it omits keep their default gain.
    Fractional gains are kept as they are (trec_eval truncates them when it
    sorts the ideal ranking).
    """
    rel = np.asarray(rel)
    if dcg == "exp-log2" and not gains:
        gain = np.exp2(np.clip(rel, 0, 1023).astype(np.float64)) - 1.0
    else:
        gain = np.maximum(rel, 0).astype(np.float64)
    for grade, value in (gains or {}).items():
        gain[rel == grade] = value
    return gain


def discount(pos: np.ndarray) -> np.ndarray:
    """log2(rank + 1) for 0-based positions: the divisor of DCG."""
    return np.log2(pos + 2.0)


class Rows:
    """A subset of retrieved documents: row index, query index and 0-based rank, in rank order."""

    __slots__ = ("rows", "query", "pos")

    def __init__(self, rows: np.ndarray, query: np.ndarray, pos: np.ndarray):
        self.rows, self.query, self.pos = rows, query, pos

    def __len__(self) -> int:
        return len(self.rows)

    def where(self, keep: np.ndarray) -> "Rows":
        return Rows(self.rows[keep], self.query[keep], self.pos[keep])


class Context:
    """Arrays shared by all measures of one run, built lazily and cached."""

    def __init__(self, ranked: Ranked, rel_level: int = 1, judged_only: bool = False):
        self.ranked = ranked
        self.rel_level = rel_level
        self.judged_only = judged_only or ranked.judged_only
        self.n = ranked.n_queries
        self.lengths = ranked.lengths
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

    def release_running(self) -> None:
        """Drop cached arrays of the last measure family (row sets stay)."""
        shared = ("labelled", "relevant", "hits", "num_rel", "ideal", "ideal_gains", "pooled", "query_of_ideal")
        for ctx in (self, *self._views.values()):
            for key in [k for k in ctx._cache if (k[0] if isinstance(k, tuple) else k) not in shared]:
                del ctx._cache[key]

    # -- row sets -----------------------------------------------------------
    def rows_of(self, rows: np.ndarray) -> Rows:
        """Row set of the given (ascending) row indices."""
        offsets = self.ranked.offsets
        query = np.searchsorted(offsets, rows, side="right") - 1
        return Rows(rows, query, rows - offsets[query])

    def labelled(self) -> Rows:
        """Documents with a label (qrels or proxy), in rank order."""
        return self.cached("labelled", lambda: self.rows_of(np.flatnonzero(self.ranked.judged)))

    def pooled(self) -> Rows:
        """Documents judged with a grade >= 0 (trec_eval's judged documents; a negative grade is
        "in the pool but unjudged" there)."""
        return self.cached("pooled", lambda: self.labelled().where(self.ranked.rel[self.labelled().rows] >= 0))

    def relevant(self, level: int) -> Rows:
        """Documents judged with grade >= level (binary relevance)."""
        def build():
            labelled = self.labelled()
            return labelled.where(self.ranked.rel[labelled.rows] >= level)
        return self.cached(("relevant", level), build)

    def hits(self, level: int) -> np.ndarray:
        """Per relevant document: relevant documents at or above its rank (exact integers)."""
        def build():
            rel = self.relevant(level)
            first = np.searchsorted(rel.query, rel.query, side="left")  # first row of the same query
            return np.arange(1, len(rel) + 1) - first
        return self.cached(("hits", level), build)

    def query_of_ideal(self) -> np.ndarray:
        """Query index of every entry of ``ranked.ideal_rel``."""
        return self.cached("query_of_ideal",
                           lambda: np.repeat(np.arange(self.n), np.diff(self.ranked.ideal_offsets)))

    def num_rel(self, level: int) -> np.ndarray:
        """Per query: judged documents with grade >= level in the qrels (never a negative grade)."""
        def build():
            grade = self.ranked.ideal_rel
            keep = (grade >= level) & (grade >= 0)
            return np.bincount(self.query_of_ideal(), weights=keep, minlength=self.n).astype(np.float64)
        return self.cached(("num_rel", level), build)

    def num_nonrel(self, level: int) -> np.ndarray:
        """Per query: judged documents with 0 <= grade < level in the qrels (bpref's N)."""
        def build():
            grade = self.ranked.ideal_rel
            keep = (grade >= 0) & (grade < level)
            return np.bincount(self.query_of_ideal(), weights=keep, minlength=self.n).astype(np.float64)
        return self.cached(("num_nonrel", level), build)

    def max_grade(self) -> np.ndarray:
        """Per query: the highest grade >= 0 in the qrels (-1 when there is none)."""
        def build():
            out = np.full(self.n, -1, dtype=np.int64)
            grade = self.ranked.ideal_rel
            keep = grade >= 0
            np.maximum.at(out, self.query_of_ideal()[keep], grade[keep])
            return out
        return self.cached("max_grade", build)

    def level(self, measure) -> int:
        rel = measure.param("rel") if "rel" in measure.family.params else None
        return self.rel_level if rel is None else int(rel)

    def counts(self, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query: (retrieved, relevant retrieved, relevant in the qrels) as floats."""
        def build():
            rel_ret = np.bincount(self.relevant(level).query, minlength=self.n).astype(np.float64)
            return self.lengths.astype(np.float64), rel_ret, self.num_rel(level)
        return self.cached(("counts", level), build)

    # -- sums over row sets ---------------------------------------------------
    def top_sum(self, rows: Rows, values, cutoff=None) -> np.ndarray:
        """Per-query sum of ``values`` (one per row, or a scalar) over rows ranked above ``cutoff``.

        ``cutoff`` is None (no cutoff), one rank for all queries, or one per query.
        """
        weights = np.broadcast_to(np.asarray(values, dtype=np.float64), (len(rows),))
        if cutoff is not None:
            limit = cutoff if np.ndim(cutoff) == 0 else np.asarray(cutoff)[rows.query]
            weights = np.where(rows.pos < limit, weights, 0.0)
        return np.bincount(rows.query, weights=weights, minlength=self.n).astype(np.float64)

    def top_curve(self, rows: Rows, values, max_k: int) -> np.ndarray:
        """(queries x max_k) matrix: column k-1 is the sum of ``values`` over rows in the top k."""
        matrix = np.zeros((self.n, max_k), dtype=np.float64)
        inside = rows.pos < max_k
        weights = np.broadcast_to(np.asarray(values, dtype=np.float64), (len(rows),))
        matrix[rows.query[inside], rows.pos[inside]] = weights[inside]
        return np.cumsum(matrix, axis=1, out=matrix)

    def num_ret_upto(self, max_k: int) -> np.ndarray:
        """(queries x max_k): number of documents retrieved within the top k."""
        return np.minimum(self.lengths[:, None], np.arange(1, max_k + 1)[None, :]).astype(np.float64)

    def retrieved_upto(self, cutoff) -> np.ndarray:
        """Per query: documents retrieved within the top ``cutoff`` (all when None)."""
        lengths = self.lengths.astype(np.float64)
        return lengths if cutoff is None else np.minimum(lengths, cutoff)

    # -- gains ---------------------------------------------------------------
    def gain_key(self, measure):
        """Hashable identity of a measure's gain function (dcg, custom gains)."""
        gains = measure.param("gains")
        return (measure.param("dcg"), tuple(sorted(gains.items())) if gains else None)

    def gain_rows(self, measure) -> tuple[Rows, np.ndarray, np.ndarray]:
        """Documents with a non-zero gain, their gains and contributions gain / log2(rank + 1).

        Only a custom gain map can give a negative gain; it counts in DCG as in trec_eval.
        """
        dcg, gains = self.gain_key(measure)

        def build():
            labelled = self.labelled()
            gain = gain_of(self.ranked.rel[labelled.rows], dcg, dict(gains) if gains else None)
            nonzero = gain != 0
            rows = labelled.where(nonzero)
            return rows, gain[nonzero], gain[nonzero] / discount(rows.pos)
        return self.cached(("gain_rows", dcg, gains), build)

    def contributions(self, measure) -> np.ndarray:
        """Per retrieved document: gain / log2(rank + 1); 0 for unjudged documents."""
        rows, _, contrib = self.gain_rows(measure)
        out = np.zeros(len(self.ranked.rel), dtype=np.float64)
        out[rows.rows] = contrib
        return out

    def ideal_gains(self, measure) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The ideal ranking's positive gains: (query index, 0-based ideal rank, gain, offsets).

        Gains are sorted descending within each query; ``offsets[q]`` is where query q's start.
        """
        dcg, gains = self.gain_key(measure)

        def build():
            iq = self.query_of_ideal()
            gain = gain_of(self.ranked.ideal_rel, dcg, dict(gains) if gains else None)
            order = np.lexsort((-gain, iq))
            iq, gain = iq[order], gain[order]
            positive = gain > 0
            iq, gain = iq[positive], gain[positive]
            offsets = offsets_of(np.bincount(iq, minlength=self.n))
            return iq, positions(offsets), gain, offsets
        return self.cached(("ideal_gains", dcg, gains), build)

    def ideal(self, measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(query index, 0-based ideal rank, contribution) of the ideal ranking's positive gains."""
        def build():
            iq, pos, gain, _ = self.ideal_gains(measure)
            return iq, pos, gain / discount(pos)
        return self.cached(("ideal",) + self.gain_key(measure), build)

    def ideal_dcg(self, measure, cutoff: int | None) -> np.ndarray:
        iq, pos, contrib = self.ideal(measure)
        return self.top_sum(Rows(iq, iq, pos), contrib, cutoff)

    def ideal_dcg_curve(self, measure, max_k: int) -> np.ndarray:
        iq, pos, contrib = self.ideal(measure)
        return self.top_curve(Rows(iq, iq, pos), contrib, max_k)


def safe_divide(numerator, denominator) -> np.ndarray:
    """numerator / denominator, 0 where the denominator is 0 (trec_eval's convention)."""
    num, den = np.broadcast_arrays(np.asarray(numerator, dtype=np.float64), np.asarray(denominator, dtype=np.float64))
    out = np.zeros(num.shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out
