"""The vectorised kernels of :mod:`metrics.analysis.fusion`: the pool of candidates and the
combinations, over all queries at once (no Python loop over queries; loops run over the
handful of inputs, and Condorcet's over chunks of whole queries).

Formulas, normalisations and tie rules are stated in :mod:`metrics.analysis.fusion`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from ..beside import beside
from ..errors import MetricsError
from ..evaluation import as_runs
from ..ordering import canonical_order, offsets_of, positions
from ..ranking import Ranked
from .codes import chunks_of, encode

__all__ = ["PAIR_BUDGET", "Pool", "RankedInput", "combine", "positive_int", "prepare"]

PAIR_BUDGET = 1 << 22   # document pairs per Condorcet chunk (bounds its memory, ~100 MB)


@dataclass
class Pool:
    """The inputs of a fusion after canonical ordering and the depth cut, grouped by document.

    Row arrays hold every (input, query, document) taking part, concatenated input by input;
    ``group`` maps each row to its (query, document) candidate. Built once by :func:`prepare`,
    then combined by any method (a sweep reuses it for every setting).

    Codes, ranks and groups are held in the narrowest integer type that holds their largest value
    (:func:`code_type`: the input index in one byte, the rest in four for fewer than 2^31 rows),
    scores as given (float64): two 7M-line runs take 0.4 GB instead of 0.7. The kernels widen a
    code where arithmetic could overflow it, so every value is what int64 codes give.
    """

    names: list
    digests: list
    depth: int | None
    qids: pa.Array                # sorted query ids (the union over the inputs)
    source: np.ndarray            # input index per row
    qcode: np.ndarray             # query code per row
    rank: np.ndarray              # canonical 1-based rank per row
    score: np.ndarray             # raw score per row
    group: np.ndarray             # candidate per row
    group_qcode: np.ndarray       # query code per candidate (ascending)
    group_docno: pa.Array         # docno per candidate
    query_offsets: np.ndarray     # candidates of query j: group_offsets[j]:group_offsets[j+1]
    per_input: np.ndarray         # (inputs, queries): documents of input i for query j
    partial: list = field(default_factory=list)   # queries some input lacks

    @property
    def n_inputs(self) -> int:
        return len(self.names)

    @property
    def n_groups(self) -> int:
        return len(self.group_qcode)


@dataclass(frozen=True)
class RankedInput:
    """A stored run given by its ranking against some qrels (:class:`metrics.ranking.Ranked`, the
    canonical order fusion needs, memory-mapped in a workspace), for :func:`prepare`: only when no
    query of the run was left out of it (every line of the run is a row of ``ranked``), with the
    run's name and digest."""

    name: str
    digest: str
    ranked: Ranked


@dataclass
class _Input:
    """One input in canonical order: its sorted query ids with a row count each, and per row its
    score and where its docno is (``rows`` into the concatenated ``docnos`` chunks; None: all)."""

    name: str
    digest: str
    qids: pa.Array
    lengths: np.ndarray
    score: np.ndarray
    docnos: list
    rows: np.ndarray | None


def _of_run(run) -> _Input:
    qid = _as_array(run.table["qid"])
    qids = _as_array(pc.unique(qid))
    qids = qids.take(pc.sort_indices(qids))
    qcode = pc.index_in(qid, value_set=qids).to_numpy(zero_copy_only=False).astype(code_type(len(qids)))
    score = run.table["score"].to_numpy()
    docno = _as_array(run.table["docno"])
    order = canonical_order(qcode, score, docno)
    if order is not None:
        score = score[order]
    return _Input(run.name, run.digest, qids, np.bincount(qcode, minlength=len(qids)), score, [docno], order)


def _of_ranked(given: RankedInput) -> _Input:
    ranked = given.ranked
    lengths = ranked.lengths
    kept = lengths > 0   # the qrels' queries the run lacks have no rows
    column = ranked.docnos()
    return _Input(given.name, given.digest, pa.array(np.asarray(ranked.qids)[kept].astype(str).tolist(), pa.string()),
                  lengths[kept], np.asarray(ranked.score), chunks_of(column.source), column.rows)


