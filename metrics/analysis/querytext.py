"""Query-text analysis: scores against query length, by length bucket, the queries where systems
disagree most, search in the topics, and the documents only one system retrieves.

Inputs are the tidy per-query frame of :func:`metrics.evaluate` (``system, qid, measure,
value``), a topics frame (:func:`metrics.io.topics.read_topics`, or any frame with ``qid`` and
text columns) with the field used as query text, and for overlap the :class:`Ranked`
arrays of :func:`metrics.ranking.rank`.

A query's length is its number of terms: blank-separated tokens holding at least one letter
or digit (``covid-19`` and ``what's`` are one term each, a lone ``-`` none).
"""
from __future__ import annotations

import itertools
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..io.topics import query_text, text_fields
from ..ranking import Ranked
from .heads import head_rows

__all__ = ["query_lengths", "length_vs_score", "length_trend", "length_edges", "by_length_bucket", "disagreement",
           "search_topics", "unique_documents", "overlap", "DEFAULT_BUCKETS"]

DEFAULT_BUCKETS = 5   # length buckets by quantile (quintiles of the queries' lengths)
_TERM = r"\S*\w\S*"


def query_lengths(topics: pd.DataFrame, field: str | None = None) -> pd.DataFrame:
    """``qid, text, length`` (terms of the chosen field; see the module docstring)."""
    texts = query_text(topics, field)
    texts["length"] = texts["text"].str.count(_TERM).astype("int64")
    return texts


def length_vs_score(frame: pd.DataFrame, topics: pd.DataFrame, measure: str, *, field: str | None = None,
                    systems=None) -> pd.DataFrame:
    """Per system and query: ``system, qid, text, length, value``. Queries without topic text are left out."""
    per_query = _measure_rows(frame, measure, systems)
    lengths = query_lengths(topics, field)
    joined = per_query.merge(lengths, on="qid", how="inner")
    return joined[["system", "qid", "text", "length", "value"]].reset_index(drop=True)


def length_trend(points: pd.DataFrame) -> pd.DataFrame:
    """Least-squares line ``value = intercept + slope · length`` per system, from :func:`length_vs_score`.

    slope = Σ(x − x̄)(y − ȳ) / Σ(x − x̄)², intercept = ȳ − slope · x̄, r = Pearson's correlation;
    slope, intercept and r are NaN when every query has the same length.
    Columns: ``system, n, slope, intercept, r``.
    """
    x = points["length"].to_numpy(dtype=float)
    y = points["value"].to_numpy(dtype=float)
    by_system = points.groupby("system", sort=False, observed=True)
    dx = x - by_system["length"].transform("mean").to_numpy(dtype=float)
    dy = y - by_system["value"].transform("mean").to_numpy(dtype=float)
    sums = pd.DataFrame({"system": points["system"].to_numpy(), "n": 1, "x": x, "y": y, "xx": dx * dx,
                         "xy": dx * dy, "yy": dy * dy}).groupby("system", sort=False).sum()
    n, sxx, sxy, syy = (sums[c].to_numpy() for c in ("n", "xx", "xy", "yy"))
    mean_x, mean_y = sums["x"].to_numpy() / n, sums["y"].to_numpy() / n
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.where(sxx > 0, sxy / sxx, np.nan)
        r = np.where((sxx > 0) & (syy > 0), sxy / np.sqrt(sxx * syy), np.nan)
    return pd.DataFrame({"system": pd.array([str(v) for v in sums.index], dtype="string"),
                         "n": n.astype(np.int64), "slope": slope, "intercept": mean_y - slope * mean_x, "r": r})


