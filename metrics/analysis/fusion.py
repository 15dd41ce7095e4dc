"""Fuse runs into one: rank-based and score-based data fusion, vectorised over all queries.

Semantics (the same in the library, the CLI and the dashboard):

- Ranks come from the canonical order of every input, as everywhere in nDCG Lab: score
  descending, ties broken by docno descending (byte order), the rank column ignored. ``r_i(d)``
  is the 1-based rank of document d in input i; ``n_i(q)`` the number of documents input i
  retrieved for query q (after ``depth``); ``n(d)`` the number of inputs that retrieved d.
- ``depth``: only the first ``depth`` documents of every input and query take part (default:
  every document of every input).
- Weights ``w_i`` (default 1) multiply each input's contribution; Condorcet counts them as votes.
- Queries are the union over the inputs; an input that lacks a query contributes nothing to it.
- Methods (``fused(d)``; sums run over the inputs that retrieved d):

  ==========  =========================================================================
  rrf         Σ w_i / (k + r_i(d))                      (Cormack, Clarke & Büttcher 2009)
  isr         n(d) · Σ w_i / r_i(d)²                    (Mourão, Martins & Magalhães 2015)
  bordafuse   Σ over all inputs of w_i · points_i(d), C = number of candidates of the
              query: a ranked document gets C − r_i(d) + 1 points, an unranked one the
              mean of the points left, (C − n_i(q) + 1) / 2       (Aslam & Montague 2001)
  condorcet   Copeland's rule on the pairwise majority: wins − losses, where d beats e
              when the inputs ranking d above e outweigh those ranking e above d; a
              retrieved document is above an unretrieved one, two unretrieved documents
              do not vote                               (Montague & Aslam 2002)
  combsum     Σ w_i · s_i(d)                            (Fox & Shaw 1993)
  combmnz     n(d) · Σ w_i · s_i(d)   (CombSUM times the number of inputs retrieving d)
  combmax     max w_i · s_i(d);   combmin: min;   combanz: Σ / n(d);   combmed: median
  wsum        Σ w_i · s_i(d) with explicit weights (CombSUM with weights)
  ==========  =========================================================================

  ``s_i(d)`` is input i's score after normalisation, per query and per input run, over
  the documents that take part: ``none`` (raw score), ``minmax`` ((s − min) / (max − min);
  1 when all scores of the list are equal), ``zscore`` ((s − mean) / std, population std;
  0 when the std is 0), ``sum`` ((s − min) / Σ(s − min); 1/n when all are equal), ``max``
  (s / max; the top score must be positive), ``rank`` (1 − (r_i(d) − 1) / n_i(q)).
  Score-based methods default to ``minmax``; rank-based ones ignore scores.
- Sums are taken over each document's contributions in ascending order, so a fused score
  depends only on the multiset of contributions: documents with the same contributions tie
  exactly, whatever input they came from.
- The fused run is written in score order: fused score descending, ties by docno descending
  (the canonical order, so evaluating the written run reads it in the same order), ranks
  1..n. ``keep`` cuts it to the first ``keep`` documents per query.

Differences from ranx's ``fuse`` (checked in tests/metrics/analysis/test_fusion.py):
ranx breaks ties in its inputs and its output in arbitrary order (ours: docno descending);
it requires every run to hold the same queries (ours: the union); its normalisations divide
by max(denominator, 1e-9), so an all-equal list gets 0 under min-max and sum (ours: 1 and
1/n) and max-norm of non-positive scores divides by 1e-9 (ours: an error); its z-score is
called ``zmuv`` and min-max ``min-max`` (both accepted here); its Condorcet sorts with a
pairwise comparator, so cycles are resolved by the sort algorithm, a pairwise tie goes to the
first document compared and two unranked documents give the vote to the second (ours:
Copeland, order-free). Where the pairwise majority is a strict order both give that order.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from ..errors import MetricsError
from ..evaluate import as_runs
from ..ranking import canonical_order, positions

__all__ = ["METHODS", "NORMS", "Method", "Recipe", "Fused", "fuse", "prepare", "Pool", "write_trec"]

SEMANTICS = "nDCG-Lab fusion v1"


@dataclass(frozen=True)
class Method:
    """A fusion method as data: its name, kind (rank or score), parameters and formula."""

    name: str
    kind: str                 # "rank": uses r_i(d); "score": uses normalised scores
    describe: str
    params: tuple = ()
    aliases: tuple = ()


METHODS = {m.name: m for m in (
    Method("rrf", "rank", "reciprocal rank fusion: Σ w_i / (k + r_i(d))", ("k",), ("reciprocal_rank",)),
    Method("isr", "rank", "inverse square rank: n(d) · Σ w_i / r_i(d)²"),
    Method("bordafuse", "rank", "Borda count: C − r + 1 points per ranked document, the mean of the rest "
                                "to unranked ones", (), ("borda", "w_bordafuse")),
    Method("condorcet", "rank", "Condorcet fusion by Copeland's rule: pairwise wins − losses", (),
           ("w_condorcet", "copeland")),
    Method("combsum", "score", "Σ w_i · s_i(d)", (), ("comb_sum", "sum")),
    Method("combmnz", "score", "n(d) · Σ w_i · s_i(d)", (), ("comb_mnz", "mnz")),
    Method("combmax", "score", "max_i w_i · s_i(d)", (), ("comb_max", "max")),
    Method("combmin", "score", "min over inputs retrieving d of w_i · s_i(d)", (), ("comb_min", "min")),
    Method("combanz", "score", "Σ w_i · s_i(d) / n(d)", (), ("comb_anz", "anz")),
    Method("combmed", "score", "median over inputs retrieving d of w_i · s_i(d)", (), ("comb_med", "med")),
    Method("wsum", "score", "weighted sum Σ w_i · s_i(d) (weights required)", ("weights",),
           ("weighted_sum",)),
)}

NORMS = {"none": "raw scores", "minmax": "(s − min) / (max − min)", "zscore": "(s − mean) / std",
         "sum": "(s − min) / Σ(s − min)", "max": "s / max", "rank": "1 − (r − 1) / n"}
_NORM_ALIASES = {"min-max": "minmax", "min_max": "minmax", "zmuv": "zscore", "z-score": "zscore",
                 "z_score": "zscore", "standard": "zscore", None: None}

_PAIR_BUDGET = 1 << 22   # document pairs per Condorcet chunk (bounds its memory, ~100 MB)


def method(name: str) -> Method:
    """The :class:`Method` called ``name`` (or one of its aliases, such as ranx's names)."""
    key = str(name).strip().lower().replace("-", "_")
    if key in METHODS:
        return METHODS[key]
    for m in METHODS.values():
        if key in m.aliases or key.replace("_", "") == m.name:
            return m
    raise MetricsError(f"unknown fusion method {name!r}", fix=f"use one of {', '.join(METHODS)}")


def norm_name(name: str | None) -> str | None:
    """Canonical normalisation name (``min-max`` -> ``minmax``, ``zmuv`` -> ``zscore``); None stays None."""
    key = name.strip().lower() if isinstance(name, str) else name
    key = _NORM_ALIASES.get(key, key)
    if key is not None and key not in NORMS:
        raise MetricsError(f"unknown normalisation {name!r}", fix=f"use one of {', '.join(NORMS)}")
    return key


# --------------------------------------------------------------------------- recipe


@dataclass(frozen=True)
class Recipe:
    """How a fused run was made: inputs by name and content digest, method and parameters.

    ``to_dict()`` is what exports and the workspace store; ``digest`` identifies the result
    (fusion is deterministic, so the same recipe gives the same run).
    """

    method: str
    inputs: tuple            # ((name, digest), ...)
    params: dict = field(default_factory=dict)
    semantics: str = SEMANTICS

    def to_dict(self) -> dict:
        return {"method": self.method, "inputs": [{"name": n, "digest": d} for n, d in self.inputs],
                "params": dict(self.params), "semantics": self.semantics}

    @classmethod
    def from_dict(cls, data: Mapping) -> "Recipe":
        return cls(str(data["method"]), tuple((str(i["name"]), str(i["digest"])) for i in data["inputs"]),
                   dict(data.get("params", {})), str(data.get("semantics", SEMANTICS)))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    def label(self) -> str:
        """A short description for headers: ``rrf(k=60) of bm25, dense``."""
        shown = {k: f"{v:g}" if isinstance(v, float) else str(v)
                 for k, v in self.params.items() if v is not None and k != "weights"}
        if self.params.get("weights") is not None:
            shown["weights"] = ",".join(f"{w:g}" for w in self.params["weights"])
        args = ", ".join(f"{k}={v}" for k, v in shown.items())
        return f"{self.method}({args}) of {', '.join(n for n, _ in self.inputs)}"


class Fused(NamedTuple):
    """The result of :func:`fuse`: the fused run and its recipe (unpacks as ``run, recipe``)."""

    run: io.Run
    recipe: Recipe


# --------------------------------------------------------------------------- the pool


@dataclass
class Pool:
    """The inputs of a fusion after canonical ordering and the depth cut, grouped by document.

    Row arrays hold every (input, query, document) taking part, concatenated input by input;
    ``group`` maps each row to its (query, document) candidate. Built once by :func:`prepare`,
    then combined by any method (a sweep reuses it for every setting).
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


def prepare(runs, *, depth: int | None = None, on_duplicate: str = "error") -> Pool:
    """Order every input canonically, cut it at ``depth`` and group rows by (query, document).

    ``runs``: a list of runs or a {name: run} mapping, in any form ``metrics.io.read_run`` takes.
    """
    if isinstance(runs, Mapping):   # {name: run}; each value may itself be a {qid: {docno: score}} dict
        runs = [io.read_run(run, name=str(key), on_duplicate=on_duplicate) for key, run in runs.items()]
    parsed = as_runs(list(runs) if not isinstance(runs, (str, bytes)) else runs, on_duplicate=on_duplicate)
    if len(parsed) < 2:
        raise MetricsError(f"fusion needs at least two runs, got {len(parsed)}", fix="give two or more runs")
    if depth is not None:
        depth = _positive_int(depth, "depth")
    all_qids = [_as_array(r.table["qid"]) for r in parsed]
    qids = _as_array(pc.unique(pa.chunked_array(all_qids, type=pa.string())))
    qids = qids.take(pc.sort_indices(qids))
    n_q = len(qids)
    cols = {"source": [], "qcode": [], "rank": [], "score": [], "docno": []}
    per_input = np.zeros((len(parsed), n_q), dtype=np.int64)
    for i, run in enumerate(parsed):
        qcode = pc.index_in(all_qids[i], value_set=qids).to_numpy(zero_copy_only=False).astype(np.int64)
        score = run.table["score"].to_numpy()
        docno = _as_array(run.table["docno"])
        order = canonical_order(qcode, score, docno)
        if order is not None:
            qcode, score, docno = qcode[order], score[order], docno.take(pa.array(order))
        counts = np.bincount(qcode, minlength=n_q)
        offsets = np.zeros(n_q + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        rank = positions(offsets) + 1
        if depth is not None and counts.max(initial=0) > depth:
            cut = rank <= depth
            qcode, score, rank, docno = qcode[cut], score[cut], rank[cut], docno.filter(pa.array(cut))
            counts = np.minimum(counts, depth)
        per_input[i] = counts
        cols["source"].append(np.full(len(qcode), i, dtype=np.int64))
        for name, value in (("qcode", qcode), ("rank", rank), ("score", score), ("docno", docno)):
            cols[name].append(value)
    qcode = np.concatenate(cols["qcode"])
    docno = pa.chunked_array(cols["docno"], type=pa.string()).combine_chunks()
    encoded = pc.dictionary_encode(docno)
    n_docs = max(len(encoded.dictionary), 1)
    key = qcode * n_docs + encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    unique_key, group = np.unique(key, return_inverse=True)
    group_qcode = unique_key // n_docs
    query_offsets = np.zeros(n_q + 1, dtype=np.int64)
    np.cumsum(np.bincount(group_qcode, minlength=n_q), out=query_offsets[1:])
    lacking = (per_input == 0).any(axis=0)
    return Pool(
        names=[r.name for r in parsed], digests=[r.digest for r in parsed], depth=depth, qids=qids,
        source=np.concatenate(cols["source"]), qcode=qcode, rank=np.concatenate(cols["rank"]),
        score=np.concatenate(cols["score"]), group=group.astype(np.int64), group_qcode=group_qcode,
        group_docno=encoded.dictionary.take(pa.array(unique_key % n_docs)), query_offsets=query_offsets,
        per_input=per_input, partial=qids.filter(pa.array(lacking)).to_pylist())


# --------------------------------------------------------------------------- fusing


def fuse(runs, method_name: str = "rrf", *, k: float = 60, norm: str | None = None, weights=None,
         depth: int | None = None, keep: int | None = None, name: str | None = None,
         on_duplicate: str = "error") -> Fused:
    """Fuse runs into one; see the module docstring for every formula and rule.

    ``runs``: parsed :class:`metrics.io.Run` objects, paths, frames or dicts (a list or a
    {name: run} mapping), or a :class:`Pool` from :func:`prepare` (then ``depth`` is the
    pool's). ``method_name``: a key of :data:`METHODS` or an alias (ranx's names work).
    ``k``: the RRF constant. ``norm``: a key of :data:`NORMS` for score-based methods
    (default ``minmax``). ``weights``: one per input. ``depth``: documents per input and
    query taking part. ``keep``: documents per query in the fused run. Returns
    ``Fused(run, recipe)``; the run's ``digest`` is the recipe's.
    """
    if isinstance(runs, Pool):
        if depth is not None and depth != runs.depth:
            raise MetricsError(f"the pool was prepared with depth={runs.depth}, not {depth}",
                               fix="prepare the pool with the depth wanted, or leave depth out")
        pool = runs
    else:
        pool = prepare(runs, depth=depth, on_duplicate=on_duplicate)
    m = method(method_name)
    norm = norm_name(norm)
    if m.kind == "rank" and norm not in (None, "none"):
        raise MetricsError(f"{m.name} is rank-based: it does not use scores, so norm={norm!r} does not apply",
                           fix="drop the normalisation, or pick a score-based method (combsum, combmnz, ...)")
    if m.kind == "score" and norm is None:
        norm = "minmax"
    if m.name == "wsum" and weights is None:
        raise MetricsError("wsum needs weights, one per run", fix="give weights, or use combsum (all weights 1)")
    w = _weights(weights, pool.n_inputs)
    if m.name == "rrf":
        k = float(k)
        if not np.isfinite(k) or k < 0:
            raise MetricsError(f"the RRF constant k must be a number >= 0, got {k!r}", fix="the usual value is 60")
    if keep is not None:
        keep = _positive_int(keep, "keep")
    scores = combine(pool, m, k=k, norm=norm, weights=w)
    params = {"k": k if m.name == "rrf" else None, "norm": norm if m.kind == "score" else None,
              "weights": None if weights is None else [float(x) for x in w],
              "depth": pool.depth, "keep": keep}
    recipe = Recipe(m.name, tuple(zip(pool.names, pool.digests)), {p: v for p, v in params.items() if v is not None})
    return Fused(_emit(pool, scores, name or m.name, keep, recipe), recipe)


def combine(pool: Pool, m: Method, *, k: float = 60, norm: str | None = "minmax",
            weights: np.ndarray | None = None) -> np.ndarray:
    """Fused score of every candidate of ``pool`` (aligned with ``pool.group_docno``)."""
    w = np.ones(pool.n_inputs) if weights is None else np.asarray(weights, dtype=np.float64)
    row_w = w[pool.source]
    n_groups = pool.n_groups
    count = np.bincount(pool.group, minlength=n_groups)
    if m.name == "condorcet":
        return _copeland(pool, w)
    if m.name == "rrf":
        return _sum(pool, row_w / (k + pool.rank))
    if m.name == "isr":
        return count * _sum(pool, row_w / pool.rank.astype(np.float64) ** 2)
    if m.name == "bordafuse":
        cands = np.diff(pool.query_offsets)                          # C per query
        unranked = (cands[None, :] - pool.per_input + 1) / 2         # (inputs, queries)
        base = (w[:, None] * unranked).sum(axis=0)                   # every input's points to everyone
        points = cands[pool.qcode] - pool.rank + 1 - unranked[pool.source, pool.qcode]
        return base[pool.group_qcode] + _sum(pool, row_w * points)
    value = row_w * _normalise(pool, norm)
    if m.name in ("combsum", "wsum"):
        return _sum(pool, value)
    if m.name == "combmnz":
        return count * _sum(pool, value)
    if m.name == "combanz":
        return _sum(pool, value) / count
    if m.name == "combmax":
        out = np.full(n_groups, -np.inf)
        np.maximum.at(out, pool.group, value)
        return out
    if m.name == "combmin":
        out = np.full(n_groups, np.inf)
        np.minimum.at(out, pool.group, value)
        return out
    if m.name == "combmed":
        ordered = _by_group(pool, value)                             # (groups, inputs), +inf padding
        lo = np.take_along_axis(ordered, ((count - 1) // 2)[:, None], axis=1)[:, 0]
        hi = np.take_along_axis(ordered, (count // 2)[:, None], axis=1)[:, 0]
        return (lo + hi) / 2
    raise MetricsError(f"no kernel for {m.name}")


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
        return np.bincount(pool.group, weights=value, minlength=pool.n_groups)
    ordered = _by_group(pool, value)
    ordered[np.isinf(ordered)] = 0.0
    out = np.zeros(pool.n_groups)
    for j in range(pool.n_inputs):      # left to right, smallest first: the order is the multiset's
        out += ordered[:, j]
    return out


def _normalise(pool: Pool, norm: str) -> np.ndarray:
    """Scores normalised per query and per input run (segments of equal (input, query))."""
    s = pool.score
    if norm == "none":
        return s.astype(np.float64, copy=True)
    n_q = len(pool.qids)
    seg = pool.source * n_q + pool.qcode            # rows of one segment are contiguous
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
    raise MetricsError(f"unknown normalisation {norm!r}", fix=f"use one of {', '.join(NORMS)}")


def _copeland(pool: Pool, w: np.ndarray) -> np.ndarray:
    """Copeland score (wins − losses in weighted pairwise majorities) of every candidate.

    Pairs are formed within each query, a chunk of whole queries at a time (at most
    ``_PAIR_BUDGET`` pairs, unless one query alone has more): the cost is Σ C²/2 · inputs
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
        end = max(int(np.searchsorted(cum, cum[q] + _PAIR_BUDGET, side="right")) - 1, q + 1)
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


def _emit(pool: Pool, scores: np.ndarray, name: str, keep: int | None, recipe: Recipe) -> io.Run:
    """The fused run: candidates in canonical order (fused score desc, docno desc), ranks 1..n."""
    qcode = pool.group_qcode
    order = canonical_order(qcode, scores, pool.group_docno)
    if order is None:
        order = np.arange(len(qcode))
    qcode, scores = qcode[order], scores[order]
    counts = np.bincount(qcode, minlength=len(pool.qids))
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    rank = positions(offsets) + 1
    if keep is not None:
        cut = rank <= keep
        order, qcode, scores, rank = order[cut], qcode[cut], scores[cut], rank[cut]
    n = len(order)
    table = pa.table({
        "qid": pool.qids.take(pa.array(qcode)), "docno": pool.group_docno.take(pa.array(order)),
        "score": pa.array(scores, pa.float64()), "rank": pa.array(rank, pa.int64()),
        "tag": pa.repeat(pa.scalar(name, pa.string()), n)}).cast(io.RUN_SCHEMA)
    return io.Run(table, name, f"fusion:{recipe.method}", recipe.digest, _findings(pool, qcode, scores))


def _findings(pool: Pool, qcode: np.ndarray, scores: np.ndarray) -> list:
    findings = []
    if pool.partial:
        findings.append(io.Finding(
            "fusion_partial_queries",
            f"{len(pool.partial)} of {len(pool.qids)} queries are missing from some input; "
            "they are fused from the inputs that have them", len(pool.partial), pool.partial[:5]))
    tied = (qcode[1:] == qcode[:-1]) & (scores[1:] == scores[:-1])
    if tied.any():
        flag = np.zeros(len(qcode), dtype=bool)
        flag[1:] |= tied
        flag[:-1] |= tied
        findings.append(io.Finding(
            "ties", f"{int(flag.sum())} fused documents share their score with another of the same query; "
                    "ties are broken by docno descending (trec_eval's rule)", int(flag.sum())))
    return findings


# --------------------------------------------------------------------------- helpers


def write_trec(run: io.Run, dest) -> None:
    """Write ``run`` as TREC text (``qid Q0 docno rank score tag``), scores in shortest round-trip form.

    ``dest``: a path or a binary file object. The rows are written in the run's table order.
    """
    import pyarrow.csv as pacsv

    t = run.table
    out = pa.table({"qid": t["qid"], "q0": pa.repeat(pa.scalar("Q0"), t.num_rows), "docno": t["docno"],
                    "rank": t["rank"], "score": pc.cast(t["score"], pa.string()), "tag": t["tag"]})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    pacsv.write_csv(out, dest, write_options=options)


def _weights(weights, n: int) -> np.ndarray:
    if weights is None:
        return np.ones(n)
    if isinstance(weights, Mapping):
        raise MetricsError("weights are a list in the order of the runs, not a mapping",
                           fix="give one number per run, e.g. [0.7, 0.3]")
    try:
        w = np.asarray([float(x) for x in (weights if isinstance(weights, Sequence | np.ndarray) else [weights])])
    except (TypeError, ValueError):
        raise MetricsError(f"weights must be numbers, got {weights!r}", fix="e.g. [0.7, 0.3]") from None
    if len(w) != n:
        raise MetricsError(f"{len(w)} weights for {n} runs", fix="give one weight per run, in the order of the runs")
    if not np.isfinite(w).all() or (w < 0).any() or not (w > 0).any():
        raise MetricsError(f"weights must be finite, >= 0 and not all 0, got {list(w)}", fix="e.g. [0.7, 0.3]")
    return w


def _positive_int(value, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number < 1 or number != value:
        raise MetricsError(f"{what} must be a whole number >= 1, got {value!r}", fix=f"e.g. {what}=100")
    return number


def _as_array(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col
