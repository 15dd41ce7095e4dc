"""The arithmetic behind one number: a per-rank breakdown of nDCG for one query of one run.

:func:`explain` holds what trec_eval's ``-D`` trace prints, as a frame with one
row per rank: the document, its grade (or *unjudged* / *inferred*), its gain,
the discount 1/log2(rank + 1), its contribution gain / log2(rank + 1), the
cumulative DCG, the ideal ranking's grade, gain and cumulative IDCG at the same
rank, and nDCG@rank = DCG@rank / IDCG@rank. Every column comes from the same
kernels as the leaderboard (:mod:`metrics.measures`), on the same
:class:`~metrics.ranking.Ranked` arrays, so the last row's nDCG equals the
leaderboard's value to the last bit.

Also here: the ideal ranking of a query (:func:`ideal_ranking`), the relevant
documents a run never retrieved (:func:`unretrieved`), the grade of every
(query, position) for a whole-collection heatmap (:func:`relevance_matrix`) and
the order of queries by difficulty or by the difference between two systems
(:func:`order_queries`).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..measures import REGISTRY, Context, Family, Measure, compute_curve, discount, gain_of, parse
from ..ranking import Ranked
from .heads import head_rows

__all__ = ["explain", "ideal_ranking", "unretrieved", "relevance_matrix", "RelevanceMatrix", "order_queries",
           "query_position", "STATUS"]

STATUS = ("not retrieved", "judged", "unjudged", "inferred")
"""Codes of :attr:`RelevanceMatrix.status` (and the ``status`` column of :func:`explain`)."""

_GAIN_FAMILIES = ("nDCG", "DCG", "IDCG")


def _gain_measure(measure) -> Measure:
    m = parse(measure)
    if m.family.name not in _GAIN_FAMILIES:
        raise MetricsError(f"explain works on nDCG, DCG or IDCG, not {m}",
                           fix="pass e.g. nDCG@10 or nDCG(dcg='exp-log2')@10")
    return m


def _family(m: Measure, name: str) -> Measure:
    """``m``'s gain parameters on another family of the DCG group, no cutoff."""
    family = REGISTRY[name]
    if not isinstance(family, Family):   # DCG and IDCG are families; an alias would carry fixed parameters
        raise TypeError(f"{name} is an alias, not a measure family")
    return Measure(family, name, m.params, None)


def query_position(ranked: Ranked, qid) -> int:
    """Index of ``qid`` among ``ranked.qids`` (queries are sorted as strings)."""
    qid = str(qid)
    i = int(np.searchsorted(ranked.qids.astype(str), qid))
    if i >= ranked.n_queries or ranked.qids[i] != qid:
        known = ", ".join(map(str, ranked.qids[:5])) + (" ..." if ranked.n_queries > 5 else "")
        raise MetricsError(f"query {qid!r} is not among the evaluated queries of {ranked.name}",
                           fix=f"pick a query of the qrels ({known or 'none'})")
    return i


def _one_query(ranked: Ranked, i: int) -> Ranked:
    """Query ``i`` alone, as a Ranked of one query (a view: no copy of the other queries)."""
    a, b = int(ranked.offsets[i]), int(ranked.offsets[i + 1])
    ia, ib = int(ranked.ideal_offsets[i]), int(ranked.ideal_offsets[i + 1])
    return Ranked(
        name=ranked.name, qids=ranked.qids[i:i + 1], offsets=np.array([0, b - a], dtype=np.int64),
        rel=ranked.rel[a:b], judged=ranked.judged[a:b], inferred=ranked.inferred[a:b],
        score=ranked.score[a:b], docno=ranked.docno.slice(a, b - a),
        ideal_offsets=np.array([0, ib - ia], dtype=np.int64), ideal_rel=ranked.ideal_rel[ia:ib],
        missing=ranked.missing[i:i + 1],
    )


def _titles(docnos, docs) -> np.ndarray | None:
    """Title per docno (None where unknown) from a frame (docno, title) or a {docno: title} mapping."""
    if docs is None:
        return None
    if isinstance(docs, pd.DataFrame):
        if docs.empty or "docno" not in docs.columns or "title" not in docs.columns:
            return None
        lookup = pd.Series(docs["title"].to_numpy(dtype=object), index=docs["docno"].astype(str).to_numpy())
        lookup = lookup[~lookup.index.duplicated()]
    elif isinstance(docs, Mapping):
        lookup = pd.Series(dict(docs), dtype=object)
    else:
        raise MetricsError("docs must be a frame with columns docno, title or a {docno: title} mapping",
                           fix="pass state.docs(sel) or a dict")
    keys = pd.Series(np.asarray(docnos, dtype=object))
    titles = keys.map(lookup)
    return titles.astype(object).where(titles.notna(), None).to_numpy(dtype=object)


