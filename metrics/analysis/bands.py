"""Where in the ranking two runs differ: DCG@k split by rank band and by grade, and what only one finds.

DCG@k = sum over ranks r <= k of gain(r) / log2(r + 1). Its difference between run B and run A
(the baseline) splits exactly by where each contribution sits: rank bands (by default 1-3, 4-10,
11-20, 21-100 and beyond 100, up to k) and the grade of the document. A re-ranker moves the same
documents, so its gains sit at the top; a query expansion brings new documents, so its gains sit
low in the list and come with relevant documents that only it retrieves. Also here: those
documents (:attr:`Bands.only_one`), recall@k curves of both runs (:attr:`Bands.recall`), and the
queries where the baseline found no relevant document in its top 100 and the other run did
(:attr:`Bands.rescued`; :attr:`Bands.lost` is the reverse).

Per-rank contributions come from the engine's :class:`~metrics.measures.Context` (the code behind
the Query explorer's :func:`~metrics.analysis.explain.explain` rows); per-query totals, recall and
the top-100 counts come from :func:`metrics.evaluate`. Per query the band values add up to the
engine's DCG@k difference (to floating-point rounding, below 1e-12), as do the grade values.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import io
from ..errors import MetricsError
from ..evaluation import curve_ranked
from ..measures import Context, parse, with_gain
from ..ordering import positions
from ..ranked_runs import evaluate_rankings, judged, rankings
from ..ranking import Ranked
from .matching import position_type, rank_in

__all__ = ["DEFAULT_BANDS", "Bands", "band_labels", "bands"]

DEFAULT_BANDS = (3, 10, 20, 100)
"""Upper ranks of the bands 1-3, 4-10, 11-20, 21-100 (and beyond 100, up to k)."""

TOP = 100
"""Depth of the "no relevant document in the top 100" check."""


def band_edges(k: int, edges=DEFAULT_BANDS) -> list[int]:
    """Upper ranks of the bands up to ``k``: the edges below ``k``, then ``k``."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise MetricsError(f"k must be a whole number >= 1, got {k!r}", fix="for example -k 100")
    edges = [int(e) for e in edges]
    if any(e < 1 for e in edges) or any(b <= a for a, b in zip(edges, edges[1:])):
        raise MetricsError(f"band edges must be increasing whole numbers >= 1, got {','.join(map(str, edges))}",
                           fix="for example --bands 3,10,20,100")
    return [e for e in edges if e < k] + [int(k)]


def band_labels(k: int, edges=DEFAULT_BANDS) -> list[str]:
    """Labels of the bands up to ``k``: ``1-3``, ``4-10``, ..., ``101-1000`` (a band of one rank: ``1``)."""
    uppers = band_edges(k, edges)
    lowers = [1] + [u + 1 for u in uppers[:-1]]
    return [f"{lo}" if lo == hi else f"{lo}-{hi}" for lo, hi in zip(lowers, uppers)]


@dataclass
class Bands:
    """The rank-band decomposition of DCG@k(B) - DCG@k(A) and what goes with it.

    ``parts``: one row per (qid, band, grade) with a non-zero contribution in either run:
    ``qid, band, grade, a, b, diff`` (diff = b - a). ``by_band`` / ``by_grade``: index qid, a
    column per band / grade (every band, zeros included) and ``total`` = DCG@k(B) - DCG@k(A) from
    the engine; ``dcg``: index qid, columns ``a, b``. ``only_one``: relevant documents (grade >=
    rel_level) in the top k of one run only: ``qid, docno, grade, run, rank, other_rank`` (the
    other run's rank, <NA> where it never retrieved it). ``recall``: ``system, k, value`` (mean
    R@k for k = 1..k). ``rescued`` / ``lost``: queries where A (resp. B) has no relevant document
    in its top 100 and the other has: ``qid, relevant, found, first_rank`` (of the run that found).
    """

    a: str
    b: str
    measure: str
    k: int
    labels: list[str]
    parts: pd.DataFrame
    by_band: pd.DataFrame
    by_grade: pd.DataFrame
    dcg: pd.DataFrame
    only_one: pd.DataFrame
    recall: pd.DataFrame
    rescued: pd.DataFrame
    lost: pd.DataFrame

    def means(self, by: str = "band") -> pd.Series:
        """Mean over queries of each band (or grade) column and of the total."""
        return (self.by_band if by == "band" else self.by_grade).mean(axis=0)


