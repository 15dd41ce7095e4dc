"""Exact per-query (segmented) scans over flat arrays, for the measure kernels.

Elements belong to segments given by a non-decreasing ``query`` array (row
sets are ordered by query, then rank). Every function treats each segment on
its own, in element order, so a query's result never depends on the other
queries in the batch (the same floats on any partition of the queries), and
sums are added one after another as trec_eval adds them.

A cumulative sum over the whole array minus the sum before each segment would
be one numpy call, but in floating point it mixes every earlier query into a
query's value; it is used only where it is exact (integer-valued data).
"""
from __future__ import annotations

import numpy as np

_EXACT_INTEGER = 2.0 ** 52


def segment_first(query: np.ndarray) -> np.ndarray:
    """Per element: the index of the first element of its segment."""
    return np.searchsorted(query, query, side="left")


def segment_index(query: np.ndarray) -> np.ndarray:
    """Per element: its 0-based position within its segment."""
    return np.arange(len(query)) - segment_first(query)


def segment_accumulate(query: np.ndarray, values: np.ndarray, ufunc=np.add) -> np.ndarray:
    """Inclusive running ``ufunc`` (np.add: sum, np.multiply: product) within each segment.

    Segments are laid out as rows of a dense matrix and accumulated along the
    rows in element order. Segments are grouped by length rounded up to a power
    of two, so the padding never exceeds the data (a handful of groups).
    """
    values = np.asarray(values, dtype=np.float64)
    n = len(values)
    if n == 0:
        return values.copy()
    if ufunc is np.add and _integer_valued(values):
        total = np.cumsum(values)
        first = segment_first(query)
        return total - np.where(first > 0, total[first - 1], 0.0)
    starts = np.flatnonzero(np.concatenate(([True], query[1:] != query[:-1])))
    lengths = np.diff(np.append(starts, n))
    width = 1 << np.ceil(np.log2(lengths)).astype(np.int64)
    index = segment_index(query)
    out = np.empty(n, dtype=np.float64)
    element_width = np.repeat(width, lengths)
    segment_of = np.repeat(np.arange(len(starts)), lengths)
    for w in np.unique(width):
        members = np.flatnonzero(element_width == w)
        segments, row = np.unique(segment_of[members], return_inverse=True)
        matrix = np.zeros((len(segments), int(w)), dtype=np.float64)
        matrix[row, index[members]] = values[members]
        ufunc.accumulate(matrix, axis=1, out=matrix)
        out[members] = matrix[row, index[members]]
    return out


def _integer_valued(values: np.ndarray) -> bool:
    """True when a plain cumulative sum of ``values`` is exact (integers, no overflow of 2**52)."""
    return bool(np.all(values == np.rint(values)) and np.abs(values).sum() < _EXACT_INTEGER)


def segment_count(query: np.ndarray, flags: np.ndarray, inclusive: bool = True) -> np.ndarray:
    """Per element: flagged elements of its segment up to it (exact integers)."""
    flags = np.asarray(flags, dtype=np.int64)
    total = np.cumsum(flags)
    first = segment_first(query)
    before_segment = np.where(first > 0, total[np.maximum(first - 1, 0)], 0)
    counts = total - before_segment
    return counts if inclusive else counts - flags


def segment_reverse_max(query: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Per element: the maximum of ``values`` over it and the later elements of its segment.

    Exact: values are replaced by their ranks among all values, offset so that
    each segment's ranks lie above those of every later segment, and a running
    maximum over the reversed array never crosses into another segment.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return values.copy()
    distinct, rank = np.unique(values, return_inverse=True)
    width = len(distinct)
    key = (np.int64(query[-1]) - query.astype(np.int64)) * width + rank
    best = np.maximum.accumulate(key[::-1])[::-1]
    return distinct[best % width]


def lookup_at(query: np.ndarray, pos: np.ndarray, cumulative: np.ndarray,
              at_query: np.ndarray, at_pos: np.ndarray, default: float = 0.0) -> np.ndarray:
    """The running value of the last element of segment ``at_query`` with position <= ``at_pos``.

    ``query``/``pos``/``cumulative`` describe elements sorted by (query, pos);
    a lookup before the first element of its segment gives ``default``.
    """
    at_query = np.asarray(at_query, dtype=np.int64)
    at_pos = np.asarray(at_pos, dtype=np.int64)
    if len(query) == 0:
        return np.full(at_query.shape, default, dtype=np.float64)
    stride = np.int64(max(int(pos.max(initial=0)), int(at_pos.max(initial=0))) + 2)
    keys = query.astype(np.int64) * stride + pos
    wanted = at_query * stride + np.maximum(at_pos, -1)
    idx = np.searchsorted(keys, wanted, side="right") - 1
    safe = np.maximum(idx, 0)
    found = (idx >= 0) & (query[safe] == at_query) & (at_pos >= 0)
    return np.where(found, cumulative[safe], default)