def length_edges(lengths, buckets: int = DEFAULT_BUCKETS) -> tuple[int, ...]:
    """Lower bounds of at most ``buckets`` length buckets that hold about as many queries each.

    The bounds are the lengths' quantiles at 0, 1/b, ..., (b-1)/b, each an observed length
    (numpy's "lower" rule: the value at position floor(q (n - 1)) of the sorted lengths), with
    repeats merged: 75 topics of 120 to 180 terms get five buckets of about 15 topics, where fixed
    bounds would put all of them in one; lengths 1, 1, 2, 2, 3 get the buckets 1 and 2+.
    """
    values = np.sort(np.asarray(lengths, dtype=np.int64))
    if buckets < 1:
        raise MetricsError(f"the number of length buckets must be >= 1, got {buckets}", fix="e.g. buckets=5")
    if not len(values):
        return (0,)
    quantiles = np.quantile(values, np.arange(buckets) / buckets, method="lower")
    return tuple(int(v) for v in np.unique(quantiles))


def by_length_bucket(frame: pd.DataFrame, topics: pd.DataFrame, measure: str, *, field: str | None = None,
                     edges=None, buckets: int = DEFAULT_BUCKETS, systems=None) -> pd.DataFrame:
    """Mean score per system and length bucket: ``system, bucket, n_queries, mean``.

    ``edges`` are the buckets' lower bounds (ascending); by default they come from the
    distribution of the queries' lengths (:func:`length_edges`, ``buckets`` quantiles), so that
    the buckets split the queries evenly whatever their lengths. Queries shorter than the first
    edge form a bucket of their own.
    """
    points = length_vs_score(frame, topics, measure, field=field, systems=systems)
    if edges is None:
        edges = length_edges(points.drop_duplicates("qid")["length"], buckets)
    edges = [int(e) for e in edges]
    if not edges or any(b <= a for a, b in itertools.pairwise(edges)) or edges[0] < 0:
        raise MetricsError(f"bucket edges must be ascending whole numbers >= 0, got {list(edges)}",
                           fix="e.g. edges=(1, 2, 3, 5, 10)")
    bounds = ([0] if edges[0] > 0 else []) + edges + [np.inf]
    labels = [_bucket_label(lo, hi) for lo, hi in itertools.pairwise(bounds)]
    points["bucket"] = pd.cut(points["length"], bins=bounds, right=False, labels=labels)
    out = points.groupby(["system", "bucket"], sort=False, observed=True)["value"].agg(["size", "mean"])
    out = out.reset_index().rename(columns={"size": "n_queries"})
    out["system"] = pd.Categorical(out["system"], categories=list(dict.fromkeys(points["system"])))
    return out.sort_values(["system", "bucket"]).reset_index(drop=True).astype({"system": "string"})


def _bucket_label(lo, hi) -> str:
    if hi == np.inf:
        return f"{int(lo)}+"
    return str(int(lo)) if hi - lo == 1 else f"{int(lo)}-{int(hi) - 1}"


def disagreement(frame: pd.DataFrame, topics: pd.DataFrame | None, measure: str, *, field: str | None = None,
                 systems=None, top: int | None = 10) -> pd.DataFrame:
    """The queries where systems differ most on ``measure``: largest spread (max − min) first.

    Columns: ``qid, text, spread, std`` (population std over systems), ``best, worst`` (the
    first system in order among equals), then one column per system. Ties in spread are
    ordered by qid. Needs two or more systems.
    """
    rows = _measure_rows(frame, measure, systems)
    order = list(dict.fromkeys(rows["system"]))
    if len(order) < 2:
        raise MetricsError(f"disagreement needs two or more systems, got {len(order)}", fix="evaluate more runs")
    wide = rows.pivot(index="qid", columns="system", values="value")[order]
    values = wide.to_numpy(dtype=float)
    out = pd.DataFrame({"qid": pd.array(wide.index.astype(str), dtype="string")})
    out["text"] = pd.array([""] * len(out), dtype="string")
    if topics is not None:
        texts = query_text(topics, field).drop_duplicates("qid").set_index("qid")["text"]
        out["text"] = out["qid"].map(texts).fillna("").astype("string")
    out["spread"] = np.nanmax(values, axis=1) - np.nanmin(values, axis=1)
    out["std"] = np.nanstd(values, axis=1)
    out["best"] = pd.array(np.array(order, dtype=object)[np.nanargmax(values, axis=1)], dtype="string")
    out["worst"] = pd.array(np.array(order, dtype=object)[np.nanargmin(values, axis=1)], dtype="string")
    for j, system in enumerate(order):
        out[system] = values[:, j]
    out = out.sort_values(["spread", "qid"], ascending=[False, True], kind="stable").reset_index(drop=True)
    return out if top is None else out.head(int(top))


