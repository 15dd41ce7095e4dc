"""Which document of one ranking is which of another's: the matching under "Where it differs".

:func:`docno_codes` gives every docno of two rankings an integer code (equal codes, equal strings;
:mod:`metrics.analysis.codes`), and :func:`rank_in` finds each row of one ranking in the other's
list of the same query. Both keep their last results for the pair, since the page asks for the same
pair's matching in its depth detection, its headroom and its rank bands.
"""
from __future__ import annotations

import threading
import weakref

import numpy as np

from ..beside import beside
from ..errors import MetricsError
from ..ordering import positions
from ..ranking import Ranked
from .codes import chunks_of, encode

__all__ = ["PairKept", "docno_codes", "position_type", "rank_in"]

PAIR_CODES_KEPT = 2
"""Pairs of docno columns whose codes :func:`docno_codes` keeps (two int32 per run line each): the
page "Where it differs" asks for the same pair's codes in its headroom and its rank bands."""

_pair_codes: dict[tuple, tuple] = {}
_pair_codes_lock = threading.Lock()


def _identity(source) -> tuple:
    """Where a column's memory is: (type, offset, length and buffer addresses) of each chunk. Arrow
    columns are immutable, so while the chunks are held (as :data:`_pair_codes` holds them), equal
    identities mean equal strings; a new wrapper of the same memory (``table["docno"]``) matches."""
    return tuple((str(chunk.type), chunk.offset, len(chunk),
                  *(b.address if b is not None else 0 for b in chunk.buffers())) for chunk in chunks_of(source))


def _source_codes(source_a, source_b) -> tuple[np.ndarray, np.ndarray]:
    """Codes of every row of two docno columns (arrays or chunked arrays), equal exactly where the
    strings are equal (:func:`metrics.analysis.codes.encode` of both, concatenated). The last
    :data:`PAIR_CODES_KEPT` pairs are kept, with their chunks (so that their memory stays theirs),
    and serve both orders: codes only say which strings are equal, so (b, a) is (a, b) swapped.
    The page's depth detection asks for (re-ranked, first) and its headroom for (first, re-ranked)."""
    key = (_identity(source_a), _identity(source_b))
    with _pair_codes_lock:
        kept = _pair_codes.get(key)
        swapped = _pair_codes.get((key[1], key[0])) if kept is None else None
    if kept is not None:
        return kept[1], kept[2]
    if swapped is not None:
        return swapped[2], swapped[1]
    held_a, held_b = chunks_of(source_a), chunks_of(source_b)
    held = [*held_a, *held_b]
    codes = encode(held, groups=[len(held_a), len(held_b)]).codes
    codes_a, codes_b = codes[:len(source_a)], codes[len(source_a):]
    with _pair_codes_lock:
        _pair_codes[key] = (held, codes_a, codes_b)
        while len(_pair_codes) > PAIR_CODES_KEPT:
            del _pair_codes[next(iter(_pair_codes))]
    return codes_a, codes_b


def docno_codes(a: Ranked, b: Ranked) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of the docnos of ``a`` and ``b``, row by row (equal codes, equal strings; int32
    where they fit, and then the kept arrays themselves: read, never written). One pass over the two
    runs' docno columns (:func:`_source_codes`, kept for the pair), taken at the rankings' rows; the
    strings themselves are never gathered into ranked order."""
    column_a, column_b = a.docnos(), b.docnos()
    codes_a, codes_b = _source_codes(column_a.source, column_b.source)
    rows_a = codes_a if column_a.rows is None else codes_a[column_a.rows]
    rows_b = codes_b if column_b.rows is None else codes_b[column_b.rows]
    return rows_a, rows_b


class PairKept:
    """The last ``size`` results computed for pairs of live objects (rankings, which are not changed
    after they are built), keyed by the two objects: an entry answers only while both live and are
    the same objects, so an address reused by a new ranking is never answered from it."""

    def __init__(self, size: int):
        self.size = size
        self._items: dict[tuple[int, int], tuple] = {}
        self._lock = threading.Lock()

    def get(self, a, b):
        """The result kept for (``a``, ``b``), or None."""
        with self._lock:
            item = self._items.get((id(a), id(b)))
        return item[2] if item is not None and item[0]() is a and item[1]() is b else None

    def put(self, a, b, value) -> None:
        """Keep ``value`` for (``a``, ``b``), forgetting the oldest beyond :attr:`size`."""
        with self._lock:
            self._items[(id(a), id(b))] = (weakref.ref(a), weakref.ref(b), value)
            while len(self._items) > self.size:
                del self._items[next(iter(self._items))]


PAIR_WHERE_KEPT = 2
""":func:`rank_in` results kept (one int32 per row of ``a``): the page "Where it differs" asks for
both directions of one pair five times (the depth detection, the headroom, the rank bands)."""

_pair_where = PairKept(PAIR_WHERE_KEPT)
"""(rank_in (a, b), whether b lists each document once per query) for each pair kept."""

SLICE = 1 << 20
"""Rows a check of sorted keys reads at a time (:func:`_each_once`): no temporary of the rows' length."""