def prepare(runs, *, depth: int | None = None, on_duplicate: str = "error") -> Pool:
    """Order every input canonically, cut it at ``depth`` and group rows by (query, document).

    ``runs``: a list of runs or a {name: run} mapping, in any form ``metrics.io.read_run`` takes, or
    a list of :class:`RankedInput` (already in canonical order: neither parsed nor sorted again).
    """
    if isinstance(runs, Mapping):   # {name: run}; each value may itself be a {qid: {docno: score}} dict
        runs = [io.read_run(run, name=str(key), on_duplicate=on_duplicate) for key, run in runs.items()]
    if isinstance(runs, list) and runs and all(isinstance(r, RankedInput) for r in runs):
        inputs = [_of_ranked(r) for r in runs]
    else:
        parsed = as_runs(list(runs) if not isinstance(runs, (str, bytes)) else runs, on_duplicate=on_duplicate)
        inputs = [_of_run(r) for r in parsed]
    if len(inputs) < 2:
        raise MetricsError(f"fusion needs at least two runs, got {len(inputs)}", fix="give two or more runs")
    if depth is not None:
        depth = positive_int(depth, "depth")
    qids = _as_array(pc.unique(pa.chunked_array([i.qids for i in inputs], type=pa.string())))
    qids = qids.take(pc.sort_indices(qids))
    n_q = len(qids)
    query_type, source_type = code_type(n_q), code_type(len(inputs))
    per_input = np.zeros((len(inputs), n_q), dtype=np.int64)
    blocks = []
    for i, one in enumerate(inputs):
        block = pc.index_in(one.qids, value_set=qids).to_numpy(zero_copy_only=False).astype(query_type)
        if np.any(block[1:] <= block[:-1]):   # a ranking's queries come in the order of their ids
            raise MetricsError(f"{one.name}: its queries are not in the order of their ids",
                               fix="give the run itself, or its ranking by metrics.ranking.rank")
        per_input[i, block] = one.lengths if depth is None else np.minimum(one.lengths, depth)
        blocks.append(block)
    # the pool's rows, input by input, each input's written into its part by :func:`_fill` (a half
    # of the inputs on a second thread); the types are those of the inputs' own arrays concatenated
    starts = offsets_of(per_input.sum(axis=1))
    n = int(starts[-1])
    source = np.empty(n, dtype=source_type)
    qcode = np.empty(n, dtype=query_type)
    rank = np.empty(n, dtype=code_type(max(int(one.lengths.max(initial=0)) for one in inputs)))
    score = np.empty(n, dtype=np.result_type(*(one.score.dtype for one in inputs)))
    bases = offsets_of(np.array([sum(len(chunk) for chunk in one.docnos) for one in inputs], dtype=np.int64))
    # into the inputs' docno chunks, concatenated; int32 where they fit, and later the sort's
    # permutation (:func:`_unique_inverse`), so that its pages are not new ones
    rows = np.empty(n, dtype=np.int32 if max(int(bases[-1]), n) < 2**31 else np.int64)
    parts = [(inputs[i], blocks[i], depth, i, int(bases[i]),
              *(column[starts[i]:starts[i + 1]] for column in (source, qcode, rank, score, rows)))
             for i in range(len(inputs))]
    half = len(inputs) // 2
    early = beside(int(starts[half]), _fill_all, parts[:half])
    _fill_all(parts[half:])
    early.result()
    del parts
    docnos = [chunk for one in inputs for chunk in one.docnos]
    coded = encode(docnos, groups=[len(one.docnos) for one in inputs])   # the inputs' numbers read two at once
    n_docs = int(coded.codes.max(initial=0)) + 1
    if n_q * n_docs >= 2**62:   # numbers too large for one int64 key: a dictionary's codes, below the rows
        coded = encode(docnos, numbers=False)
        n_docs = int(coded.codes.max(initial=0)) + 1
    del docnos
    key = _keys(qcode, coded.codes, rows, n_docs)
    unique_key, group = _unique_inverse(key, scratch=rows)
    del rows
    del key
    group_docno = coded.strings(unique_key % n_docs)
    del coded
    group_qcode = (unique_key // n_docs).astype(query_type)
    del unique_key
    query_offsets = offsets_of(np.bincount(group_qcode, minlength=n_q))
    lacking = (per_input == 0).any(axis=0)
    return Pool(
        names=[i.name for i in inputs], digests=[i.digest for i in inputs], depth=depth, qids=qids,
        source=source, qcode=qcode, rank=rank, score=score, group=group.astype(code_type(len(group_qcode)), copy=False),
        group_qcode=group_qcode, group_docno=group_docno, query_offsets=query_offsets,
        per_input=per_input, partial=qids.filter(pa.array(lacking)).to_pylist())


def _fill_all(parts: list) -> None:
    for part in parts:
        _fill(*part)


def _fill(one: _Input, block: np.ndarray, depth: int | None, index: int, base: int, source: np.ndarray,
          qcode: np.ndarray, rank: np.ndarray, score: np.ndarray, rows: np.ndarray) -> None:
    """Input ``index``'s rows of the pool, into the given parts of its columns: its first ``depth``
    documents of every query (all without a depth), with their query codes (``block``: one per
    query of the input), 1-based ranks, scores and rows in the docno chunks of every input (its
    own from ``base``)."""
    lengths = one.lengths
    cut = None
    if depth is not None and lengths.max(initial=0) > depth:
        cut = positions(offsets_of(lengths)) < depth
        lengths = np.minimum(lengths, depth)
    source[:] = index
    qcode[:] = np.repeat(block, lengths)
    positions(offsets_of(lengths), first=1, out=rank)
    score[:] = one.score if cut is None else one.score[cut]
    if one.rows is None:
        if cut is None:
            rows[:] = np.arange(base, base + len(rows), dtype=np.int64)
        else:
            rows[:] = np.flatnonzero(cut)
            rows += base
    else:
        rows[:] = one.rows if cut is None else one.rows[cut]
        rows += base


def code_type(largest: int) -> type[np.signedinteger]:
    """The narrowest signed integer type that holds 0..``largest``, and sums of two such values
    (int8, int32 or int64): the pool's codes, ranks and groups."""
    return np.int8 if largest < 2**6 else np.int32 if largest < 2**30 else np.int64


def combine(pool: Pool, method: str, *, k: float = 60, norm: str | None = "minmax",
            weights: np.ndarray | None = None) -> np.ndarray:
    """Fused score of every candidate of ``pool`` (aligned with ``pool.group_docno``).

    ``method`` is a canonical name (a key of ``metrics.analysis.fusion.METHODS``), ``norm`` a
    canonical normalisation; options are validated by ``fuse``.
    """
    w = np.ones(pool.n_inputs) if weights is None else np.asarray(weights, dtype=np.float64)
    # every weight 1 (the default): 1.0 * x and 1.0 / x are x and 1 / x to the bit, so the scalar
    # serves, with no array of every row's weight
    row_w: np.ndarray | float = 1.0 if np.all(w == 1.0) else w[pool.source]
    n_groups = pool.n_groups
    if method == "condorcet":
        return _copeland(pool, w)
    if method == "rrf":
        value = pool.rank.astype(np.float64)
        value += k
        return _sum(pool, np.divide(row_w, value, out=value))
    count = np.bincount(pool.group, minlength=n_groups)
    if method == "isr":
        return count * _sum(pool, row_w / pool.rank.astype(np.float64) ** 2)
    if method == "bordafuse":
        cands = np.diff(pool.query_offsets)                          # C per query
        # (inputs, queries): the mean of the points an input left; 0 where it lacks the query
        unranked = np.where(pool.per_input > 0, (cands[None, :] - pool.per_input + 1) / 2, 0.0)
        base = (w[:, None] * unranked).sum(axis=0)                   # every input's points to everyone
        points = cands[pool.qcode] - pool.rank + 1 - unranked[pool.source, pool.qcode]
        return base[pool.group_qcode] + _sum(pool, row_w * points)
    value = row_w * _normalise(pool, norm)
    if method in ("combsum", "wsum"):
        return _sum(pool, value)
    if method == "combmnz":
        return count * _sum(pool, value)
    if method == "combanz":
        return _sum(pool, value) / count
    if method == "combmax":
        out = np.full(n_groups, -np.inf)
        np.maximum.at(out, pool.group, value)
        return out
    if method == "combmin":
        out = np.full(n_groups, np.inf)
        np.minimum.at(out, pool.group, value)
        return out
    if method == "combmed":
        ordered = _by_group(pool, value)                             # (groups, inputs), +inf padding
        lo = np.take_along_axis(ordered, ((count - 1) // 2)[:, None], axis=1)[:, 0]
        hi = np.take_along_axis(ordered, (count // 2)[:, None], axis=1)[:, 0]
        return (lo + hi) / 2
    raise MetricsError(f"unknown fusion method {method!r}", fix="see metrics.analysis.fusion.METHODS")


def _by_group(pool: Pool, value: np.ndarray) -> np.ndarray:
    """(candidates, inputs) matrix of the rows' values, each row sorted ascending, +inf where absent."""
    dense = np.full((pool.n_groups, pool.n_inputs), np.inf)
    dense[pool.group, pool.source] = value
    dense.sort(axis=1)
    return dense


def _sum(pool: Pool, value: np.ndarray) -> np.ndarray:
    """Per-candidate sum of the rows' values, in ascending order of the values (see the docstring).

    With two inputs a + b == b + a exactly, so a bincount suffices; beyond, the rows of each
    candidate are sorted first.
    """
    if pool.n_inputs <= 2:
        # the first input's rows on a second thread: its sums and the second's, each from 0.0, add
        # to the one bincount's (0.0 + x) + y, -0.0 included (0.0 + -0.0 is 0.0 either way)
        split = int(pool.per_input[0].sum())   # the pool's rows come input by input
        first = beside(split, np.bincount, pool.group[:split], weights=value[:split], minlength=pool.n_groups)
        second: np.ndarray = np.bincount(pool.group[split:], weights=value[split:], minlength=pool.n_groups)
        second += first.result()
        return second
    ordered = _by_group(pool, value)
    ordered[np.isinf(ordered)] = 0.0
    out = np.zeros(pool.n_groups)
    for j in range(pool.n_inputs):      # left to right, smallest first: the order is the multiset's
        out += ordered[:, j]
    return out


def _normalise(pool: Pool, norm: str | None) -> np.ndarray:
    """Scores normalised per query and per input run (segments of equal (input, query))."""
    s = pool.score
    if norm == "none":
        return s.astype(np.float64, copy=True)
    n_q = len(pool.qids)
    seg = pool.source.astype(np.int64) * n_q + pool.qcode   # rows of one segment are contiguous
    n = pool.per_input.ravel()[seg].astype(np.float64)
    if norm == "rank":
        return 1.0 - (pool.rank - 1) / n
    size = pool.n_inputs * n_q
    if norm in ("minmax", "sum", "max"):
        lo = np.full(size, np.inf)
        hi = np.full(size, -np.inf)
        np.minimum.at(lo, seg, s)
        np.maximum.at(hi, seg, s)
        lo, hi = lo[seg], hi[seg]
        if norm == "minmax":
            span = hi - lo
            return np.divide(s - lo, span, out=np.ones_like(s), where=span > 0)
        if norm == "max":
            bad = hi <= 0
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise MetricsError(
                    f"max normalisation divides by the top score, but run {pool.names[pool.source[row]]!r} "
                    f"has top score {hi[row]:g} for query {pool.qids[int(pool.qcode[row])].as_py()!r}",
                    fix="use minmax or zscore for scores that can be zero or negative")
            return s / hi
        shifted = s - lo
        total = np.bincount(seg, weights=shifted, minlength=size)[seg]
        return np.divide(shifted, total, out=1.0 / n, where=total > 0)
    if norm == "zscore":
        mean = (np.bincount(seg, weights=s, minlength=size) / np.maximum(pool.per_input.ravel(), 1))[seg]
        dev = s - mean
        std = np.sqrt(np.bincount(seg, weights=dev * dev, minlength=size)[seg] / n)
        return np.divide(dev, std, out=np.zeros_like(s), where=std > 0)
    raise MetricsError(f"unknown normalisation {norm!r}", fix="use none, minmax, zscore, sum, max or rank")


def _copeland(pool: Pool, w: np.ndarray) -> np.ndarray:
    """Copeland score (wins − losses in weighted pairwise majorities) of every candidate.

    Pairs are formed within each query, a chunk of whole queries at a time (at most
    ``PAIR_BUDGET`` pairs, unless one query alone has more): the cost is Σ C²/2 · inputs
    per query with C candidates, so ``depth`` bounds it.
    """
    n_groups = pool.n_groups
    absent = np.iinfo(np.int64).max
    ranks = np.full((n_groups, pool.n_inputs), absent, dtype=np.int64)
    ranks[pool.group, pool.source] = pool.rank
    score = np.zeros(n_groups)
    cands = np.diff(pool.query_offsets)
    pairs = cands * (cands - 1) // 2
    cum = np.concatenate(([0], np.cumsum(pairs)))
    q, n_q = 0, len(cands)
    while q < n_q:
        end = max(int(np.searchsorted(cum, cum[q] + PAIR_BUDGET, side="right")) - 1, q + 1)
        end = min(end, n_q)
        g0, g1 = int(pool.query_offsets[q]), int(pool.query_offsets[end])
        first = np.arange(g0, g1)
        query_end = np.repeat(pool.query_offsets[q + 1:end + 1], cands[q:end])
        partners = query_end - first - 1
        total = int(partners.sum())
        if total:
            a = np.repeat(first, partners)
            starts = np.cumsum(partners) - partners
            b = a + 1 + np.arange(total) - np.repeat(starts, partners)
            margin = np.zeros(total)
            for i in range(pool.n_inputs):
                margin += w[i] * np.sign(ranks[b, i] - ranks[a, i]).astype(np.float64)   # > 0: a above b
            win = (margin > 0).astype(np.float64) - (margin < 0)
            score += np.bincount(a, weights=win, minlength=n_groups)
            score -= np.bincount(b, weights=win, minlength=n_groups)
        q = end
    return score


def positive_int(value, what: str) -> int:
    """``value`` as an int if it is a whole number >= 1, else an error naming ``what``."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or number != value:
        raise MetricsError(f"{what} must be a whole number >= 1, got {value!r}", fix=f"e.g. {what}=100")
    return number


def _unique_inverse(key: np.ndarray, scratch: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(key, return_inverse=True)`` by one stable sort: the inputs' rows come query by
    query, which timsort keeps (3.3-3.5 s -> 1.0-1.3 s for the 14M rows of two 7M-line runs); of the
    keys with their rows in their low bits where both fit in 63 bits (MS MARCO's 37 + 24), in place
    (``key`` is the caller's scratch, changed here). The inverse comes in the narrowest type of its
    groups (:func:`code_type`), as the pool keeps it.

    Few new arrays of the rows' length: on a virtual machine whose freed memory goes back to the
    host, each page of a new array is a fault to the host, 2.6 s a GB against 0.22 s for pages the
    process touched moments before (bench/RESULTS.md). ``scratch``: an array of ``n`` rows the caller
    no longer needs (changed here), whose memory holds the permutation when its type is the
    permutation's; and the keys' own memory, once sorted and their groups' keys taken, holds the
    groups' numbers."""
    n = len(key)
    bits = max((n - 1).bit_length(), 1)
    index = np.int32 if n < 2**31 else np.int64
    if n and key.min() >= 0 and int(key.max()) < 1 << (63 - bits):
        # each key with its row in the low bits: a sort of values, not of indices (no gather through
        # the permutation), in the same order as the stable argsort, as the rows break the ties
        packed = key

        def pack_and_sort(lo: int, hi: int) -> None:
            part = packed[lo:hi]
            part <<= bits
            for start in range(lo, hi, _ROW_BLOCK):   # the rows a block at a time: no arange of n rows
                stop = min(start + _ROW_BLOCK, hi)
                packed[start:stop] |= np.arange(start, stop, dtype=np.int64)
            part.sort(kind="stable")

        _halves(n, pack_and_sort)   # two sorted halves
        packed.sort(kind="stable")   # their merge: timsort finds the two runs
        reuse = scratch is not None and scratch.dtype == index and len(scratch) == n
        perm = scratch if reuse else np.empty(n, dtype=index)
        np.bitwise_and(packed, (1 << bits) - 1, out=perm, casting="unsafe")   # the rows, < 2**bits: they fit
        packed >>= bits
        ordered = packed
    else:
        perm = np.argsort(key, kind="stable")
        ordered = key[perm]
    first = np.empty(n, dtype=bool)
    first[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    unique = ordered[first]   # the keys of the groups
    # their numbers, in the sorted keys' memory (the caller's scratch, or this function's own)
    group = ordered.view(index)[:n] if ordered.dtype.itemsize >= np.dtype(index).itemsize \
        and ordered.flags.c_contiguous else np.empty(n, dtype=index)
    np.cumsum(first, dtype=index, out=group)
    np.subtract(group, 1, out=group)
    inverse = np.empty(n, dtype=code_type(int(group[-1]) if n else 0))
    inverse[perm] = group
    return unique, inverse


_ROW_BLOCK = 2**20
"""Rows of one block of row numbers in :func:`_unique_inverse`."""


def _keys(qcode: np.ndarray, codes: np.ndarray, rows: np.ndarray, n_docs: int) -> np.ndarray:
    """qcode * n_docs + codes[rows], as int64, a half on each of two threads (:func:`_halves`), into
    one new array: from here the keys are changed in place, as each new array of 14M rows costs
    its page faults."""
    key = np.empty(len(qcode), dtype=np.int64)

    def fill(lo: int, hi: int) -> None:
        part = key[lo:hi]
        np.multiply(qcode[lo:hi], n_docs, out=part, dtype=np.int64)
        part += codes[rows[lo:hi]]

    _halves(len(key), fill)
    return key


def _halves(n: int, work) -> None:
    """``work(lo, hi)`` on the first half of ``range(n)`` on a second thread (when ``n`` is large:
    :func:`metrics.beside.beside`) and on the second half on this one; numpy's loops and sorts
    release the GIL, so two cores take half the time."""
    half = n // 2
    early = beside(half, work, 0, half)
    work(half, n)
    early.result()


def _as_array(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col