def _grades(values: np.ndarray, present: np.ndarray):
    """Grades as a nullable integer array, <NA> where ``present`` is False."""
    grades = pd.array(np.where(present, values, 0).astype(np.int64), dtype="Int64")
    grades[~np.asarray(present, dtype=bool)] = pd.NA
    return grades


def explain(ranked: Ranked, qid, measure="nDCG@10", *, depth: int | None = None, docs=None,
            rel_level: int = 1) -> pd.DataFrame:
    """Per-rank breakdown of ``measure`` (an nDCG measure string) for query ``qid`` of ``ranked``.

    One row per rank 1..depth. ``depth`` defaults to the measure's cutoff, or
    without one to max(retrieved, relevant in the qrels), so that the last row
    is always the measure's value; ranks past the end of the run are rows of
    status "not retrieved" (gain 0), because IDCG@k keeps counting there.

    Columns: ``rank, docno, [title,] grade, status, gain, discount,
    contribution, dcg, ideal_grade, ideal_gain, idcg, ndcg`` where
    discount = 1 / log2(rank + 1), contribution = gain / log2(rank + 1),
    dcg / idcg are cumulative and ndcg = dcg / idcg (0 when idcg = 0).
    ``grade`` is <NA> for unjudged and not-retrieved rows; for "inferred" rows
    it is the proxy label. ``docno`` (and ``title``) are missing (NA) on
    not-retrieved rows. ``frame.attrs`` holds system, qid and measure.
    With ``judged_only`` in the measure, the rows are the condensed list.
    """
    m = _gain_measure(measure)
    i = query_position(ranked, qid)
    ctx = Context(_one_query(ranked, i), rel_level=rel_level)
    view = ctx.view(bool(m.param("judged_only")))
    r = view.ranked
    dcg_param, gains = m.param("dcg"), m.param("gains")
    n_ret = int(r.offsets[-1])

    ideal_grade = r.ideal_rel
    ideal_gain = gain_of(ideal_grade, dcg_param, gains)
    order = np.argsort(-ideal_gain, kind="stable")  # the order Context.ideal sorts in
    ideal_grade, ideal_gain = ideal_grade[order], ideal_gain[order]
    positive = ideal_gain > 0
    ideal_grade, ideal_gain = ideal_grade[positive], ideal_gain[positive]

    if depth is None:
        depth = int(m.cutoff) if m.cutoff is not None else max(n_ret, len(ideal_gain), 1)
    depth = int(depth)
    if depth < 1:
        raise MetricsError(f"depth must be a whole number >= 1, got {depth}", fix="for example depth=10")

    rows = min(depth, n_ret)
    retrieved = np.arange(depth) < rows
    gain_all = np.where(r.judged, gain_of(r.rel, dcg_param, gains), 0.0)
    contrib_all = view.contributions(m)

    def padded(values, fill):
        out = np.full(depth, fill, dtype=np.asarray(values).dtype)
        out[:rows] = values[:rows]
        return out

    pos = np.arange(depth, dtype=np.int64)
    judged = padded(r.judged, False)
    inferred = padded(r.inferred, False)
    status = np.where(~retrieved, 0, np.where(~judged, 2, np.where(inferred, 3, 1)))
    docno = np.full(depth, None, dtype=object)
    docno[:rows] = np.asarray(r.docno.slice(0, rows).to_pylist(), dtype=object)

    frame = {"rank": pos + 1, "docno": docno}
    titles = _titles(docno, docs)
    if titles is not None:
        frame["title"] = titles
    in_ideal = pos < len(ideal_gain)
    n_ideal = min(depth, len(ideal_gain))
    ideal_grade_at = np.zeros(depth, dtype=np.int64)
    ideal_grade_at[:n_ideal] = ideal_grade[:n_ideal]
    ideal_gain_at = np.zeros(depth)
    ideal_gain_at[:n_ideal] = ideal_gain[:n_ideal]
    frame.update({
        "grade": _grades(padded(r.rel, 0), judged),
        "status": pd.Categorical.from_codes(status, categories=list(STATUS)),
        "gain": padded(gain_all, 0.0),
        "discount": 1.0 / discount(pos),
        "contribution": padded(contrib_all, 0.0),
        "dcg": compute_curve(view, _family(m, "DCG"), depth)[0],
        "ideal_grade": _grades(ideal_grade_at, in_ideal),
        "ideal_gain": ideal_gain_at,
        "idcg": compute_curve(view, _family(m, "IDCG"), depth)[0],
        "ndcg": compute_curve(view, m.at(None), depth)[0],
    })
    out = pd.DataFrame(frame)
    out.attrs.update({"system": ranked.name, "qid": str(ranked.qids[i]), "measure": str(m),
                      "retrieved": n_ret, "relevant": int(len(ideal_gain))})
    return out


