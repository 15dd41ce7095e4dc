"""Canonical ordering of a run and its join with the qrels.

The result, :class:`Ranked`, is a set of flat numpy arrays: the grade of every
retrieved document in canonical order, with ``offsets`` marking where each
query's list starts, plus every query's judged grades for the ideal ranking.
All measure kernels are vectorised passes over these arrays.

Order (trec_eval 10): score descending in float64, ties broken by docno
descending as byte strings (strcmp), the rank column ignored. ``ties="rank"``
orders by the rank column instead (ties there again by docno descending).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .beside import beside
from .errors import MetricsError

UNJUDGED = 0  # grade stored for unjudged documents (their ``judged`` flag is False)


@dataclass
class Ranked:
    """One run after canonical ordering and the join with the qrels.

    Arrays are aligned per retrieved document (``rel``, ``judged``,
    ``inferred``, ``score``, ``docno``) in canonical order; query ``i`` owns
    ``offsets[i]:offsets[i+1]``. ``ideal_rel`` holds every labelled grade of
    query ``i`` at ``ideal_offsets[i]:ideal_offsets[i+1]`` (unsorted).

    ``docno`` may be given as :class:`Docnos` (rows of the run's column): the strings are then
    taken on first access only. No measure reads them, so evaluating never copies them.
    """

    name: str
    qids: np.ndarray
    offsets: np.ndarray
    rel: np.ndarray
    judged: np.ndarray
    inferred: np.ndarray
    score: np.ndarray
    docno: pa.Array
    ideal_offsets: np.ndarray
    ideal_rel: np.ndarray
    missing: np.ndarray  # per query: True when the run retrieved nothing for it
    judged_only: bool = False  # True for a condensed list (unjudged documents removed, trec_eval -J)
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        if isinstance(self.docno, Docnos):
            self._cache["docnos"] = self.__dict__.pop("docno")

    def __getattr__(self, name: str):
        # Reached only for an attribute not set: ``docno`` given as Docnos and not yet taken.
        lazy = self.__dict__.get("_cache", {}).get("docnos") if name == "docno" else None
        if lazy is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        self.docno = lazy.array()
        return self.docno

    def docnos(self) -> Docnos:
        """The docno column as :class:`Docnos`, without taking strings that were not taken yet."""
        return Docnos(self.__dict__["docno"]) if "docno" in self.__dict__ else self._cache["docnos"]

    @property
    def n_queries(self) -> int:
        return len(self.qids)

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def condensed(self) -> Ranked:
        """The run with unjudged documents removed (trec_eval ``-J``, ``judged_only``).

        As in trec_eval, a document judged with a negative grade counts as
        "in the pool but unjudged" and is removed too.
        """
        if "condensed" not in self._cache:
            keep = self.judged & (self.rel >= 0)
            self._cache["condensed"] = self._filtered(keep, judged_only=True)
        return self._cache["condensed"]

    def truncated(self, depth: int) -> Ranked:
        """Only the first ``depth`` documents of every query (trec_eval ``-M``)."""
        return self._filtered(positions(self.offsets) < depth)

    def _filtered(self, keep: np.ndarray, judged_only: bool = False) -> Ranked:
        query_index = np.repeat(np.arange(self.n_queries), self.lengths)
        offsets = offsets_of(np.bincount(query_index[keep], minlength=self.n_queries))
        return Ranked(
            name=self.name, qids=self.qids, offsets=offsets, rel=self.rel[keep],
            judged=self.judged[keep], inferred=self.inferred[keep], score=self.score[keep],
            docno=self.docnos().subset(np.flatnonzero(keep)), ideal_offsets=self.ideal_offsets,
            ideal_rel=self.ideal_rel, missing=self.missing, judged_only=self.judged_only or judged_only,
        )


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
        parts = [_as_string(values.chunk(i)).take(pa.array(rows[by_chunk[a:b]] - starts[i]))
                 for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])) if b > a]
        taken = pa.concat_arrays(parts) if parts else pa.array([], _as_string(values.chunk(0)).type)
        if len(rows) > 1 and np.any(by_chunk[1:] < by_chunk[:-1]):
            back = np.empty(len(rows), dtype=np.int64)
            back[by_chunk] = np.arange(len(rows))
            taken = taken.take(pa.array(back))
        return taken
    values = _chunked(values)
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


def _sorted_unique_strings(values: pa.Array) -> pa.Array:
    unique = pc.unique(values)
    return unique.take(pc.sort_indices(unique))


def _codes(values: pa.Array, dictionary: pa.Array) -> np.ndarray:
    """Index of every value in ``dictionary`` (-1 where absent), via a hash lookup."""
    idx = pc.index_in(values, value_set=dictionary)
    return idx.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def _as_string(col):
    """``col`` (an array or a chunked array) with large or view strings cast to plain strings."""
    if pa.types.is_large_string(col.type) or pa.types.is_string_view(col.type):
        col = col.cast(pa.string())
    return col


def _chunked(col) -> pa.Array:
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
    return _canonical(qcode, score, Docnos(docno), rank, ties, distinct)[0]


def _canonical(qcode: np.ndarray, score: np.ndarray, docno: Docnos, rank: np.ndarray | None,
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


def _query_codes(qid: pa.Array, qids: pa.Array) -> np.ndarray:
    """Index of every row's qid in the sorted ``qids`` (-1 if absent).

    Runs come in blocks of one query, so only the first row of each block is
    looked up (a hash lookup per block instead of per row).
    """
    n = len(qid)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    heads, lengths = run_heads(qid)
    codes = _codes(take(qid, heads), qids).astype(np.int32)
    return np.repeat(codes, lengths)


def _numpy(column, dtype) -> np.ndarray:
    array = column.to_numpy() if isinstance(column, pa.ChunkedArray) else column.to_numpy(zero_copy_only=False)
    return np.asarray(array, dtype=dtype)


RELEASE_ROWS = 1 << 21
"""A run of at least this many rows hands Arrow's freed memory back to the system while it is
ranked (a 7M-line run's peak is lower by it). A smaller one leaves it to the pool, for the next
call: the streaming engine ranks batches of 1M rows one after another, and giving the memory
back each time and touching it again cost it 0.6 s of 10 on the 50M-line bench run."""


def rank(run, qrels, *, missing: str = "zero", ties: str = "score", max_depth: int | None = None,
         inferred=None, name: str | None = None) -> Ranked:
    """Order ``run`` canonically and join it with ``qrels`` (and optional proxy labels).

    ``run`` and ``qrels`` are parsed :class:`metrics.io.Run` / ``Qrels``.
    Queries are those of the qrels, sorted as strings; with ``missing="zero"``
    a query the run lacks is kept with an empty list (trec_eval ``-c``), with
    ``missing="skip"`` it is dropped. Run queries absent from the qrels are
    ignored (``metrics.lint`` reports them).
    """
    if ties not in ("score", "rank"):
        raise MetricsError(f"ties={ties!r} is not an option", fix="use ties='score' or ties='rank'")
    qids, q_code, q_doc, q_rel, q_inferred = _coded_judgments(qrels, inferred, missing)

    rt = run.table
    label: str = name if name else getattr(run, "name", "run")
    docno = _as_string(rt.column("docno"))   # in file order: strings are taken for tied rows only
    # one hash probe per row, in file order, for the docnos judged for some query: on a second
    # thread while the rows are put in order (the probe does not depend on the order)
    judged_docs = pc.unique(q_doc)
    probing = beside(len(docno), pc.is_in, docno, value_set=judged_docs)
    r_qcode = _query_codes(_as_string(rt.column("qid")), qids)
    score = _numpy(rt.column("score"), np.float64)
    rank_col = _numpy(rt.column("rank"), np.int64) if ties == "rank" and "rank" in rt.column_names else None
    del run, rt   # a caller that passed its last reference frees the run's other columns here,
    large = len(docno) >= RELEASE_ROWS
    if large:     # and hands their memory back before the arrays below
        pa.default_memory_pool().release_unused()
    rows = None   # the file row of every row kept, in the current order (None: all, in file order)
    keep = r_qcode >= 0
    if not keep.all():
        rows = np.flatnonzero(keep)
        r_qcode, score = r_qcode[rows], score[rows]
        rank_col = rank_col[rows] if rank_col is not None else None
    del keep

    order, r_qcode, primary = _canonical(r_qcode, score, Docnos(docno, rows), rank_col, ties)
    if order is not None:
        rows = order if rows is None else rows[order]
        score = primary if ties == "score" else score[order]
    del order, primary, rank_col
    if large:
        pa.default_memory_pool().release_unused()   # scratch of the reordering, back to the system

    n_q = len(qids)
    counts = np.bincount(r_qcode, minlength=n_q)
    offsets = offsets_of(counts)
    if max_depth is not None and counts.max(initial=0) > max_depth:
        cut = np.flatnonzero(positions(offsets) < max_depth)
        r_qcode, score = r_qcode[cut], score[cut]
        rows = cut if rows is None else rows[cut]
        counts = np.minimum(counts, max_depth)
        np.cumsum(counts, out=offsets[1:])
    docnos = Docnos(docno, rows)

    # Join: the rows whose docno is judged for some query (probed above), then (query, doc) pairs
    # matched for those rows only.
    in_qrels = _numpy(probing.result(), bool)
    candidates = np.flatnonzero(in_qrels if rows is None else in_qrels[rows])
    del in_qrels
    r_dcode = _codes(docnos.take(candidates), judged_docs)
    labels = join_labels(len(r_qcode), candidates, r_qcode[candidates], r_dcode, q_code,
                         _codes(q_doc, judged_docs), q_rel, q_inferred, len(judged_docs))
    ranked = Ranked(name=label, qids=np.asarray(qids.to_pylist(), dtype=object), offsets=offsets, score=score,
                    docno=docnos, missing=counts == 0, **labels, **ideal_of(q_code, q_rel, n_q))
    if missing == "skip" and ranked.missing.any():
        ranked = _drop_queries(ranked, ~ranked.missing)
    return ranked


def join_labels(n_rows: int, candidates: np.ndarray, c_qcode: np.ndarray, c_dcode: np.ndarray, q_code: np.ndarray,
                q_dcode: np.ndarray, q_rel: np.ndarray, q_inferred: np.ndarray, n_docs: int) -> dict:
    """``rel``, ``judged`` and ``inferred`` of ``n_rows`` ranked rows: the rows ``candidates`` (query code
    ``c_qcode``, docno code ``c_dcode``) matched with the judgments' (query code ``q_code``, docno code
    ``q_dcode``) pairs, on integer keys; docno codes index one dictionary of ``n_docs`` strings."""
    n_d = max(n_docs, 1)
    q_key = q_code * n_d + q_dcode
    key_order = np.argsort(q_key, kind="stable")
    q_key_sorted = q_key[key_order]
    c_key = c_qcode.astype(np.int64) * n_d + c_dcode  # int64: codes x docs passes 2**31
    hit = np.minimum(np.searchsorted(q_key_sorted, c_key), max(len(q_key_sorted) - 1, 0))
    found = q_key_sorted[hit] == c_key if len(q_key_sorted) else np.zeros(len(c_key), dtype=bool)
    hits, src = candidates[found], key_order[hit[found]]
    judged = np.zeros(n_rows, dtype=bool)
    judged[hits] = True
    rel = np.full(n_rows, UNJUDGED, dtype=np.int64)
    rel[hits] = q_rel[src]
    inferred = np.zeros(n_rows, dtype=bool)
    inferred[hits] = q_inferred[src]
    return {"rel": rel, "judged": judged, "inferred": inferred}


def ideal_of(q_code: np.ndarray, q_rel: np.ndarray, n_queries: int) -> dict:
    """``ideal_offsets`` and ``ideal_rel`` of a :class:`Ranked`: every judged grade, grouped by query code."""
    return {"ideal_offsets": offsets_of(np.bincount(q_code, minlength=n_queries)),
            "ideal_rel": q_rel[np.argsort(q_code, kind="stable")]}


def _coded_judgments(qrels, inferred, missing: str) -> tuple[pa.Array, np.ndarray, pa.Array, np.ndarray, np.ndarray]:
    """(the sorted qids, every label's query code in them, docno, rel, inferred flag) of ``qrels`` and
    ``inferred`` (:func:`_judgments`), after checking ``missing``: what :func:`rank` and :class:`Rejudge`
    join a ranking with."""
    if missing not in ("zero", "skip"):
        raise MetricsError(f"missing={missing!r} is not an option", fix="use missing='zero' or missing='skip'")
    q_qid, q_doc, q_rel, q_inferred = _judgments(qrels, inferred)
    qids = _sorted_unique_strings(q_qid)
    return qids, _codes(q_qid, qids), q_doc, q_rel, q_inferred


def _judgments(qrels, inferred) -> tuple[pa.Array, pa.Array, np.ndarray, np.ndarray]:
    """(qid, docno, rel, inferred flag) of every label: ``qrels``, and with ``inferred`` (a proxy
    qrels) its labels of the pairs the qrels leave unjudged."""
    qt = qrels.table
    q_qid, q_doc = _chunked(qt.column("qid")), _chunked(qt.column("docno"))
    q_rel = _numpy(qt.column("rel"), np.int64)
    if inferred is None:
        return q_qid, q_doc, q_rel, np.zeros(len(q_rel), dtype=bool)
    return _merge_proxy(q_qid, q_doc, q_rel, inferred.table)


class Rejudge:
    """One ranked run joined again with other judgments of its queries, without ordering it again.

    The canonical order does not depend on the judgments, so ``Rejudge(ranked)(qrels)`` equals
    ``rank(run, qrels)`` array for array when ``ranked`` is ``rank(run, full)`` (``missing="zero"``,
    not condensed) and ``qrels`` judges only queries of ``full``: a reduced or alternative qrels. The
    docno of every ranked row is looked up once (in the judged docnos of the first judgments given,
    extended when later ones name others); each join is then integer keys over the judged rows.
    """

    def __init__(self, ranked: Ranked):
        if ranked.judged_only:
            raise MetricsError("a condensed ranking cannot be judged again", fix="give the ranking before condensed()")
        self.ranked = ranked
        self._docs = pa.array([], pa.string())
        self._rows = np.zeros(0, dtype=np.int64)    # ranked rows whose docno is in _docs, ascending
        self._codes = np.zeros(0, dtype=np.int64)   # their index in _docs

    def _learn(self, docs: pa.Array) -> None:
        """Add the ranked rows whose docno is one of ``docs`` (docnos not seen before)."""
        docnos = self.ranked.docnos()
        source = _as_string(docnos.source)
        code = _numpy(pc.index_in(source, value_set=docs).fill_null(-1), np.int64)
        if docnos.rows is not None:
            code = code[docnos.rows]
        rows = np.flatnonzero(code >= 0)
        base = len(self._docs)
        self._docs = pa.concat_arrays([self._docs, _chunked(docs)])
        merged = np.concatenate([self._rows, rows])
        order = np.argsort(merged, kind="stable")
        self._rows = merged[order]
        self._codes = np.concatenate([self._codes, code[rows] + base])[order]

    def __call__(self, qrels, *, missing: str = "zero", inferred=None) -> Ranked:
        """The ranking joined with ``qrels`` (and ``inferred`` proxy labels), as :func:`rank` joins it."""
        qids, q_code, q_doc, q_rel, q_inferred = _coded_judgments(qrels, inferred, missing)
        ranked = self.ranked
        where = _codes(qids, pa.array(list(ranked.qids), pa.string()))
        if (where < 0).any():
            raise MetricsError(f"the judgments hold query {qids[int(np.flatnonzero(where < 0)[0])]} that the "
                               "ranking was not ordered for", fix="rank the run against these judgments")
        q_dcode = _codes(q_doc, self._docs)
        if (q_dcode < 0).any():
            self._learn(pc.unique(q_doc.filter(pa.array(q_dcode < 0))))
            q_dcode = _codes(q_doc, self._docs)
        lengths = ranked.lengths[where]
        offsets = offsets_of(lengths)
        n_rows = int(offsets[-1])
        old_query = np.searchsorted(ranked.offsets, self._rows, side="right") - 1
        new_query = np.full(ranked.n_queries, -1, dtype=np.int64)
        new_query[where] = np.arange(len(where))
        c_query = new_query[old_query]
        kept = c_query >= 0
        c_query = c_query[kept]
        candidates = self._rows[kept] - ranked.offsets[old_query[kept]] + offsets[c_query]
        if n_rows == len(ranked.score):
            score, docnos = ranked.score, ranked.docnos()
        else:
            rows = np.flatnonzero(np.repeat(new_query >= 0, ranked.lengths))
            score, docnos = ranked.score[rows], ranked.docnos().subset(rows)
        labels = join_labels(n_rows, candidates, c_query, self._codes[kept], q_code, q_dcode, q_rel, q_inferred,
                             len(self._docs))
        out = Ranked(name=ranked.name, qids=np.asarray(qids.to_pylist(), dtype=object), offsets=offsets,
                     score=score, docno=docnos, missing=lengths == 0, **labels,
                     **ideal_of(q_code, q_rel, len(qids)))
        if missing == "skip" and out.missing.any():
            out = _drop_queries(out, ~out.missing)
        return out


def _drop_queries(ranked: Ranked, keep_q: np.ndarray) -> Ranked:
    """Keep only the queries flagged in ``keep_q`` (used for ``missing="skip"``)."""
    row_keep = np.repeat(keep_q, ranked.lengths)
    ideal_keep = np.repeat(keep_q, np.diff(ranked.ideal_offsets))

    return Ranked(
        name=ranked.name, qids=ranked.qids[keep_q], offsets=offsets_of(ranked.lengths[keep_q]),
        rel=ranked.rel[row_keep], judged=ranked.judged[row_keep], inferred=ranked.inferred[row_keep],
        score=ranked.score[row_keep], docno=ranked.docnos().subset(np.flatnonzero(row_keep)),
        ideal_offsets=offsets_of(np.diff(ranked.ideal_offsets)[keep_q]),
        ideal_rel=ranked.ideal_rel[ideal_keep], missing=ranked.missing[keep_q], judged_only=ranked.judged_only,
    )


def _merge_proxy(q_qid, q_doc, q_rel, proxy: pa.Table):
    """Add proxy labels for (query, doc) pairs the qrels do not judge, flagged as inferred.

    Only queries of the real qrels are evaluated, so proxy rows of other
    queries are dropped.
    """
    p_qid, p_doc = _chunked(proxy.column("qid")), _chunked(proxy.column("docno"))
    p_rel = proxy.column("rel").to_numpy().astype(np.int64)
    real = pa.table({"qid": q_qid, "docno": q_doc})
    extra = pa.table({"qid": p_qid, "docno": p_doc, "rel": p_rel, "i": np.arange(len(p_rel))})
    known_q = pc.is_in(p_qid, value_set=pc.unique(q_qid))
    extra = extra.filter(known_q)
    extra = extra.join(real, keys=["qid", "docno"], join_type="left anti", use_threads=False)
    extra = extra.sort_by("i")
    return (
        pa.concat_arrays([q_qid, _chunked(extra.column("qid"))]),
        pa.concat_arrays([q_doc, _chunked(extra.column("docno"))]),
        np.concatenate([q_rel, extra.column("rel").to_numpy().astype(np.int64)]),
        np.concatenate([np.zeros(len(q_rel), dtype=bool), np.ones(extra.num_rows, dtype=bool)]),
    )