def search_topics(topics: pd.DataFrame, words: str, *, fields=None, match: str = "all") -> pd.DataFrame:
    """Topics whose text holds the words (whole words, any case), in file order.

    ``fields``: where to look (default every text field); ``match``: ``"all"`` words or ``"any"``.
    Adds a ``matched`` column naming the fields where a word was found.
    """
    if match not in ("all", "any"):
        raise MetricsError(f"match={match!r} is not an option", fix="use match='all' or match='any'")
    fields = text_fields(topics) if fields is None else list(fields)
    missing = [f for f in fields if f not in topics.columns]
    if missing:
        raise MetricsError(f"the topics have no field {missing[0]!r}",
                           fix=f"choose among {', '.join(text_fields(topics))}")
    terms = [w for w in str(words).split() if w]
    if not terms:
        return topics.iloc[0:0].assign(matched=pd.Series(dtype="string"))
    patterns = [rf"(?<!\w){re.escape(t)}(?!\w)" for t in terms]
    per_term = []
    found_in = {f: np.zeros(len(topics), dtype=bool) for f in fields}
    for pattern in patterns:
        hit = np.zeros(len(topics), dtype=bool)
        for f in fields:
            in_field = topics[f].fillna("").str.contains(pattern, case=False, regex=True).to_numpy(dtype=bool)
            found_in[f] |= in_field
            hit |= in_field
        per_term.append(hit)
    keep = np.logical_and.reduce(per_term) if match == "all" else np.logical_or.reduce(per_term)
    out = topics[keep].copy()
    out["matched"] = pd.array([", ".join(f for f in fields if found_in[f][i]) for i in np.flatnonzero(keep)],
                              dtype="string")
    return out.reset_index(drop=True)


# --------------------------------------------------------------------------- overlap between systems


def unique_documents(rankeds, k: int = 10, *, rel_level: int = 1) -> pd.DataFrame:
    """Documents in the top ``k`` of exactly one system: ``system, qid, docno, rank, judged, rel, relevant``.

    ``rankeds``: a list of :class:`Ranked` (or a {name: Ranked} mapping) ranked against the
    same qrels. ``rel`` is the grade (NA when unjudged); ``relevant`` is rel >= ``rel_level``.
    Rows by system (in the order given), query, rank.
    """
    top = _top_k(rankeds, k)
    unique = top["count"] == 1
    rel = pd.array(np.where(top["judged"], top["rel"], 0), dtype="Int64")
    rel[~top["judged"]] = pd.NA
    frame = pd.DataFrame({
        "system": pd.array(np.array(top["names"], dtype=object)[top["system"]], dtype="string"),
        "qid": pd.array(top["qids"][top["qcode"]], dtype="string"),
        "docno": pd.array(top["docno"].to_numpy(zero_copy_only=False), dtype="string"),
        "rank": top["rank"], "judged": top["judged"], "rel": rel,
        "relevant": top["judged"] & (top["rel"] >= rel_level)})
    return frame[unique].reset_index(drop=True)


