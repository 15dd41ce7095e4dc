"""How much of the possible gain a re-ranker reached, and how deep re-ranking pays.

A *re-ranked run* takes a first stage's top k documents of every query and orders them again.
:func:`detect_depth` finds k: the largest depth at which every query's re-ranked top k is drawn
from the first stage's top k (a user may declare k instead). Given k, :func:`headroom` measures:

- the ceiling: the first stage's recall@k, and the value of the *oracle* re-ranker, the first
  stage's top k sorted by gain (the measure's gain; unjudged documents gain 0; equal gains keep
  the first stage's order), with the first stage's documents below k left in place. The ideal
  ranking is the qrels' (trec_eval's IDCG over every judged document), so the oracle's nDCG is
  below 1 wherever the first stage missed relevant documents;
- the re-ranker's value, its relative improvement over the first stage, (R - F) / F (a share of
  the first stage's own mean, so the same gain reads larger over a weak first stage; no external
  benchmark is implied), and the share of the headroom it reached,
  1 - (O - R) / (O - F) = (R - F) / (O - F) for first stage F, oracle O and re-ranked R: per
  query (undefined where O = F) and for the means, with a seeded percentile bootstrap interval over queries;
- the depth sweep: the run that re-ranks only the first stage's top d (the re-ranker's order for
  those d documents, the first stage's order below), for each d, with its mean, its paired test
  against the first stage (and against the previous depth), so that a user sees where deeper
  re-ranking stops paying.

Every value comes from the engine (:func:`metrics.ranked_runs.evaluate_rankings`): the two runs from
their rankings, the oracle and sweep runs built here as tables (qid, docno, score), so the numbers
are the engine's, with its tie rule and options. The runs may be given as rankings against the
qrels (a workspace's memory-mapped cache): they are then neither parsed nor ordered again.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from .. import io
from ..beside import beside
from ..errors import MetricsError
from ..evaluation import means
from ..measures import gain_of, parse
from ..ordering import offsets_of, positions
from ..ranked_runs import evaluate_rankings, judged, rankings
from ..ranking import Ranked
from ..stats import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    adjust,
    bootstrap_ci,
    bootstrap_means,
    paired_pvalues,
)
from .heads import head_rows
from .matching import PairKept, docno_codes, position_type, rank_in

__all__ = ["DEFAULT_SWEEP", "Headroom", "detect_depth", "docno_codes", "headroom", "oracle_run",
           "list_depth", "near_rows", "outside_count", "rank_in", "reach", "sweep_depths", "sweep_run"]

DEFAULT_SWEEP = (10, 20, 50, 100, 200, 500, 1000)
"""Depths d of the sweep (those below k), then k itself."""

HEADROOM_TOLERANCE = 1e-12
"""|O - F| at or below this is no headroom: the share is undefined there."""


GRADE_TABLE = 1 << 16
"""The oracle reads gains from a table of the grades between the lowest and the highest when they
are at most this far apart (every real qrels), else computes a gain per row."""

REACH_KEPT = 2
""":func:`reach` results kept (one int32 per re-ranked row, read-only): the page "Where it differs"
asks for the same pair's in its depth detection and in its headroom."""

_reach_kept = PairKept(REACH_KEPT)


def reach(first: Ranked, reranked: Ranked, where: np.ndarray | None = None) -> np.ndarray:
    """Per re-ranked row: the deepest 0-based first-stage position among the re-ranked documents
    at or above it (a document the first stage lacks counts as deeper than any). The input of
    :func:`detect_depth` and :func:`outside_count`, which take it when it is known; ``where`` is
    :func:`rank_in` (reranked, first) when already known. The last :data:`REACH_KEPT` results are
    kept for the same two ranking objects while both live (rankings are not changed after they
    are built), and given read-only."""
    kept = _reach_kept.get(first, reranked)
    if kept is not None:
        return kept
    where = rank_in(reranked, first) if where is None else where
    deepest = int(max(first.lengths.max(initial=0), reranked.lengths.max(initial=0))) + 1
    # queries in increasing blocks of deepest + 1: one running max serves them all; in place, on
    # two arrays (int32 where the blocks fit), as each new array of the rows' length costs its pages
    kind = position_type(max(reranked.n_queries, 1) * (deepest + 1))
    out = where.astype(kind)
    out[out < 0] = deepest
    shift = np.repeat(np.arange(reranked.n_queries, dtype=kind) * (deepest + 1), reranked.lengths)
    out += shift
    np.maximum.accumulate(out, out=out)
    out -= shift
    del shift
    out = out.astype(np.int32) if kind is not np.int32 and deepest < 2**31 else out   # half the memory kept
    out.flags.writeable = False
    _reach_kept.put(first, reranked, out)
    return out