def _query_judgments(qrels, qid: str, inferred=None) -> pd.DataFrame:
    """(docno, grade, inferred) of one query: the qrels' rows, plus proxy labels for documents they lack."""
    def rows(table: pa.Table) -> pd.DataFrame:
        sub = table.filter(pc.equal(table.column("qid"), qid))
        return pd.DataFrame({"docno": np.asarray(sub.column("docno").to_pylist(), dtype=object),
                             "grade": sub.column("rel").to_numpy().astype(np.int64)})

    real = rows(qrels.table)
    real["inferred"] = False
    if inferred is None:
        return real
    proxy = rows(inferred.table)
    proxy = proxy[~proxy["docno"].isin(real["docno"])]
    proxy["inferred"] = True
    return pd.concat([real, proxy], ignore_index=True)


def _retrieved_rank(ranked: Ranked | None, qid: str, docnos: np.ndarray) -> pd.array:
    if ranked is None:
        return None
    i = query_position(ranked, qid)
    a, b = int(ranked.offsets[i]), int(ranked.offsets[i + 1])
    listed = pd.Series(np.arange(1, b - a + 1), index=ranked.docno.slice(a, b - a).to_pylist())
    return pd.array(pd.Series(docnos, dtype=object).map(listed), dtype="Int64")


def ideal_ranking(qrels, qid, measure="nDCG", *, ranked: Ranked | None = None, docs=None,
                  depth: int | None = None, inferred=None) -> pd.DataFrame:
    """The ideal ranking of ``qid``: its judged documents with gain > 0, by gain descending.

    Documents of equal gain may come in any order without changing IDCG; they
    are listed by docno ascending. Columns ``rank, docno, [title,] grade,
    inferred, gain, discount, contribution, idcg`` and, when ``ranked`` is
    given, ``retrieved_rank`` (the document's rank in that run, <NA> if absent).
    ``inferred`` (proxy qrels) adds labels for documents the qrels lack, as
    ``metrics.ranking.rank(..., inferred=...)`` does.
    """
    m = _gain_measure(measure)
    qid = str(qid)
    judged = _query_judgments(qrels, qid, inferred)
    judged["gain"] = gain_of(judged["grade"].to_numpy(), m.param("dcg"), m.param("gains"))
    judged = judged[judged["gain"] > 0]
    judged = judged.sort_values(["gain", "docno"], ascending=[False, True], kind="stable").reset_index(drop=True)
    if depth is not None:
        judged = judged.iloc[:int(depth)]
    pos = np.arange(len(judged), dtype=np.int64)
    gain = judged["gain"].to_numpy(dtype=np.float64)
    contribution = gain / discount(pos)
    out = {"rank": pos + 1, "docno": judged["docno"].to_numpy(dtype=object)}
    titles = _titles(out["docno"], docs)
    if titles is not None:
        out["title"] = titles
    out.update({"grade": judged["grade"].to_numpy(), "inferred": judged["inferred"].to_numpy(dtype=bool),
                "gain": gain, "discount": 1.0 / discount(pos), "contribution": contribution,
                "idcg": np.cumsum(contribution)})
    rank_in_run = _retrieved_rank(ranked, qid, out["docno"])
    if rank_in_run is not None:
        out["retrieved_rank"] = rank_in_run
    frame = pd.DataFrame(out)
    frame.attrs.update({"qid": qid, "measure": str(m)})
    return frame


def unretrieved(qrels, ranked: Ranked, qid, *, rel_level: int = 1, depth: int | None = None, docs=None,
                inferred=None) -> pd.DataFrame:
    """Relevant documents of ``qid`` (grade >= ``rel_level``) that ``ranked`` never retrieved.

    With ``depth``, "retrieved" means within the top ``depth``. Columns
    ``docno, [title,] grade, inferred`` and ``retrieved_rank`` (<NA>, or the
    rank below ``depth`` where the run has it), by grade descending, then docno.
    """
    qid = str(qid)
    judged = _query_judgments(qrels, qid, inferred)
    judged = judged[judged["grade"] >= rel_level]
    judged = judged.sort_values(["grade", "docno"], ascending=[False, True], kind="stable").reset_index(drop=True)
    rank_in_run = _retrieved_rank(ranked, qid, judged["docno"].to_numpy(dtype=object))
    missed = rank_in_run.isna() if depth is None else (rank_in_run.isna() | (rank_in_run > int(depth)))
    missed = np.asarray(missed, dtype=bool)
    out = {"docno": judged["docno"].to_numpy(dtype=object)[missed]}
    titles = _titles(out["docno"], docs)
    if titles is not None:
        out["title"] = titles
    out.update({"grade": judged["grade"].to_numpy()[missed], "inferred": judged["inferred"].to_numpy()[missed],
                "retrieved_rank": rank_in_run[missed]})
    frame = pd.DataFrame(out)
    frame.attrs.update({"qid": qid, "system": ranked.name, "rel_level": rel_level})
    return frame