def _contributions(ranked: Ranked, measure, rel_level: int, uppers: list[int]) -> pd.DataFrame:
    """(query, band, grade, value): every document's gain / log2(rank + 1) within the top k,
    summed per query, band and grade (Context.contributions, as the Query explorer's rows)."""
    contrib = Context(ranked, rel_level=rel_level).contributions(parse(measure))
    pos = positions(ranked.offsets, out=np.empty(len(contrib), dtype=position_type(len(contrib))))
    inside = np.flatnonzero((pos < uppers[-1]) & (contrib != 0))
    query = _query_of(ranked, inside)
    pos, contrib, grade = pos[inside].astype(np.int64), contrib[inside], ranked.rel[inside]
    band = np.searchsorted(np.asarray(uppers), pos + 1, side="left")
    frame = pd.DataFrame({"query": query, "band": band, "grade": grade, "value": contrib})
    return frame.groupby(["query", "band", "grade"], sort=True)["value"].sum().reset_index()


def bands(qrels, run_a, run_b, *, k: int = 100, edges=DEFAULT_BANDS, gain: str = "linear", missing: str = "zero",
          judged_only: bool = False, inferred=None, rel_level: int = 1, top: int = TOP) -> Bands:
    """Split DCG@k(B) - DCG@k(A) by rank band and grade (see :class:`Bands`); the runs as
    :func:`metrics.evaluate` takes them, or both as :class:`metrics.ranking.Ranked` against ``qrels``.

    ``gain`` is "linear" (trec_eval's DCG) or "exp" (2^rel - 1); ``missing``, ``judged_only``,
    ``inferred`` (proxy qrels) and ``rel_level`` are :func:`metrics.evaluate`'s (with
    ``missing="skip"``, the queries both runs have). ``top`` is the depth of the rescued / lost check.
    """
    uppers = band_edges(k, edges)
    labels = band_labels(k, edges)
    qrels = io.read_qrels(qrels)
    proxy = io.read_qrels(inferred) if inferred is not None else None
    (name_a, base_a), (name_b, base_b) = rankings(qrels, [run_a, run_b]).items()
    measure = with_gain(f"DCG@{k}", gain)
    ra, rb = (judged(r, qrels, inferred=proxy) for r in (base_a, base_b))
    if judged_only:
        ra, rb = ra.condensed(), rb.condensed()

    counts = [measure, f"NumRelRet@{top}", f"RR@{top}", "NumRel"]
    frame = evaluate_rankings(qrels, {"a": base_a, "b": base_b}, counts, missing=missing, judged_only=judged_only,
                              inferred=proxy, rel_level=rel_level)
    table = frame.pivot_table(index="qid", columns=["measure", "system"], values="value", aggfunc="first",
                              observed=True).dropna()
    qids = table.index.astype(str)
    dcg = pd.DataFrame({"a": table[measure]["a"].to_numpy(), "b": table[measure]["b"].to_numpy()},
                       index=pd.Index(qids, name="qid"))
    total = dcg["b"] - dcg["a"]

    keep = pd.Series(np.arange(ra.n_queries), index=ra.qids.astype(str)).reindex(qids).to_numpy()
    parts_a = _contributions(ra, measure, rel_level, uppers)
    parts_b = _contributions(rb, measure, rel_level, uppers)
    parts = parts_a.merge(parts_b, on=["query", "band", "grade"], how="outer", suffixes=("_a", "_b")).fillna(0.0)
    parts = parts[parts["query"].isin(keep)].sort_values(["query", "band", "grade"], kind="stable")
    parts = pd.DataFrame({"qid": ra.qids.astype(str)[parts["query"].to_numpy(dtype=np.int64)],
                          "band": np.asarray(labels, dtype=object)[parts["band"].to_numpy(dtype=np.int64)],
                          "grade": parts["grade"].to_numpy(dtype=np.int64),
                          "a": parts["value_a"].to_numpy(), "b": parts["value_b"].to_numpy()})
    parts["diff"] = parts["b"] - parts["a"]

    by_band = _spread(parts, "band", labels, qids, total)
    grades = sorted(parts["grade"].unique().tolist(), reverse=True)
    by_grade = _spread(parts, "grade", grades, qids, total)

    return Bands(name_a, name_b, measure, int(k), labels, parts.reset_index(drop=True), by_band, by_grade,
                 dcg, _only_one(ra, rb, name_a, name_b, k, rel_level, set(qids)),
                 _recall(ra, rb, name_a, name_b, k, rel_level, qids), _rescued(table, top, "a", "b"),
                 _rescued(table, top, "b", "a"))