def detect_depth(first: Ranked, reranked: Ranked, deepest: np.ndarray | None = None) -> int | None:
    """The largest k such that, on every query, the re-ranked run's top k documents are all among
    the first stage's top k (None when no k >= 1 holds, or the re-ranked run is empty).

    Computed from one running maximum of first-stage positions along every re-ranked list: k is
    valid for a query with n re-ranked documents when the deepest first-stage position among its
    top min(k, n) is below k.
    """
    depth = int(reranked.lengths.max(initial=0))
    if depth == 0:
        return None
    deepest = reach(first, reranked) if deepest is None else deepest
    pos = positions(reranked.offsets, out=np.empty(len(deepest), dtype=position_type(len(deepest))))
    bad = deepest > pos                            # k = pos + 1 <= n fails
    invalid = np.bincount(pos[bad] + 1, minlength=depth + 2).astype(np.int64)
    counts = np.zeros(depth + 2, dtype=np.int64)   # k > n fails while k <= the list's deepest position
    n = reranked.lengths
    has = n > 0
    last = np.zeros(reranked.n_queries, dtype=np.int64)
    last[has] = deepest[reranked.offsets[1:][has] - 1]
    span = has & (n < depth) & (last >= n + 1)
    np.add.at(counts, n[span] + 1, 1)
    np.add.at(counts, np.minimum(last[span], depth) + 1, -1)
    invalid[: depth + 2] += np.cumsum(counts)
    valid = np.flatnonzero(invalid[1:depth + 1] == 0) + 1
    return int(valid[-1]) if len(valid) else None


def outside_count(first: Ranked, reranked: Ranked, depth: int, deepest: np.ndarray | None = None) -> int:
    """Queries whose re-ranked top ``depth`` holds a document outside the first stage's top ``depth``."""
    deepest = reach(first, reranked) if deepest is None else deepest
    n = reranked.lengths
    has = n > 0
    at = reranked.offsets[:-1][has] + np.minimum(n[has], depth) - 1
    return int(np.count_nonzero(deepest[at] >= depth))


def _frame(ranked: Ranked, rows: np.ndarray, query: np.ndarray, order: np.ndarray,
           keep: int | None = None) -> pa.Table:
    """Rows ``rows`` of ``ranked`` (with their ``query``, query by query) in ``order`` (a permutation
    of them within queries) as a run table (qid, docno, score) whose scores give that order: score =
    -(new 0-based position); with ``keep``, only the first ``keep`` of every query. Arrow columns
    throughout, so a run of millions of lines is never a list of Python strings."""
    pos = positions(offsets_of(np.bincount(query, minlength=ranked.n_queries)))   # new positions
    if keep is not None:
        inside = pos < keep
        order, pos = order[inside], pos[inside]
    qids = pa.array(ranked.qids.astype(str).tolist(), type=pa.string()).take(pa.array(query[order]))
    return pa.table({"qid": qids, "docno": ranked.docnos().take(rows[order]), "score": -pos.astype(np.float64)})


