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
              mean of the points left, (C − n_i(q) + 1) / 2; an input without the query
              gives none                                 (Aslam & Montague 2001)
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

Differences from ranx's ``fuse`` (checked in tests/metrics/analysis/test_fusion.py, which
compares every method and normalisation with ranx on tie-free inputs):

- ties: ranx orders tied documents of its inputs and of its output arbitrarily (its sort);
  ours break them by docno descending, so ranks, and a document's fused score, can differ
  where an input has tied scores;
- queries: ranx requires every run to hold the same queries; ours fuse the union;
- normalisation names: ranx's ``min-max`` and ``zmuv`` are our ``minmax`` and ``zscore``
  (both spellings accepted); ``sum``, ``max`` and ``rank`` have the same formulas (ranx's rank
  norm is 1 − i/n for 0-based position i, i.e. ours); ranx's ``borda`` norm is not offered;
- degenerate lists: ranx divides by max(denominator, 1e-9), so an all-equal list gets 0 under
  min-max and sum (ours: 1 and 1/n), and max-norm of non-positive scores divides by 1e-9
  (ours: an error);
- BordaFuse: the same points (C − r + 1, unranked share (C − n + 1)/2); weighted, it is
  ranx's ``w_bordafuse``;
- Condorcet: ranx sorts with a pairwise comparator, so a majority cycle is resolved by the
  sort algorithm, a pairwise tie goes to the first document compared and two unranked
  documents give the vote to the second; ours is Copeland's rule, independent of any order,
  with two unranked documents abstaining. Where the majority is a strict order both give
  it (ranx scores C − position, ours (C − 1) − 2 · position);
- weighted CombMNZ: ranx's ``wmnz`` multiplies Σ w_i s_i by the sum of the weights of the
  inputs retrieving d; ours by their number n(d), with weights inside the sum;
- summation order: ours ascending per document (above), ranx's input order, which can
  differ in the last bit with three or more inputs.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from .. import io
from ..beside import beside
from ..errors import MetricsError
from ..ordering import canonical_order, offsets_of, positions
from .fusion_kernels import Pool, combine, positive_int, prepare

__all__ = ["METHODS", "NORMS", "Fused", "Method", "Pool", "Recipe", "fuse", "method", "norm_name", "prepare"]

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
    def from_dict(cls, data: Mapping) -> Recipe:
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
        keep = positive_int(keep, "keep")
    scores = combine(pool, m.name, k=k, norm=norm, weights=w)
    params = {"k": k if m.name == "rrf" else None, "norm": norm if m.kind == "score" else None,
              "weights": None if weights is None else [float(x) for x in w],
              "depth": pool.depth, "keep": keep}
    recipe = Recipe(m.name, tuple(zip(pool.names, pool.digests)), {p: v for p, v in params.items() if v is not None})
    return Fused(_emit(pool, scores, name or m.name, keep, recipe), recipe)


def _emit(pool: Pool, scores: np.ndarray, name: str, keep: int | None, recipe: Recipe) -> io.Run:
    """The fused run: candidates in canonical order (fused score desc, docno desc), ranks 1..n."""
    qcode = pool.group_qcode
    order = canonical_order(qcode, scores, pool.group_docno, distinct=True)   # one candidate per document
    if order is None:
        order = np.arange(len(qcode))
    qcode, scores = qcode[order], scores[order]
    offsets = offsets_of(np.bincount(qcode, minlength=len(pool.qids)))
    rank = positions(offsets, first=1)   # 1-based, in the one array (the table takes it as it is)
    if keep is not None:
        cut = rank <= keep
        order, qcode, scores, rank = order[cut], qcode[cut], scores[cut], rank[cut]
    n = len(order)
    qids = beside(n, pool.qids.take, pa.array(qcode))   # the two columns of strings taken at once
    docnos = pool.group_docno.take(pa.array(order))
    table = pa.table({
        "qid": qids.result(), "docno": docnos,
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