def _spread(parts: pd.DataFrame, column: str, labels: list, qids, total: pd.Series) -> pd.DataFrame:
    """Index qid, one column per label (0 where nothing), then ``total``."""
    wide = parts.pivot_table(index="qid", columns=column, values="diff", aggfunc="sum", observed=True)
    wide = wide.reindex(index=qids, columns=labels).fillna(0.0)
    wide.columns = [str(c) for c in labels]
    wide.index.name = "qid"
    wide["total"] = total.to_numpy()
    return wide


def _only_one(ra: Ranked, rb: Ranked, name_a: str, name_b: str, k: int, rel_level: int, qids: set) -> pd.DataFrame:
    """Relevant documents in the top k of exactly one of the runs, with their grades and ranks.

    Rows are picked on integer arrays (positions, :func:`rank_in` both ways, which keeps its
    results and the docno codes of the pair); query numbers and strings are taken for the picked
    rows only."""
    out = []
    for this, other, name in ((ra, rb, name_a), (rb, ra, name_b)):
        pos = positions(this.offsets, out=np.empty(len(this.rel), dtype=position_type(len(this.rel))))
        where = rank_in(this, other)
        names = this.qids.astype(str)
        rows = np.flatnonzero((pos < k) & this.judged & (this.rel >= rel_level) & ((where < 0) | (where >= k)))
        query = _query_of(this, rows)
        shown = np.isin(names, list(qids))[query]
        rows, query = rows[shown], query[shown]
        other_rank = pd.array(np.where(where[rows] >= 0, where[rows].astype(np.int64) + 1, 0), dtype="Int64")
        other_rank[where[rows] < 0] = pd.NA
        out.append(pd.DataFrame({"qid": names[query],
                                 "docno": np.asarray(this.docnos().take(rows).to_pylist(), dtype=object),
                                 "grade": this.rel[rows], "run": name, "rank": pos[rows].astype(np.int64) + 1,
                                 "other_rank": other_rank}))
    frame = pd.concat(out, ignore_index=True)
    return frame.sort_values(["qid", "run", "rank"], kind="stable").reset_index(drop=True)


def _query_of(ranked: Ranked, rows: np.ndarray) -> np.ndarray:
    """The query number of each of ``rows`` (ascending or not): the last query whose first row is at
    or before it (an empty query's first row is the next one's), without an array of every row's."""
    return np.searchsorted(ranked.offsets, rows, side="right") - 1


def _recall(ra: Ranked, rb: Ranked, name_a: str, name_b: str, k: int, rel_level: int, qids) -> pd.DataFrame:
    """Mean R@j over ``qids`` for j = 1..k of both runs (the engine's curve), long: system, k, value."""
    rows = []
    for ranked, name in ((ra, name_a), (rb, name_b)):
        curve = curve_ranked(ranked, "R", max_k=k, rel_level=rel_level)
        curve = curve.loc[curve.index.astype(str).isin(list(qids))].mean(axis=0)
        rows.append(pd.DataFrame({"system": name, "k": curve.index.to_numpy(), "value": curve.to_numpy()}))
    return pd.concat(rows, ignore_index=True)


def _rescued(table: pd.DataFrame, top: int, none: str, found: str) -> pd.DataFrame:
    """Queries where run ``none`` has no relevant document in its top ``top`` and run ``found`` has."""
    hits = table[f"NumRelRet@{top}"]
    pick = (hits[none] == 0) & (hits[found] > 0)
    rr = table[f"RR@{top}"][found][pick].to_numpy()
    return pd.DataFrame({"qid": table.index[pick].astype(str), "relevant": table["NumRel"][found][pick].astype(int)
                         .to_numpy(), "found": hits[found][pick].astype(int).to_numpy(),
                         "first_rank": np.rint(1.0 / rr).astype(int)})