def position_type(rows: int) -> type[np.integer]:
    """The integer type of a position within a list of at most ``rows`` rows: int32 (half the memory,
    and half the pages a new array costs), int64 only past 2**31 rows."""
    return np.int32 if rows < 2**31 else np.int64


def rank_in(a: Ranked, b: Ranked, codes: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """For every row of ``a``: the 0-based position of the same document in ``b``'s list of the
    same query, -1 where ``b`` lacks it (the first position when ``b`` lists it twice); int32
    (:func:`position_type`) and read-only, as it is kept. ``a`` and ``b`` are ranked against the
    same qrels; ``codes`` is :func:`docno_codes` (a, b) when already known.

    Integer work after one pass over the docno strings (:func:`docno_codes`): ``b``'s (query, code,
    position) keys sorted once, and a binary search for each of ``a``'s (query, code); or, when
    both list the same documents in every query, each once (a re-ranking of its whole first
    stage), ``a``'s keys sorted too and paired with ``b``'s one to one, both directions at once (only
    the rows whose document moved, when at most half of them did: a re-ranked top). The last
    :data:`PAIR_WHERE_KEPT` results are kept for the same two ranking objects while both live
    (rankings are not changed after they are built), and the other direction of a kept pair is its
    inverse when neither list holds a document twice."""
    if not np.array_equal(a.qids, b.qids):
        raise MetricsError("the two runs were ranked against different queries",
                           fix="rank both against the same qrels with missing='zero'")
    kept = _pair_where.get(a, b)
    if kept is not None:
        return kept[0]
    reverse = _pair_where.get(b, a)
    out = None
    if reverse is not None and reverse[1]:
        out = _inverse(b, a, reverse[0])
    if out is None:
        out, once, back = _rank_in(a, b, docno_codes(a, b) if codes is None else codes)
    else:
        once, back = True, None   # the inverse found no row of a twice: b lists no document of a twice
    for result in (out, back):
        if result is not None:
            result.flags.writeable = False
    _pair_where.put(a, b, (out, once))
    if back is not None:   # the same documents in every query, each once: the other direction too
        _pair_where.put(b, a, (back, True))
    return out


def _inverse(b: Ranked, a: Ranked, where: np.ndarray) -> np.ndarray | None:
    """:func:`rank_in` (a, b) from ``where`` = rank_in (b, a), given that ``a`` lists each document
    once per query: ``b``'s row at position p of query q found at position r of ``a`` is ``a``'s row
    of position r of q, found at p. None when ``b`` lists a document of ``a`` twice (two rows of ``b``
    point at one row of ``a``, which must answer with the first)."""
    found = np.flatnonzero(where >= 0)
    query = np.repeat(np.arange(b.n_queries, dtype=np.int64), b.lengths)[found]
    target = a.offsets[query].astype(np.int64) + where[found]
    kind = position_type(max(len(a.rel), len(b.rel)))
    out = np.full(len(a.rel), -1, dtype=kind)
    out[target] = positions(b.offsets, out=np.empty(len(b.rel), dtype=kind))[found]
    if np.count_nonzero(out >= 0) != len(found):   # a target hit twice
        return None
    return out


def _rank_in(a: Ranked, b: Ranked, codes: tuple[np.ndarray, np.ndarray]) -> tuple[np.ndarray, bool, np.ndarray | None]:
    """:func:`rank_in` (a, b) from the codes; whether ``b`` lists each document once per query; and
    :func:`rank_in` (b, a) when it comes for free (else None): when every query of ``a`` lists the
    same documents as ``b``'s, each once (a re-ranking of the whole of its first stage)."""
    code_a, code_b = (np.asarray(c) for c in codes)   # int32 where they fit: keys widen them as they are built
    kind = position_type(max(len(code_a), len(code_b)))
    if not len(code_a) or not len(code_b):
        return np.full(len(code_a), -1, dtype=kind), True, None
    width = int(max(code_a.max(), code_b.max())) + 1
    longest = int(max(a.lengths.max(initial=1), b.lengths.max(initial=1)))
    bits = max((longest - 1).bit_length(), 1)   # positions in the low bits
    if a.n_queries * width >= 2**62 >> bits:   # codes too wide for one int64 key: number them densely
        dense = np.unique(np.concatenate([code_a, code_b]), return_inverse=True)[1]
        code_a, code_b = dense[:len(code_a)], dense[len(code_a):]
        width = int(dense.max()) + 1

    def keys(ranked: Ranked, code: np.ndarray, position: bool) -> np.ndarray:
        """(query * width + code) << bits of every row (| its position with ``position``), in place on
        one new array: a first call in a process pays a page fault for every page of every
        temporary of 7M rows."""
        key = np.repeat(np.arange(ranked.n_queries, dtype=np.int64) * width, ranked.lengths)
        key += code
        key <<= bits
        if position:
            key |= positions(ranked.offsets, out=np.empty(len(key), dtype=kind))
        return key

    def sorted_b() -> tuple[np.ndarray, bool]:
        """b's keys with its positions in their low bits, sorted: one sort, no permutation to gather
        through, and a document listed twice finds its first position; whether b lists each
        document once per query."""
        key = keys(b, code_b, True)
        key.sort(kind="stable")   # rows come query by query: timsort's runs, 2x quicker than quicksort
        return key, _each_once(key, bits)

    same_offsets = np.array_equal(a.offsets, b.offsets)
    moved = np.flatnonzero(code_a != code_b) if same_offsets else None   # rows whose document is not b's there
    pairing = moved is not None and len(moved) <= len(code_a) // 2   # a re-ranked top, the rest kept
    # the moved rows are paired on this thread while b's keys are sorted on another (both release the GIL)
    sorting = beside(len(code_b) if pairing else 0, sorted_b)
    paired = _paired_moved(a, code_a, code_b, moved, width, bits, kind) if pairing and moved is not None else None
    sorted_b_keys, once = sorting.result()
    if once and same_offsets:
        if pairing:
            # the rows in place match one to one, so the moved rows' documents agree exactly when
            # all rows' do: None here is the whole lists' answer too, and the search follows
            if paired is not None:
                return paired
        else:
            sorted_a = keys(a, code_a, True)
            sorted_a.sort(kind="stable")
            if _same_above(sorted_a, sorted_b_keys, bits):   # the same documents, query by query, each once
                return _paired(a, sorted_a, sorted_b_keys, bits, kind)
            del sorted_a
    wanted = keys(a, code_a, False)
    hit = np.searchsorted(sorted_b_keys, wanted)
    np.minimum(hit, len(sorted_b_keys) - 1, out=hit)
    found = sorted_b_keys[hit]
    del hit
    found ^= wanted   # the position where the (query, code) bits agree, larger than any position elsewhere
    found[found >= (1 << bits)] = -1
    return found.astype(kind), once, None


def _each_once(key: np.ndarray, bits: int) -> bool:
    """Whether no two neighbours of the sorted ``key`` agree above their ``bits`` low bits (no
    (query, document) twice), read :data:`SLICE` rows at a time."""
    for at in range(0, max(len(key) - 1, 0), SLICE):
        high = key[at:at + SLICE + 1] >> bits
        if np.any(high[1:] == high[:-1]):
            return False
    return True


def _same_above(x: np.ndarray, y: np.ndarray, bits: int) -> bool:
    """Whether ``x`` and ``y`` agree above their ``bits`` low bits, read :data:`SLICE` rows at a time."""
    if len(x) != len(y):
        return False
    return all(np.array_equal(x[at:at + SLICE] >> bits, y[at:at + SLICE] >> bits) for at in range(0, len(x), SLICE))


def _paired_moved(a: Ranked, code_a: np.ndarray, code_b: np.ndarray, moved: np.ndarray, width: int,
                  bits: int, kind: type[np.integer] = np.int64) -> tuple[np.ndarray, bool, np.ndarray] | None:
    """:func:`_paired` for two rankings with the same offsets that hold the same document in every
    row but ``moved``, ``b`` listing each document once per query: a row kept in place is found at
    its own position both ways, and only the moved rows are sorted and paired (a tenth of the rows
    when the top 100 of 1,000 is re-ranked). None when the moved rows of a query are not the same
    documents in both (then a document came from outside, or ``a`` lists one twice)."""
    query = np.searchsorted(a.offsets, moved, side="right") - 1   # an empty query's offset is the next one's
    position = moved - a.offsets[query]
    base = query * width

    def moved_keys(code: np.ndarray) -> np.ndarray:
        key = base + code[moved]
        key <<= bits
        key |= position
        key.sort()
        return key

    sorted_a, sorted_b = moved_keys(code_a), moved_keys(code_b)
    if not np.array_equal(sorted_a >> bits, sorted_b >> bits):
        return None
    start = a.offsets[(sorted_a >> bits) // width].astype(np.int64)   # the first row of each key's query
    mask = (1 << bits) - 1
    sorted_a &= mask
    sorted_b &= mask
    out = positions(a.offsets, out=np.empty(len(code_a), dtype=kind))
    back = out.copy()
    out[sorted_a + start] = sorted_b
    back[sorted_b + start] = sorted_a
    return out, True, back


def _paired(a: Ranked, sorted_a: np.ndarray, sorted_b: np.ndarray, bits: int,
            kind: type[np.integer] = np.int64) -> tuple[np.ndarray, bool, np.ndarray]:
    """Both directions of :func:`rank_in` for two rankings with the same offsets whose sorted keys
    agree above their ``bits`` low (position) bits: the i-th sorted key of either is the same document
    of the same query, at the positions in the low bits; sorted keys keep the queries' order, so the
    row of a position is its query's first row plus it."""
    mask = (1 << bits) - 1
    sorted_a &= mask   # the positions, in place: a page fault per page of every new 7M-row array
    sorted_b &= mask
    start = np.repeat(a.offsets[:-1].astype(np.int64), a.lengths)
    out, back = np.empty(len(sorted_a), dtype=kind), np.empty(len(sorted_b), dtype=kind)
    rows = sorted_a + start
    out[rows] = sorted_b
    np.add(sorted_b, start, out=rows)
    back[rows] = sorted_a
    return out, True, back