def overlap(rankeds, k: int = 10, *, rel_level: int = 1) -> pd.DataFrame:
    """Per system and query, how much of its top ``k`` the others share.

    Columns: ``system, qid, retrieved`` (documents in its top k), ``unique`` (in no other
    system's top k), ``unique_relevant`` (of those, judged with grade >= ``rel_level``),
    ``shared_by_all`` (in every system's top k).
    """
    top = _top_k(rankeds, k)
    n_q, n_s = len(top["qids"]), len(top["names"])
    cell = top["system"] * n_q + top["qcode"]
    unique = top["count"] == 1
    relevant = top["judged"] & (top["rel"] >= rel_level)

    def per_cell(mask):
        return np.bincount(cell[mask], minlength=n_s * n_q).astype(np.int64)

    everything = np.ones(len(cell), dtype=bool)
    return pd.DataFrame({
        "system": pd.array(np.repeat(np.array(top["names"], dtype=object), n_q), dtype="string"),
        "qid": pd.array(np.tile(top["qids"], n_s), dtype="string"),
        "retrieved": per_cell(everything), "unique": per_cell(unique), "unique_relevant": per_cell(unique & relevant),
        "shared_by_all": per_cell(top["count"] == n_s)})


def _top_k(rankeds, k: int) -> dict:
    """The top k of every ranking, concatenated, with the number of systems having each (query, docno)."""
    if int(k) < 1:
        raise MetricsError(f"k must be a whole number >= 1, got {k!r}", fix="for example k=10")
    k = int(k)
    if isinstance(rankeds, Mapping):
        names, rankeds = [str(n) for n in rankeds], list(rankeds.values())
    else:
        rankeds = list(rankeds)
        names = [r.name for r in rankeds]
    if not rankeds or not all(isinstance(r, Ranked) for r in rankeds):
        raise MetricsError("overlap needs rankings (metrics.ranking.rank or metrics.rank_run)",
                           fix="rank every run against the same qrels first")
    qids = rankeds[0].qids
    if any(len(r.qids) != len(qids) or not np.array_equal(r.qids, qids) for r in rankeds[1:]):
        raise MetricsError("the rankings were made against different qrels (their queries differ)",
                           fix="rank every run against the same qrels")
    parts: dict[str, list[Any]] = {"system": [], "qcode": [], "rank": [], "rel": [], "judged": [], "docno": []}
    for i, r in enumerate(rankeds):
        rows, query, pos = head_rows(r.offsets, k)   # the top k alone, not a pass over every row
        parts["system"].append(np.full(len(rows), i, dtype=np.int64))
        parts["qcode"].append(query)
        parts["rank"].append(pos + 1)
        parts["rel"].append(r.rel[rows])
        parts["judged"].append(r.judged[rows])
        parts["docno"].append(r.docnos().take(rows))
    out: dict[str, Any] = {key: np.concatenate(v) for key, v in parts.items() if key != "docno"}
    docno = pa.chunked_array(parts["docno"], type=pa.string()).combine_chunks()
    encoded = pc.dictionary_encode(docno)
    key = out["qcode"] * max(len(encoded.dictionary), 1) + encoded.indices.to_numpy(zero_copy_only=False)
    _, inverse, counts = np.unique(key, return_inverse=True, return_counts=True)
    out.update(count=counts[inverse], docno=docno, names=names, qids=np.asarray(qids, dtype=object))
    return out


def _measure_rows(frame: pd.DataFrame, measure: str, systems) -> pd.DataFrame:
    rows = frame[frame["measure"] == measure]
    if rows.empty:
        raise MetricsError(f"the results have no measure {measure!r}",
                           fix=f"use one of {', '.join(map(str, dict.fromkeys(frame['measure'])))}")
    if systems is not None:
        wanted = [str(s) for s in systems]
        unknown = [s for s in wanted if s not in set(rows["system"])]
        if unknown:
            raise MetricsError(f"no system {unknown[0]!r} in the results",
                               fix=f"choose among {', '.join(dict.fromkeys(rows['system']))}")
        rows = rows[rows["system"].isin(wanted)]
    return pd.DataFrame({"system": rows["system"].astype("string").to_numpy(),
                         "qid": rows["qid"].astype("string").to_numpy(),
                         "value": rows["value"].to_numpy(dtype=float)}).astype({"system": "string", "qid": "string"})
