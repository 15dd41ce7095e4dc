"""The canonical order of a run's rows, and the array helpers it stands on.

trec_eval 10's order: score descending in float64, ties broken by docno descending as byte strings
(strcmp), the rank column ignored; ``ties="rank"`` orders by the rank column instead (ties there
again by docno descending). :func:`canonical_order` gives the permutation, :func:`canonical_arrays`
also the query codes and primary keys in that order (what :func:`metrics.ranking.rank` goes on
with). The helpers: segment offsets and positions within segments, strings taken by row from a
chunked column (:class:`Docnos`, :func:`take`), and runs of equal neighbouring values.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .beside import beside
from .errors import MetricsError


class Docnos:
    """Docno strings named by row, taken only when asked for: ``source`` (a run's docno column,
    chunked or not) at ``rows`` (None: every row, in order)."""

    __slots__ = ("source", "rows")

    def __init__(self, source, rows: np.ndarray | None = None):
        self.source, self.rows = source, rows

    def __len__(self) -> int:
        return len(self.source) if self.rows is None else len(self.rows)

    def take(self, index: np.ndarray) -> pa.Array:
        """The strings at positions ``index`` of this column."""
        return take(self.source, index if self.rows is None else self.rows[index])

    def subset(self, index: np.ndarray) -> Docnos:
        """The column at positions ``index``, still untaken."""
        return Docnos(self.source, index if self.rows is None else self.rows[index])

    def array(self) -> pa.Array:
        return take(self.source, self.rows)


def take(values, rows: np.ndarray | None) -> pa.Array:
    """``values[rows]`` as one array of plain strings or numbers (all of ``values`` when ``rows`` is
    None).

    Arrow's take from a chunked array concatenates every chunk first (for a 7M-row docno column,
    a 72 MB copy to fetch a few thousand strings); a few rows are taken chunk by chunk instead.
    """
    if isinstance(values, pa.ChunkedArray) and rows is not None and len(rows) * 8 < len(values):
        sizes = np.array([len(c) for c in values.chunks], dtype=np.int64)
        starts = offsets_of(sizes)
        chunk = np.searchsorted(starts, rows, side="right") - 1
        by_chunk = np.argsort(chunk, kind="stable")
        cuts = np.searchsorted(chunk[by_chunk], np.arange(len(sizes) + 1))
        parts = [plain_strings(values.chunk(i)).take(pa.array(rows[by_chunk[a:b]] - starts[i]))
                 for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])) if b > a]
        taken = pa.concat_arrays(parts) if parts else pa.array([], plain_strings(values.chunk(0)).type)
        if len(rows) > 1 and np.any(by_chunk[1:] < by_chunk[:-1]):
            back = np.empty(len(rows), dtype=np.int64)
            back[by_chunk] = np.arange(len(rows))
            taken = taken.take(pa.array(back))
        return taken
    values = single_array(values)
    return values if rows is None else values.take(pa.array(rows))


def offsets_of(counts: np.ndarray) -> np.ndarray:
    """Segment offsets from segment sizes: ``[0, c0, c0 + c1, ...]`` (int64, one more than ``counts``);
    segment ``i`` is ``[offsets[i], offsets[i + 1])``."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def positions(offsets: np.ndarray, *, first: int = 0, out: np.ndarray | None = None) -> np.ndarray:
    """0-based rank of every element within its segment (int64); from ``first`` (1: 1-based ranks)
    and into ``out`` (of the rows' length, any integer type that holds them) when given.

    One array of the rows' length, made by a running sum of steps (1 within a segment, back to
    ``first`` at each segment's first row), not ``arange - repeat`` (three such arrays: each costs a
    page fault per page, about 40 ms for 7M rows on a busy machine)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    n = int(offsets[-1])
    if out is None:
        out = np.ones(n, dtype=np.int64)
    else:
        out[:] = 1
    if n:
        starts = offsets[:-1][np.diff(offsets) > 0]   # first rows of the non-empty segments
        out[0] = first
        out[starts[1:]] = starts[:-1] - starts[1:] + 1   # back from the previous segment's last position
        np.cumsum(out, out=out, dtype=out.dtype)
    return out


def plain_strings(col):
    """``col`` (an array or a chunked array) with large or view strings cast to plain strings."""
    if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
        col = col.cast(pa.string())
    return col


def single_array(col) -> pa.Array:
    """``col`` as one array (a chunked array's chunks combined), large or view strings cast to plain strings."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
        col = col.cast(pa.string())
    return col


SEGMENT_ROWS = 32
"""Rows a query's block must hold on average for :func:`canonical_order` to sort the blocks one by
one (a Python step each) rather than all rows with ``np.lexsort``."""


def canonical_order(qcode: np.ndarray, score: np.ndarray, docno: pa.Array,
                    rank: np.ndarray | None = None, ties: str = "score", *,
                    distinct: bool = False) -> np.ndarray | None:
    """Row permutation giving the canonical order within queries (``qcode`` ascending).

    Returns ``None`` when the rows are in canonical order already (the common
    case for files written by retrieval systems), so callers can skip copies.
    ``distinct``: the caller knows no query lists a docno twice (a fused run's candidates), so
    the order is total and the rows within a query may be sorted by an unstable sort.
    """
    return canonical_arrays(qcode, score, Docnos(docno), rank, ties, distinct)[0]


def canonical_arrays(qcode: np.ndarray, score: np.ndarray, docno: Docnos, rank: np.ndarray | None,
                     ties: str, distinct: bool = False) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """(order, qcode in that order, primary key in that order): see :func:`canonical_order`.

    The primary key is the score (``ties="score"``) or the rank column. A permutation inside
    tie groups leaves both as they are, so they are known before ties are broken; with
    ``distinct`` docnos the ties' own order is then fully decided by the docnos, so any order of
    the tied rows before it gives the same result.
    """
    descending = ties == "score"
    primary = score if descending else rank
    if primary is None:
        raise MetricsError(f"ties={ties!r} needs a rank column", fix="use ties='score' (trec_eval's rule)")
    n = len(qcode)
    if n == 0:
        return None, qcode, primary
    # primary key ascending within a query: -score (descending score) or the rank column
    boundary = qcode[1:] != qcode[:-1]
    step_ok = primary[1:] <= primary[:-1] if descending else primary[1:] >= primary[:-1]
    blocks_sorted = bool(np.all(boundary | step_ok))
    del step_ok
    heads = np.concatenate(([0], np.flatnonzero(boundary) + 1))
    del boundary
    head_codes = qcode[heads]
    order: np.ndarray | None
    if blocks_sorted and np.all(head_codes[1:] > head_codes[:-1]):
        order = None  # one block per query, queries and scores in order: nothing to move
        q, p = qcode, primary
    elif blocks_sorted and len(np.unique(head_codes)) == len(heads):
        # whole blocks out of query order: move the blocks, each kept as it is
        index = np.int32 if n < 2**31 else np.int64   # half the memory of int64 for a 7M-row run
        lengths = np.diff(np.append(heads, n))
        by_code = np.argsort(head_codes, kind="stable")
        moved = lengths[by_code]
        order = np.repeat((heads[by_code] - (np.cumsum(moved) - moved)).astype(index), moved)
        order += np.arange(n, dtype=index)
        q, p = np.repeat(head_codes[by_code], moved), primary[order]
    elif len(np.unique(head_codes)) == len(heads) and n >= SEGMENT_ROWS * len(heads):
        # one block per query, scores out of order inside: sort each block alone (7M rows in blocks
        # of 1,000: 0.8 s against np.lexsort's 5.6 s), the blocks in query order
        key = -primary if descending else primary
        ends = np.append(heads[1:], n)
        by_code = np.argsort(head_codes, kind="stable")
        # 2x quicker on blocks of 1,000; NaN scores are never ties, so their rows keep the stable order
        kind: Literal["quicksort", "stable"] = "quicksort" if distinct and not np.isnan(key).any() else "stable"
        blocks = list(zip(heads[by_code].tolist(), ends[by_code].tolist()))

        def sorted_blocks(part: list) -> list[np.ndarray]:
            return [start + np.argsort(key[start:end], kind=kind) for start, end in part]

        half = len(blocks) // 2   # the first half of the blocks on a second thread (argsort releases the GIL)
        early = beside(int(ends[by_code[:half]].sum() - heads[by_code[:half]].sum()), sorted_blocks, blocks[:half])
        late = sorted_blocks(blocks[half:])
        order = np.concatenate(early.result() + late)
        del key
        q, p = qcode[order], primary[order]
    else:
        order = np.lexsort((-primary if descending else primary, qcode))
        q, p = qcode[order], primary[order]
    same = (q[1:] == q[:-1]) & (p[1:] == p[:-1])
    if not same.any():
        return order, q, p
    # Tie groups: reorder their rows by docno descending (byte order, like strcmp).
    if order is None:
        order = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
    starts = np.flatnonzero(same & ~np.concatenate(([False], same[:-1])))  # first row of each group
    stops = np.flatnonzero(same & ~np.append(same[1:], False))              # its last tied step
    sizes = stops - starts + 2
    del same, stops
    pairs = starts[sizes == 2]
    if len(pairs):
        # Two tied rows: swap them when the first docno is the smaller (a stable sort keeps equals).
        first, second = order[pairs], order[pairs + 1]
        swap = pc.less(docno.take(first), docno.take(second))
        swap = np.asarray(swap.to_numpy(zero_copy_only=False), dtype=bool)
        order[pairs[swap]], order[pairs[swap] + 1] = second[swap], first[swap]
    larger = sizes > 2
    if larger.any():
        group_start, group_size = starts[larger], sizes[larger]
        tie_rows = np.repeat(group_start - (np.cumsum(group_size) - group_size), group_size)
        tie_rows += np.arange(len(tie_rows))
        group_id = np.repeat(np.arange(len(group_start)), group_size)
        table = pa.table({"g": group_id, "d": docno.take(order[tie_rows])})
        inner = pc.sort_indices(table, sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
        order[tie_rows] = order[tie_rows][inner]
    return order, q, p


def run_heads(values) -> tuple[np.ndarray, np.ndarray]:
    """(first row, length) of every run of equal neighbouring values of ``values`` (an array or a
    chunked array, no nulls). Runs and qrels come in blocks of one query, so work per distinct
    value is done once per block: on ``values.take(heads)``, then repeated by the lengths."""
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    change = pc.not_equal(values.slice(1), values.slice(0, n - 1))
    change = change.to_numpy() if isinstance(change, pa.ChunkedArray) else change.to_numpy(zero_copy_only=False)
    heads = np.flatnonzero(np.concatenate(([True], change)))
    return heads, np.diff(np.append(heads, n))