@dataclass
class RelevanceMatrix:
    """Grades of every (query, position) of one run: the data of a relevance heatmap.

    ``grade`` is float (NaN where the document is unjudged or the run has no
    document at that position); ``status`` holds codes into :data:`STATUS`
    (0 not retrieved, 1 judged, 2 unjudged, 3 inferred); ``docno`` the
    document (None where not retrieved). Rows follow ``qids``; columns are
    positions 1..depth.
    """

    system: str
    qids: np.ndarray
    grade: np.ndarray
    status: np.ndarray
    docno: np.ndarray

    @property
    def depth(self) -> int:
        return self.grade.shape[1]

    def frame(self) -> pd.DataFrame:
        """The grades as a frame: index qid, columns 1..depth."""
        return pd.DataFrame(self.grade, index=pd.Index(self.qids, name="qid"),
                            columns=pd.RangeIndex(1, self.depth + 1, name="rank"))


def relevance_matrix(ranked: Ranked, depth: int = 20, *, qids=None) -> RelevanceMatrix:
    """The grade at each of the top ``depth`` positions of every query (one vectorised scatter).

    ``qids`` (optional) selects and orders the rows.
    """
    depth = int(depth)
    if depth < 1:
        raise MetricsError(f"depth must be a whole number >= 1, got {depth}", fix="for example depth=20")
    n = ranked.n_queries
    rows = np.arange(n)
    if qids is not None:
        wanted = np.asarray([str(x) for x in qids], dtype=object)
        known = ranked.qids.astype(str)
        rows = np.searchsorted(known, wanted.astype(str))
        bad = (rows >= n) | (known[np.minimum(rows, max(n - 1, 0))] != wanted) if n else np.ones(len(wanted), bool)
        if bad.any():
            query_position(ranked, wanted[np.flatnonzero(bad)[0]])  # raises, naming the query
    # only the rows shown: the top ``depth`` of the chosen queries, never a pass over the whole run
    take, q, p = head_rows(ranked.offsets, depth, rows)
    grade = np.full((len(rows), depth), np.nan)
    status = np.zeros((len(rows), depth), dtype=np.int8)
    docno = np.full((len(rows), depth), None, dtype=object)
    judged, inferred = ranked.judged[take], ranked.inferred[take]
    grade[q, p] = np.where(judged, ranked.rel[take], np.nan)
    status[q, p] = np.where(~judged, 2, np.where(inferred, 3, 1))
    docno[q, p] = np.asarray(ranked.docnos().take(take).to_pylist(), dtype=object)
    return RelevanceMatrix(ranked.name, ranked.qids[rows], grade, status, docno)


def order_queries(frame: pd.DataFrame, measure: str | None = None, *, by: str = "difficulty",
                  pair: tuple[str, str] | None = None) -> pd.DataFrame:
    """Queries of a tidy frame (system, qid, measure, value) in the order a reader explores them.

    ``by="difficulty"``: mean over systems ascending (hardest first);
    ``by="difference"``: |A - B| descending for ``pair=(A, B)`` (largest
    disagreement first); ``by="qid"``: query id (numeric ids in number order).
    Returns index qid, one column per system, ``mean`` and, with a pair,
    ``difference`` = A - B. Ties keep query id order.
    """
    if measure is not None:
        frame = frame[frame["measure"] == measure]
    elif frame["measure"].nunique() > 1:
        raise MetricsError("the frame holds several measures", fix="pass measure=... to pick one")
    table = frame.pivot_table(index="qid", columns="system", values="value", aggfunc="first", observed=True)
    table.columns = [str(c) for c in table.columns]
    table.index = table.index.astype(str)
    table = table.loc[_natural_order(table.index)]
    table["mean"] = table.mean(axis=1)
    if pair is not None:
        a, b = pair
        for system in (a, b):
            if system not in table.columns:
                raise MetricsError(f"system {system!r} is not in the frame", fix="pick two evaluated systems")
        table["difference"] = table[a] - table[b]
    if by == "difficulty":
        return table.sort_values("mean", kind="stable")
    if by == "difference":
        if pair is None:
            raise MetricsError("ordering by difference needs two systems", fix="pass pair=(A, B)")
        return table.iloc[np.argsort(-table["difference"].abs().to_numpy(), kind="stable")]
    if by == "qid":
        return table
    raise MetricsError(f"cannot order queries by {by!r}", fix="use difficulty, difference or qid")


def _natural_order(qids) -> list[str]:
    """Query ids as numbers when they all are (2 before 10), else as strings."""
    qids = [str(q) for q in qids]
    if all(q.isdigit() for q in qids):
        return sorted(qids, key=lambda q: (int(q), q))
    return sorted(qids)
