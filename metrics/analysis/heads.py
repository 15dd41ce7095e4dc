"""The top of every ranked list, found from the query offsets alone.

A page that shows the top k of a ranking (a heatmap of 300 queries, the overlap of two runs' top
10) needs k rows of each query, not a position for each of the run's millions of rows:
``np.flatnonzero(positions(offsets) < k)`` builds two arrays as long as the run to keep a few
thousand of their entries. :func:`head_rows` gives the same rows, in the same order, from one
entry per query.
"""
from __future__ import annotations

import numpy as np

from ..ordering import offsets_of, positions

__all__ = ["head_rows"]


def head_rows(offsets: np.ndarray, depth: int | None,
              queries: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, which, pos)`` of the first ``depth`` positions (all of them with None) of each query
    of ``queries`` (indices into the segments of ``offsets``, in their order, repeats allowed;
    every query in order when None): the flat rows, the index into ``queries`` each row belongs to,
    and its 0-based position in its list.

    With ``queries`` None, ``rows`` equals ``np.flatnonzero(positions(offsets) < depth)`` and
    ``which`` the query of each of those rows: query by query, best position first."""
    offsets = np.asarray(offsets, dtype=np.int64)
    chosen = np.arange(len(offsets) - 1, dtype=np.int64) if queries is None else np.asarray(queries, dtype=np.int64)
    starts = offsets[chosen]
    counts = offsets[chosen + 1] - starts
    if depth is not None:
        counts = np.minimum(counts, max(int(depth), 0))
    pos = positions(offsets_of(counts))
    which = np.repeat(np.arange(len(chosen), dtype=np.int64), counts)
    return starts[which] + pos, which, pos