def _located(ranked: Ranked, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(rows, query, pos)`` of ascending ``rows`` of ``ranked``: their query and 0-based position."""
    query = np.searchsorted(ranked.offsets, rows, side="right") - 1
    return rows, query, rows - ranked.offsets[query]


def _with_heads(ranked: Ranked, rows: np.ndarray, keep: int, head: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_located` of ascending ``rows``, a query with fewer than ``keep`` of them taking its first
    ``head`` rows instead (all the rows a run of it could draw its first ``keep`` from)."""
    rows, query, _ = _located(ranked, rows)
    short = np.bincount(query, minlength=ranked.n_queries) < keep
    heads = head_rows(ranked.offsets, head, np.flatnonzero(short))[0]
    return _located(ranked, np.sort(np.concatenate([rows[~short[query]], heads])))


def _head(ranked: Ranked, depth: int, keep: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows an oracle or sweep run of re-ranking depth ``depth`` cut at ``keep`` is made of: the
    first max(depth, keep) of every query (every row without ``keep``). Rows below both come after
    every one of them in either run, so the first ``keep`` of the run are among these."""
    return head_rows(ranked.offsets, None if keep is None else max(depth, int(keep)))


def list_depth(measure, judged_only: bool = False) -> int | None:
    """How deep a ranked list matters to ``measure``: its whole-number cutoff, or None (the whole
    list) without one and under ``judged_only``, whose condensed list reaches further down."""
    m = parse(measure)
    if judged_only or ("judged_only" in m.family.params and m.param("judged_only")):
        return None
    cutoff = m.cutoff
    return int(cutoff) if isinstance(cutoff, (int, np.integer)) and not isinstance(cutoff, bool) else None


def _gain_of(measure, rel: np.ndarray) -> np.ndarray:
    """Gain of grades ``rel`` under ``measure``'s gain (its grade for measures without one)."""
    m = parse(measure)
    if "dcg" in m.family.params:
        return gain_of(rel, m.param("dcg"), m.param("gains"))
    return gain_of(rel)


def _in_query_order(query: np.ndarray, key: np.ndarray, span: int) -> np.ndarray:
    """``np.lexsort((key, query))`` for integer keys in [0, span): one stable sort of one int64 key,
    3x quicker on rows that come query by query (timsort keeps the query runs)."""
    return np.argsort(query.astype(np.int64) * span + key, kind="stable")


def oracle_run(first: Ranked, depth: int, measure="nDCG@10", keep: int | None = None) -> pa.Table:
    """The oracle re-ranker of the first stage's top ``depth``: those documents by gain descending
    (equal gains in first-stage order), the first stage's documents below ``depth`` after them in
    their order. A run table (qid, docno, score), cut at ``keep`` documents per query if given.
    Unjudged documents gain 0."""
    depth = _check_depth(depth)
    lo, hi = (int(first.rel.min()), int(first.rel.max())) if len(first.rel) else (0, 0)
    table = None   # a row's gain from a table: 0 for the unjudged, 1 + grade - lo for a grade
    if hi - lo <= GRADE_TABLE:
        table = np.concatenate([[0.0], _gain_of(measure, np.arange(lo, hi + 1))])
    if table is not None and keep is not None and keep < depth and table.min() >= 0:
        # no gain below 0: a query's first keep are its rows of positive gain within depth, best
        # first, then rows of gain 0 by position, which are among its first keep positions (rows of
        # positive gain below depth come after all of these)
        gained = np.flatnonzero(first.judged & (table[1:] > 0)[first.rel - lo])
        rows, query, pos = _located(first, np.union1d(head_rows(first.offsets, keep)[0], gained))
    else:
        rows, query, pos = _head(first, depth, keep)
    rel, judged = first.rel[rows], first.judged[rows]
    if table is not None:
        levels = np.unique(-table)                       # gains descending; equal gains one level
        level = np.searchsorted(levels, -table)[np.where(judged, rel - lo + 1, 0)]
    else:
        levels, level = np.unique(-np.where(judged, _gain_of(measure, rel), 0.0), return_inverse=True)
    span = int(pos.max(initial=0)) + 1
    key = np.where(pos < depth, level, len(levels)) * span + pos
    return _frame(first, rows, query, _in_query_order(query, key, (len(levels) + 1) * span), keep)


SWEEP_LOOK = 4
"""A sweep run cut at ``keep`` documents looks for them among the re-ranked run's first
``SWEEP_LOOK * keep`` (a query with fewer there takes the whole of its first stage's top)."""


def near_rows(where: np.ndarray, keep: int) -> np.ndarray:
    """The rows of the first stage whose document the re-ranked run lists within its first
    ``SWEEP_LOOK * keep`` (``where``: :func:`rank_in` (first, reranked)), ascending: what a sweep run
    cut at ``keep`` draws its first documents from (the same for every depth)."""
    unsigned = where.view(f"u{where.itemsize}") if where.dtype.kind == "i" else where.astype(np.uint64)
    return np.flatnonzero(unsigned < SWEEP_LOOK * int(keep))   # -1 (not re-ranked) is far, read as unsigned


def sweep_run(first: Ranked, reranked: Ranked, depth: int, where: np.ndarray | None = None,
              keep: int | None = None, near: np.ndarray | None = None) -> pa.Table:
    """The run that re-ranks only the first stage's top ``depth``: those documents in the re-ranked
    run's order (any the re-ranked run lacks after them, in first-stage order), then the first
    stage's documents below ``depth`` in their order. ``where`` is :func:`rank_in` (first, reranked)
    and ``near`` :func:`near_rows` (where, keep) when already known. A run table (qid, docno,
    score), cut at ``keep`` documents per query if given."""
    depth = _check_depth(depth)
    where = rank_in(first, reranked) if where is None else where
    if keep is not None and SWEEP_LOOK * int(keep) < depth:
        # a query's first keep are the first keep (in re-ranked order) of its rows within depth
        # found at a re-ranked position below SWEEP_LOOK * keep, when it has that many
        near = near_rows(where, keep) if near is None else near
        near = near[_located(first, near)[2] < depth]
        rows, query, pos = _with_heads(first, near, keep, max(depth, int(keep)))
    else:
        rows, query, pos = _head(first, depth, keep)
    where = where[rows]
    far = int(max(first.lengths.max(initial=0), reranked.lengths.max(initial=0))) + 1
    key = np.where(pos >= depth, 2 * far + pos, np.where(where >= 0, where, far + pos))
    return _frame(first, rows, query, _in_query_order(query, key, 3 * far), keep)


def _check_depth(depth) -> int:
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise MetricsError(f"the re-ranking depth must be a whole number >= 1, got {depth!r}",
                           fix="for example depth=100")
    return int(depth)


def sweep_depths(depth: int, sweep=None) -> list[int]:
    """The depths of the sweep: ``sweep`` (default :data:`DEFAULT_SWEEP`) below ``depth``, then ``depth``
    itself (the re-ranked run's own order), ascending, without repeats. A depth beyond ``depth``
    re-ranks nothing more and is refused."""
    depth = _check_depth(depth)
    wanted = sorted({_check_depth(int(d)) for d in (DEFAULT_SWEEP if sweep is None else sweep)})
    beyond = [d for d in wanted if d > depth]
    if beyond and sweep is not None:
        raise MetricsError(f"sweep depth {beyond[0]} is beyond the re-ranking depth {depth}",
                           fix=f"use depths up to {depth}, e.g. --sweep 10,20,{depth}")
    return [d for d in wanted if d < depth] + [depth]


@dataclass
class Headroom:
    """The two-stage analysis of one (first stage, re-ranked run) pair.

    ``per_query``: one row per query with ``qid, recall, first, oracle, reranked, headroom
    (O - F), gained (R - F), share ((R - F) / (O - F), NaN where O = F), relative ((R - F) / F,
    NaN where F = 0)``. ``summary``: the means and their derived numbers (see :func:`headroom`).
    ``sweep``: one row per depth d: ``depth, mean, diff (vs the first stage), share, p_value,
    p_adjusted, p_previous (vs the previous depth)``; ``sweep_per_query``: index qid, a column
    per depth.
    """

    first: str
    reranked: str
    measure: str
    depth: int
    detected: int | None
    per_query: pd.DataFrame
    summary: dict
    sweep: pd.DataFrame
    sweep_per_query: pd.DataFrame = field(repr=False)

    def to_dict(self) -> dict:
        """Plain types for JSON (NaN as None)."""
        def plain(value):
            if isinstance(value, (float, np.floating)):
                return None if not np.isfinite(value) else float(value)
            if isinstance(value, (np.integer,)):
                return int(value)
            if isinstance(value, dict):
                return {k: plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        return {"first": self.first, "reranked": self.reranked, "measure": self.measure, "depth": self.depth,
                "detected_depth": self.detected, "summary": plain(self.summary),
                "sweep": [plain(r) for r in self.sweep.to_dict(orient="records")],
                "per_query": [plain(r) for r in self.per_query.to_dict(orient="records")]}


def headroom(qrels, first, reranked, *, depth: int | None = None, measure="nDCG@10", sweep=None,
             missing: str = "zero", judged_only: bool = False, inferred=None, rel_level: int = 1, test: str = "t",
             correction: str = "holm", seed: int = DEFAULT_SEED, resamples: int = DEFAULT_RESAMPLES,
             level: float = DEFAULT_LEVEL) -> Headroom:
    """The two-stage analysis of ``reranked`` over ``first`` (paths, frames, parsed runs, or both as
    :class:`metrics.ranking.Ranked` against ``qrels``).

    ``depth`` declares k; without it k is :func:`detect_depth`'s (a :class:`MetricsError` when the
    re-ranked run's documents are not drawn from the first stage's). ``measure`` is any measure
    string (its gain orders the oracle). ``missing``, ``judged_only``, ``inferred`` (proxy qrels
    whose labels fill unjudged documents, for the oracle too) and ``rel_level`` are
    :func:`metrics.evaluate`'s; with ``missing="skip"`` the queries compared are those every run
    has.

    ``summary`` holds the means of ``first``, ``oracle``, ``reranked`` and ``recall`` (R@k of the
    first stage); ``relative`` = (R - F) / F of the means (relative to the first
    stage's mean); ``share`` = (R - F) / (O - F) of the means with ``share_ci`` (percentile
    bootstrap: the three means of each resample of the queries, ``resamples`` draws from
    ``seed``), ``relative_ci`` from the same resamples; ``query_share`` (the mean of the per-query
    shares over the ``defined`` queries where O != F) with ``query_share_ci``; the queries,
    ``outside`` (queries whose re-ranked top k holds documents outside the first stage's top k:
    0 for a detected k), and the test, correction, seed, resamples and level.
    """
    qrels = io.read_qrels(qrels)
    proxy = io.read_qrels(inferred) if inferred is not None else None
    (first_name, first_base), (reranked_name, reranked_base) = rankings(qrels, [first, reranked]).items()
    m = str(parse(measure))
    first_ranked = judged(first_base, qrels, inferred=proxy)
    reranked_ranked = judged(reranked_base, qrels, inferred=proxy)
    # rank_in keeps its results for the pair (and the docno codes of the two columns), so the page's
    # depth detection, this and its rank bands match the pair once
    deepest = reach(first_ranked, reranked_ranked, rank_in(reranked_ranked, first_ranked))
    detected = detect_depth(first_ranked, reranked_ranked, deepest)
    if depth is None:
        if detected is None:
            raise MetricsError(f"{reranked_name}'s top documents are not drawn from {first_name}'s top "
                               "documents on every query, so it is no re-ranking of it",
                               fix="declare the re-ranking depth (--depth K) to compare against the first "
                                   "stage's top K anyway")
        depth = detected
    depth = _check_depth(depth)
    depths = sweep_depths(depth, sweep)

    where = rank_in(first_ranked, reranked_ranked)
    keep = list_depth(m, judged_only)   # the oracle and sweep runs only as deep as the measure looks
    runs = {"first": first_base, "reranked": reranked_base, "oracle": oracle_run(first_ranked, depth, m, keep)}
    near = None if keep is None else near_rows(where, keep)
    runs.update({f"sweep:{d}": sweep_run(first_ranked, reranked_ranked, d, where, keep, near) for d in depths})
    recall = f"R@{depth}"
    frame = evaluate_rankings(qrels, runs, [m, recall], missing=missing, judged_only=judged_only, inferred=proxy,
                              rel_level=rel_level)
    table = frame.pivot_table(index="qid", columns=["measure", "system"], values="value", aggfunc="first",
                              observed=True).dropna()
    values = table[m]
    f, o, r = (values[s].to_numpy(dtype=np.float64) for s in ("first", "oracle", "reranked"))
    room, gained = o - f, r - f
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(np.abs(room) > HEADROOM_TOLERANCE, gained / room, np.nan)
        relative = np.where(f > 0, gained / f, np.nan)
    per_query = pd.DataFrame({"qid": table.index.astype(str), "recall": table[recall]["first"].to_numpy(),
                              "first": f, "oracle": o, "reranked": r, "headroom": room, "gained": gained,
                              "share": share, "relative": relative})

    if len(per_query) == 0:
        raise MetricsError("no query to compare: the runs share no query of the qrels",
                           fix="check that the runs and the qrels use the same query ids")
    kept = means(frame[frame["qid"].isin(table.index)])   # the engine's means (trec_eval's order of sums)
    summary = _summary(per_query, kept, m, recall, seed=seed, resamples=resamples, level=level)
    summary.update({"depth": depth, "detected_depth": detected,
                    "outside": outside_count(first_ranked, reranked_ranked, depth, deepest),
                    "test": test, "correction": correction})
    swept = np.column_stack([values[f"sweep:{d}"].to_numpy(dtype=np.float64) for d in depths])
    sweep_table = _sweep_table(depths, swept, f, [float(kept.loc[f"sweep:{d}", m]) for d in depths], summary,
                               test=test, correction=correction, seed=seed, resamples=resamples)
    sweep_per_query = pd.DataFrame(swept, index=pd.Index(per_query["qid"], name="qid"), columns=depths)
    return Headroom(first_name, reranked_name, m, depth, detected, per_query, summary, sweep_table,
                    sweep_per_query)


def _share_of(gained: float, room: float) -> float:
    return gained / room if abs(room) > HEADROOM_TOLERANCE else float("nan")


def _summary(per_query: pd.DataFrame, kept: pd.DataFrame, m: str, recall: str, *, seed: int, resamples: int,
             level: float) -> dict:
    """The means (the engine's, ``kept``) and what is derived from them, with bootstrap intervals."""
    mean_f, mean_o, mean_r = (float(kept.loc[s, m]) for s in ("first", "oracle", "reranked"))
    values = per_query[["first", "oracle", "reranked"]].to_numpy(dtype=np.float64)
    share = per_query["share"].to_numpy(dtype=np.float64)
    defined = share[np.isfinite(share)]
    # the per-query shares' interval resamples its own queries: on a second thread beside the means'
    query_share_ci = beside(len(defined) * resamples, bootstrap_ci, defined, resamples=resamples, seed=seed,
                            level=level) if len(defined) else None
    boot = bootstrap_means(values, resamples=resamples, seed=seed)   # one set of resamples for both ratios
    tail = (1.0 - level) / 2.0
    with np.errstate(divide="ignore", invalid="ignore"):
        boot_share = (boot[:, 2] - boot[:, 0]) / (boot[:, 1] - boot[:, 0])
        boot_relative = (boot[:, 2] - boot[:, 0]) / boot[:, 0]
    relative = (mean_r - mean_f) / mean_f if mean_f > 0 else float("nan")
    return {
        "queries": len(per_query), "recall": float(kept.loc["first", recall]),
        "first": mean_f, "oracle": mean_o, "reranked": mean_r, "headroom": mean_o - mean_f, "gained": mean_r - mean_f,
        "relative": relative, "relative_ci": _interval(boot_relative, tail),
        "share": _share_of(mean_r - mean_f, mean_o - mean_f), "share_ci": _interval(boot_share, tail),
        "defined": int(len(defined)), "query_share": float(defined.mean()) if len(defined) else float("nan"),
        "query_share_ci": (tuple(query_share_ci.result()) if query_share_ci is not None
                           else (float("nan"), float("nan"))),
        "seed": seed, "resamples": resamples, "level": level,
    }


def _sweep_table(depths: list[int], swept: np.ndarray, first: np.ndarray, means_at: list[float], summary: dict, *,
                 test: str, correction: str, seed: int, resamples: int) -> pd.DataFrame:
    """One row per depth: the mean, its difference from the first stage and share of the headroom,
    the paired test against the first stage (raw and corrected over the depths) and against the
    depth before (the first stage before the first depth)."""
    p = np.atleast_1d(paired_pvalues(swept - first[:, None], test, seed=seed, resamples=resamples))
    previous = np.column_stack([first, swept[:, :-1]])
    p_previous = np.atleast_1d(paired_pvalues(swept - previous, test, seed=seed, resamples=resamples))
    mean_f, room = summary["first"], summary["oracle"] - summary["first"]
    return pd.DataFrame({"depth": depths, "mean": means_at, "diff": [v - mean_f for v in means_at],
                         "share": [_share_of(v - mean_f, room) for v in means_at], "p_value": p,
                         "p_adjusted": adjust(p, correction), "p_previous": p_previous})


def _interval(draws: np.ndarray, tail: float) -> tuple[float, float]:
    finite = draws[np.isfinite(draws)]
    if not len(finite):
        return float("nan"), float("nan")
    low, high = np.quantile(finite, [tail, 1.0 - tail])
    return float(low), float(high)
