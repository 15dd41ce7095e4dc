"""A run in canonical order joined with the qrels.

The result, :class:`Ranked`, is a set of flat numpy arrays: the grade of every
retrieved document in canonical order, with ``offsets`` marking where each
query's list starts, plus every query's judged grades for the ideal ranking.
All measure kernels are vectorised passes over these arrays.

The order is trec_eval 10's (:mod:`metrics.ordering`): score descending in float64, ties broken
by docno descending as byte strings (strcmp); ``ties="rank"`` orders by the rank column instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from . import ordering
from .beside import beside
from .errors import MetricsError
from .ordering import Docnos, offsets_of, plain_strings, positions, run_heads, single_array, take

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



def _sorted_unique_strings(values: pa.Array) -> pa.Array:
    unique = pc.unique(values)
    return unique.take(pc.sort_indices(unique))


def _codes(values: pa.Array, dictionary: pa.Array) -> np.ndarray:
    """Index of every value in ``dictionary`` (-1 where absent), via a hash lookup."""
    idx = pc.index_in(values, value_set=dictionary)
    return idx.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)




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
    docno = plain_strings(rt.column("docno"))   # in file order: strings are taken for tied rows only
    # one hash probe per row, in file order, for the docnos judged for some query: on a second
    # thread while the rows are put in order (the probe does not depend on the order)
    judged_docs = pc.unique(q_doc)
    probing = beside(len(docno), pc.is_in, docno, value_set=judged_docs)
    r_qcode = _query_codes(plain_strings(rt.column("qid")), qids)
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

    order, r_qcode, primary = ordering.canonical_arrays(r_qcode, score, Docnos(docno, rows), rank_col, ties)
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
    q_qid, q_doc = single_array(qt.column("qid")), single_array(qt.column("docno"))
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
        source = plain_strings(docnos.source)
        code = _numpy(pc.index_in(source, value_set=docs).fill_null(-1), np.int64)
        if docnos.rows is not None:
            code = code[docnos.rows]
        rows = np.flatnonzero(code >= 0)
        base = len(self._docs)
        self._docs = pa.concat_arrays([self._docs, single_array(docs)])
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
    p_qid, p_doc = single_array(proxy.column("qid")), single_array(proxy.column("docno"))
    p_rel = proxy.column("rel").to_numpy().astype(np.int64)
    real = pa.table({"qid": q_qid, "docno": q_doc})
    extra = pa.table({"qid": p_qid, "docno": p_doc, "rel": p_rel, "i": np.arange(len(p_rel))})
    known_q = pc.is_in(p_qid, value_set=pc.unique(q_qid))
    extra = extra.filter(known_q)
    extra = extra.join(real, keys=["qid", "docno"], join_type="left anti", use_threads=False)
    extra = extra.sort_by("i")
    return (
        pa.concat_arrays([q_qid, single_array(extra.column("qid"))]),
        pa.concat_arrays([q_doc, single_array(extra.column("docno"))]),
        np.concatenate([q_rel, extra.column("rel").to_numpy().astype(np.int64)]),
        np.concatenate([np.zeros(len(q_rel), dtype=bool), np.ones(extra.num_rows, dtype=bool)]),
    )
