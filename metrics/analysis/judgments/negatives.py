"""Incomplete judgments and hard negatives: what the qrels miss, and what runs get wrong.

Every function takes the systems as ``{name: Ranked}`` (``metrics.ranking.rank``
of each run against the same qrels, proxy labels left out) and works on their
flat arrays: a loop over the handful of systems, never over queries.

Definitions used throughout (ranks are 1-based, canonical order):

- *judged*: the real qrels hold the (query, document) pair, any grade; proxy
  labels never count as judgments here.
- *hard negative*: a document judged non-relevant (grade <= 0) that at least
  one system ranks in its top ``depth``.
- *unjudged above the relevant*: an unjudged document that at least one system
  ranks in its top ``depth`` and above every judged relevant document (grade >=
  ``min_grade``) that system retrieves (all of its top ``depth`` when it
  retrieves none). Unverified negatives, used only when asked for.
- *recall failure*: a judged document with grade >= ``min_grade`` that no
  system ranks in its top ``depth``.
- Order of documents within a query (tables and exports): best rank across
  systems, then the number of systems that rank it in the top ``depth`` (more
  first), then docno (ascending, as bytes). Queries in string order.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..evaluate import TIE_DECIMALS, evaluate, means
from ..ranking import Ranked, positions

STRATEGIES: dict[str, str] = {
    "zero": "unjudged = 0",
    "condensed": "condensed (judged only)",
    "inferred": "inferred (proxy labels)",
}
"""Treatments of unjudged documents: gain 0 (trec_eval's default), removed from
the list (``judged_only``, trec_eval -J), or labelled from a proxy qrels."""

BEST_GAP = 0.1
"""A system whose Judged@k is more than this below the best system's is flagged."""
MEDIAN_GAP = 0.05
"""... or more than this below the median of all compared systems."""

TEMPLATE_PLACEHOLDER = -1
"""Grade written for "not judged yet" in a judging template (see :func:`qrels_template`)."""



# ---------------------------------------------------------------- strategies

def strategy_table(means: Mapping[str, Mapping[str, float] | pd.Series], *,
                   reference: str | None = None) -> pd.DataFrame:
    """The leaderboard under each strategy: tidy ``system, strategy, value, rank, change``.

    ``means`` maps strategy -> {system: mean value} (e.g. a column of
    ``metrics.means``). ``rank`` is 1 for the best value; means equal to 12
    decimals share the better rank (competition ranking: 1, 2, 2, 4).
    ``change`` = rank under ``reference`` (default: the first strategy) minus
    rank here, so +1 means the system moved up one place. Systems keep the
    order of the reference strategy's input.
    """
    if not means:
        raise MetricsError("no strategies given", fix="pass {strategy: {system: value}}")
    strategies = list(means)
    reference = strategies[0] if reference is None else reference
    if reference not in means:
        raise MetricsError(f"reference strategy {reference!r} is not among {', '.join(strategies)}",
                           fix="pick one of the given strategies")
    systems = list(dict.fromkeys(str(s) for s in pd.Series(means[reference]).index))
    for strategy in strategies:
        for system in pd.Series(means[strategy]).index:
            if str(system) not in systems:
                systems.append(str(system))
    parts = []
    ranks = {}
    for strategy in strategies:
        values = pd.Series(means[strategy], dtype="float64")
        values.index = values.index.astype(str)
        values = values.reindex(systems)
        ranks[strategy] = _competition_rank(values.to_numpy())
        parts.append(values)
    rows = []
    for strategy, values in zip(strategies, parts):
        change = ranks[reference] - ranks[strategy]
        rows.append(pd.DataFrame({"system": systems, "strategy": strategy, "value": values.to_numpy(),
                                  "rank": ranks[strategy], "change": change}))
    out = pd.concat(rows, ignore_index=True)
    return out.astype({"system": "string", "strategy": "string", "rank": "Int64", "change": "Int64"})


def _competition_rank(values: np.ndarray) -> np.ndarray:
    """1 + the number of strictly better values; NaN for a missing value."""
    rounded = np.round(values.astype(np.float64), TIE_DECIMALS)
    finite = np.isfinite(rounded)
    better = (rounded[None, :] > rounded[:, None]) & finite[None, :]
    return np.where(finite, 1.0 + better.sum(axis=1), np.nan)


def rank_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau-b between the system orders of every pair of strategies.

    ``table`` is :func:`strategy_table`'s frame. Returns ``strategy_a,
    strategy_b, tau, p_value, systems, changed`` (``changed``: systems whose
    rank differs). tau = 1 means the same order; NaN with fewer than 2 systems
    or when one order is all ties.
    """
    from scipy.stats import kendalltau

    strategies = list(dict.fromkeys(table["strategy"]))
    wide = table.pivot_table(index="system", columns="strategy", values="value", aggfunc="first", observed=True,
                             dropna=False)
    rank = table.pivot_table(index="system", columns="strategy", values="rank", aggfunc="first", observed=True,
                             dropna=False)
    rows = []
    for a, b in combinations(strategies, 2):
        both = wide[[a, b]].dropna()
        tau = p = np.nan
        if len(both) >= 2:
            x = np.round(both[a].to_numpy(dtype=np.float64), TIE_DECIMALS)
            y = np.round(both[b].to_numpy(dtype=np.float64), TIE_DECIMALS)
            if np.unique(x).size > 1 and np.unique(y).size > 1:
                result = kendalltau(x, y)
                tau, p = float(result.statistic), float(result.pvalue)
        changed = int((rank.loc[both.index, a] != rank.loc[both.index, b]).sum())
        rows.append({"strategy_a": a, "strategy_b": b, "tau": tau, "p_value": p, "systems": len(both),
                     "changed": changed})
    return pd.DataFrame(rows, columns=["strategy_a", "strategy_b", "tau", "p_value", "systems", "changed"])


def evaluate_strategies(qrels, runs, measure: str = "nDCG@10", *, proxy=None, **options) -> pd.DataFrame:
    """:func:`strategy_table` of ``measure`` computed by ``metrics.evaluate``.

    Strategies: ``zero`` (default evaluation), ``condensed`` (``judged_only``)
    and, when a ``proxy`` qrels is given, ``inferred``. ``options`` go to
    ``metrics.evaluate`` (missing, ties, max_depth, rel_level, on_duplicate).
    """

    measure = str(measure)
    table = {
        "zero": means(evaluate(qrels, runs, [measure], **options)).iloc[:, 0],
        "condensed": means(evaluate(qrels, runs, [measure], judged_only=True, **options)).iloc[:, 0],
    }
    if proxy is not None:
        table["inferred"] = means(evaluate(qrels, runs, [measure], inferred=proxy, **options)).iloc[:, 0]
    return strategy_table(table)


def judged_warnings(judged: Mapping[str, float] | pd.Series, *, best_gap: float = BEST_GAP,
                    median_gap: float = MEDIAN_GAP) -> pd.DataFrame:
    """Systems whose Judged@k is well below the others': their scores are lower bounds.

    A system is flagged when its mean Judged@k is more than ``best_gap`` below
    the best system's, or more than ``median_gap`` below the median of all
    compared systems (itself included). Needs two or more systems. Returns
    ``system, judged, best, median, below_best, below_median, reason`` for the
    flagged systems only, lowest Judged@k first.
    """
    values = pd.Series(judged, dtype="float64").dropna()
    columns = ["system", "judged", "best", "median", "below_best", "below_median", "reason"]
    if len(values) < 2:
        return pd.DataFrame(columns=columns)
    best, median = float(values.max()), float(values.median())
    below_best, below_median = best - values, median - values
    flagged = (below_best > best_gap) | (below_median > median_gap)
    reason = np.where(below_best > best_gap, f"more than {best_gap:g} below the best",
                      f"more than {median_gap:g} below the median")
    out = pd.DataFrame({"system": values.index.astype(str), "judged": values.to_numpy(), "best": best,
                        "median": median, "below_best": below_best.to_numpy(),
                        "below_median": below_median.to_numpy(), "reason": reason})[flagged.to_numpy()]
    return out.sort_values(["judged", "system"], kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- the flat rows of all systems

@dataclass
class _Rows:
    """The top ``depth`` of every system, stacked: one entry per (system, retrieved document)."""

    systems: list[str]
    qids: np.ndarray          # global query list (sorted strings)
    system: np.ndarray        # system index per row
    query: np.ndarray         # global query index per row
    docno: pa.Array
    rank: np.ndarray          # 1-based
    rel: np.ndarray
    judged: np.ndarray        # judged by the real qrels (proxy labels excluded)
    above_relevant: np.ndarray  # unjudged and above the system's first relevant document
    retrieved: np.ndarray     # (systems x queries) list lengths before the depth cut


def _check_runs(runs: Mapping[str, Ranked]) -> dict[str, Ranked]:
    if isinstance(runs, Ranked):
        runs = {runs.name: runs}
    if not isinstance(runs, Mapping) or not runs:
        raise MetricsError("no systems given", fix="pass {name: Ranked}, e.g. {'bm25': metrics.rank_run(qrels, run)}")
    for name, ranked in runs.items():
        if not isinstance(ranked, Ranked):
            raise MetricsError(f"system {name!r} is a {type(ranked).__name__}, not a Ranked",
                               fix="rank it first: metrics.rank_run(qrels, run)")
    return {str(k): v for k, v in runs.items()}


def _depth(depth, what: str = "depth") -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise MetricsError(f"{what} must be a whole number >= 1, got {depth!r}", fix=f"for example {what}=10")
    return int(depth)


def _stack(runs: Mapping[str, Ranked], depth: int | None, min_grade: int = 1) -> _Rows:
    runs = _check_runs(runs)
    names = list(runs)
    qids = np.unique(np.concatenate([np.asarray(r.qids, dtype=object) for r in runs.values()]).astype(str))
    parts = {k: [] for k in ("system", "query", "rank", "rel", "judged", "above")}
    docnos = []
    retrieved = np.zeros((len(names), len(qids)), dtype=np.int64)
    for s, ranked in enumerate(runs.values()):
        q_global = np.searchsorted(qids, np.asarray(ranked.qids, dtype=object).astype(str))
        retrieved[s, q_global] = ranked.lengths
        pos = positions(ranked.offsets)
        query = np.repeat(q_global, ranked.lengths)
        judged = ranked.judged & ~ranked.inferred
        relevant = judged & (ranked.rel >= min_grade)
        # first relevant position per query (positions ascend within a query, so the first hit wins)
        first_rel = np.full(len(qids), np.iinfo(np.int64).max, dtype=np.int64)
        q_rel, first = np.unique(query[relevant], return_index=True)
        first_rel[q_rel] = pos[relevant][first]
        above = ~judged & (pos < first_rel[query])
        keep = pos < depth if depth is not None else np.ones(len(pos), dtype=bool)
        parts["system"].append(np.full(int(keep.sum()), s, dtype=np.int64))
        parts["query"].append(query[keep])
        parts["rank"].append(pos[keep] + 1)
        parts["rel"].append(ranked.rel[keep])
        parts["judged"].append(judged[keep])
        parts["above"].append(above[keep])
        docnos.append(ranked.docno.filter(pa.array(keep)) if not keep.all() else ranked.docno)
    docno = pa.concat_arrays([d.cast(pa.string()) for d in docnos]) if docnos else pa.array([], pa.string())
    cat = {k: np.concatenate(v) if v else np.array([], dtype=np.int64) for k, v in parts.items()}
    return _Rows(systems=names, qids=qids, system=cat["system"], query=cat["query"], docno=docno,
                 rank=cat["rank"], rel=cat["rel"], judged=cat["judged"].astype(bool),
                 above_relevant=cat["above"].astype(bool), retrieved=retrieved)


def _doc_codes(*arrays: pa.Array) -> tuple[list[np.ndarray], int]:
    """Codes of docnos in a shared dictionary sorted as strings (so code order = docno order)."""
    joined = pa.concat_arrays([a.cast(pa.string()) for a in arrays])
    dictionary = pc.unique(joined)
    dictionary = dictionary.take(pc.sort_indices(dictionary))
    out = [pc.index_in(a.cast(pa.string()), value_set=dictionary).to_numpy(zero_copy_only=False).astype(np.int64)
           for a in arrays]
    return out, max(len(dictionary), 1)


def _order(*keys: tuple[np.ndarray, int]) -> np.ndarray:
    """Row order sorting by ``keys`` (most significant first), each given as (values >= 0, bound).

    The keys are packed into one int64 when their bounds allow (one argsort,
    much faster than lexsort); callers pass keys that are unique together, so
    the sort needs no stability.
    """
    total = 1
    for _, bound in keys:
        total *= max(int(bound), 1)
    if total < 2**62:
        packed = np.zeros(len(keys[0][0]), dtype=np.int64)
        for values, bound in keys:
            packed = packed * max(int(bound), 1) + values
        return np.argsort(packed)
    return np.lexsort(tuple(values for values, _ in reversed(keys)))


def _group(rows: _Rows, select: np.ndarray, *, keep=None, per_query: int | None = None) -> pa.Table:
    """One row per (query, docno) among the selected rows, with best rank, systems and ranks.

    Columns: qid, docno, best_rank, n_systems, judged, grade (null when
    unjudged), above_relevant (some system ranks it above all its relevant
    documents), ranks (list of {system, rank} in system order), ranks_text
    ("bm25@3, dense@1"). Sorted by qid, best rank, systems (more first), docno.
    ``keep(groups) -> bool mask`` drops groups (``groups`` maps judged, above,
    query, best, counts to per-group arrays) and ``per_query`` keeps the first
    N groups of each query, before the (costlier) string and list columns are built.
    """
    idx = np.flatnonzero(select)
    docno = rows.docno.take(pa.array(idx, type=pa.int64()))
    (dcode,), n_docs = _doc_codes(docno) if len(idx) else ([np.array([], dtype=np.int64)], 1)
    query, system, rank = rows.query[idx], rows.system[idx], rows.rank[idx]
    n_q, n_s = len(rows.qids), len(rows.systems)
    order = _order((query, n_q), (dcode, n_docs), (system, n_s)) if len(idx) else np.array([], np.int64)
    key_s = (query * n_docs + dcode)[order]
    n = len(order)
    starts = np.flatnonzero(np.concatenate(([True], key_s[1:] != key_s[:-1]))) if n else np.array([], np.int64)
    counts = np.diff(np.append(starts, n))
    if n:
        groups = {
            "best": np.minimum.reduceat(rank[order], starts),
            "above": np.logical_or.reduceat(rows.above_relevant[idx][order], starts),
            "judged": rows.judged[idx][order][starts],   # a judgment belongs to (query, docno)
            "rel": rows.rel[idx][order][starts],
        }
    else:
        groups = {"best": counts.copy(), "above": np.zeros(0, bool), "judged": np.zeros(0, bool),
                  "rel": np.zeros(0, np.int64)}
    first = order[starts] if n else np.array([], dtype=np.int64)
    groups.update(query=query[first], dcode=dcode[first], counts=counts, start=starts)
    if keep is not None:
        mask = np.asarray(keep(groups), dtype=bool)
        groups = {k: v[mask] for k, v in groups.items()}
    max_rank = int(groups["best"].max()) + 1 if len(groups["best"]) else 1
    # final order: query, best rank, more systems first, docno
    final = _order((groups["query"], n_q), (groups["best"], max_rank), (n_s - groups["counts"], n_s + 1),
                   (groups["dcode"], n_docs)) if len(groups["best"]) else np.array([], np.int64)
    groups = {k: v[final] for k, v in groups.items()}
    if per_query is not None and len(groups["query"]):
        change = np.flatnonzero(np.concatenate(([True], groups["query"][1:] != groups["query"][:-1], [True])))
        capped = positions(change) < per_query
        groups = {k: v[capped] for k, v in groups.items()}

    # member rows of the kept groups, in system order within a group
    member_offsets = np.zeros(len(groups["counts"]) + 1, dtype=np.int64)
    np.cumsum(groups["counts"], out=member_offsets[1:])
    members = order[np.repeat(groups["start"], groups["counts"]) + positions(member_offsets)]
    names = pa.array(rows.systems, pa.string()).take(pa.array(system[members], type=pa.int64()))
    rank_values = pa.array(rank[members], pa.int64())
    offsets = pa.array(member_offsets, pa.int64())
    ranks = pa.LargeListArray.from_arrays(offsets, pa.StructArray.from_arrays([names, rank_values],
                                                                              ["system", "rank"]))
    text = pc.binary_join(pa.LargeListArray.from_arrays(
        offsets, pc.binary_join_element_wise(names, pc.cast(rank_values, pa.string()), "@")), ", ")
    first = order[groups["start"]]
    return pa.table({
        "qid": pa.array(rows.qids.tolist(), pa.string()).take(pa.array(groups["query"], pa.int64())),
        "docno": docno.take(pa.array(first, type=pa.int64())),
        "best_rank": pa.array(groups["best"], pa.int64()),
        "n_systems": pa.array(groups["counts"], pa.int64()),
        "judged": pa.array(groups["judged"], pa.bool_()),
        "grade": pa.array(groups["rel"], pa.int64(), mask=~groups["judged"]),
        "above_relevant": pa.array(groups["above"], pa.bool_()),
        "ranks": ranks,
        "ranks_text": text,
    })


def _frame(table: pa.Table, columns: list[str]) -> pd.DataFrame:
    """pandas view with nullable integers and string columns."""
    frame = table.select(columns).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(),
                                                          pa.string(): pd.StringDtype()}.get)
    return frame.rename(columns={"ranks_text": "ranks"})


# ---------------------------------------------------------------- unjudged documents

def unjudged_top(runs: Mapping[str, Ranked], depth: int = 10) -> pd.DataFrame:
    """Per system, the unjudged documents in its top ``depth``: the judging to-do list.

    Returns ``system, qid, rank, docno`` ordered by system (input order), rank,
    qid: the documents a system ranks highest come first.
    """
    rows = _stack(runs, _depth(depth))
    idx = np.flatnonzero(~rows.judged)
    order = idx[np.lexsort((rows.query[idx], rows.rank[idx], rows.system[idx]))]
    return pd.DataFrame({
        "system": pd.array(np.asarray(rows.systems, dtype=object)[rows.system[order]], dtype="string"),
        "qid": pd.array(rows.qids[rows.query[order]], dtype="string"),
        "rank": pd.array(rows.rank[order], dtype="Int64"),
        "docno": pd.array(rows.docno.take(pa.array(order, type=pa.int64())).to_pylist(), dtype="string"),
    })


def judging_pool(runs: Mapping[str, Ranked], depth: int = 10) -> pd.DataFrame:
    """Unjudged documents in any system's top ``depth``, pooled: ``qid, docno, best_rank, n_systems, ranks``.

    The pool a TREC-style assessment would add: one row per (query, document),
    in the module's document order.
    """
    rows = _stack(runs, _depth(depth))
    table = _group(rows, ~rows.judged)
    return _frame(table, ["qid", "docno", "best_rank", "n_systems", "ranks_text"])


def qrels_template(todo: pd.DataFrame, *, header: bool = True, note: str | None = None) -> str:
    """A qrels file to fill in: ``qid 0 docno -1`` per (query, document) of ``todo``.

    ``todo`` needs columns ``qid, docno`` (from :func:`unjudged_top` or
    :func:`judging_pool`); rows are deduplicated and sorted by qid then docno.
    -1 means "not judged yet". trec_eval reads a negative grade as judged
    non-relevant (and -J drops such documents, like unjudged ones), so an
    unfilled template changes no nDCG, AP, P or R; only Judged@k counts the
    rows as judged. With ``header`` the file starts with ``#`` comment lines,
    which nDCG Lab skips; remove them for trec_eval (``grep -v '^#'``).
    """
    for column in ("qid", "docno"):
        if column not in todo.columns:
            raise MetricsError(f"to-do list lacks column {column!r}",
                               fix="pass the frame of unjudged_top() or judging_pool()")
    pairs = pa.table({"qid": pa.array(todo["qid"].astype(str).tolist(), pa.string()),
                      "docno": pa.array(todo["docno"].astype(str).tolist(), pa.string())})
    pairs = pairs.group_by(["qid", "docno"], use_threads=False).aggregate([])
    pairs = pairs.sort_by([("qid", "ascending"), ("docno", "ascending")])
    lines = []
    if header:
        lines += [
            "# nDCG Lab judging template (TREC qrels: qid iteration docno rel)",
            f"# replace {TEMPLATE_PLACEHOLDER} with a grade: 0 = not relevant, 1 and up = relevant",
            f"# rows left at {TEMPLATE_PLACEHOLDER} count as judged non-relevant (trec_eval; -J drops them)",
            "# nDCG Lab skips lines starting with #; for trec_eval remove them: grep -v '^#'",
        ]
        if note:
            lines += [f"# {line}" for line in note.splitlines()]
    body = pc.binary_join_element_wise(pairs["qid"], pa.scalar("0"), pairs["docno"],
                                       pa.scalar(str(TEMPLATE_PLACEHOLDER)), " ")
    lines += body.to_pylist()
    return "\n".join(lines) + "\n"


def first_unjudged(runs: Mapping[str, Ranked]) -> pd.DataFrame:
    """How deep judgments reach: ``qid, system, first_unjudged, retrieved``.

    ``first_unjudged`` is the rank of the first document the qrels do not
    judge (<NA> when the whole list is judged, or nothing was retrieved); the
    list is judged without a gap down to ``first_unjudged - 1``.
    """
    rows = _stack(runs, None)
    n_s, n_q = rows.retrieved.shape
    first = np.zeros((n_s, n_q), dtype=np.int64)
    unj = np.flatnonzero(~rows.judged)
    flat = rows.system[unj] * n_q + rows.query[unj]
    cells, at = np.unique(flat, return_index=True)  # rows are in rank order within (system, query)
    first.ravel()[cells] = rows.rank[unj][at]
    first_rank = pd.array(first.ravel(), dtype="Int64")
    first_rank[first.ravel() == 0] = pd.NA
    return pd.DataFrame({
        "qid": pd.array(np.tile(rows.qids, n_s), dtype="string"),
        "system": pd.array(np.repeat(np.asarray(rows.systems, dtype=object), n_q), dtype="string"),
        "first_unjudged": first_rank,
        "retrieved": pd.array(rows.retrieved.ravel(), dtype="Int64"),
    })


# ---------------------------------------------------------------- overlap of top-k lists

def topk_jaccard(runs: Mapping[str, Ranked], k: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Overlap of the systems' top-k lists: (mean matrix, per-query frame).

    Jaccard(A, B) = |A ∩ B| / |A ∪ B| of the two top-k document sets of a
    query; NaN when both are empty (a query neither retrieves for). The
    matrix (systems x systems, diagonal 1) holds the mean over queries with
    a value; the per-query frame has ``qid, system_a, system_b, jaccard``.
    """
    rows = _stack(runs, _depth(k, "k"))
    (dcode,), n_docs = _doc_codes(rows.docno) if len(rows.rank) else ([np.array([], np.int64)], 1)
    key = rows.query * n_docs + dcode
    n_s, n_q = len(rows.systems), len(rows.qids)
    keys = [np.sort(key[rows.system == s]) for s in range(n_s)]
    sizes = np.minimum(rows.retrieved, int(k))
    matrix = np.eye(n_s)
    parts = []
    for a, b in combinations(range(n_s), 2):
        both = np.intersect1d(keys[a], keys[b], assume_unique=True)
        inter = np.bincount(both // n_docs, minlength=n_q).astype(np.float64)
        union = sizes[a] + sizes[b] - inter
        jac = np.full(n_q, np.nan)
        np.divide(inter, union, out=jac, where=union > 0)
        mean = float(np.nanmean(jac)) if np.isfinite(jac).any() else np.nan
        matrix[a, b] = matrix[b, a] = mean
        parts.append(pd.DataFrame({"qid": rows.qids, "system_a": rows.systems[a], "system_b": rows.systems[b],
                                   "jaccard": jac}))
    names = pd.Index(rows.systems, name="system")
    columns = ["qid", "system_a", "system_b", "jaccard"]
    per_query = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=columns)
    return pd.DataFrame(matrix, index=names, columns=names), per_query.astype(
        {"qid": "string", "system_a": "string", "system_b": "string", "jaccard": "float64"})


def pool_depth(runs: Mapping[str, Ranked], k: int = 10) -> pd.DataFrame:
    """Per query: the first unjudged rank of every system and the mean pairwise Jaccard of the top k.

    Columns ``qid``, one per system (first unjudged rank, <NA>: judged
    throughout) and ``jaccard@k`` (NaN with one system).
    """
    first = first_unjudged(runs)
    wide = first.pivot(index="qid", columns="system", values="first_unjudged")
    wide = wide.reindex(columns=list(_check_runs(runs)))
    _, per_query = topk_jaccard(runs, k)
    mean = per_query.groupby("qid", observed=True)["jaccard"].mean() if len(per_query) else None
    wide[f"jaccard@{k}"] = mean.reindex(wide.index).to_numpy() if mean is not None else np.nan
    wide.columns.name = None
    return wide.reset_index()


# ---------------------------------------------------------------- hard negatives

def _check_grade(min_grade) -> int:
    if isinstance(min_grade, bool) or not isinstance(min_grade, (int, np.integer)) or min_grade < 1:
        raise MetricsError(f"min_grade must be a whole number >= 1, got {min_grade!r}",
                           fix="positives need a grade above the non-relevant 0, e.g. min_grade=1")
    return int(min_grade)


def _candidates(runs, depth, min_grade, include_unjudged, *, per_query=None, queries=None) -> pa.Table:
    """Negative candidates: (query, document) pairs of some top ``depth`` that are judged
    non-relevant or, with ``include_unjudged``, unjudged and above all relevant documents in
    some system; best rank, systems and ranks count every system that ranks it in the top
    ``depth``. ``queries`` (bool per query) restricts them, ``per_query`` caps them."""
    rows = _stack(runs, depth, min_grade)
    # a judgment belongs to (query, document), so every row of a candidate is selected here
    select = rows.judged & (rows.rel <= 0)
    if include_unjudged:
        select |= ~rows.judged

    def keep(groups):
        mask = groups["judged"] | groups["above"]
        return mask if queries is None else mask & queries(rows.qids)[groups["query"]]

    return _group(rows, select, keep=keep, per_query=per_query)


def hard_negatives(runs: Mapping[str, Ranked], depth: int = 10, *, include_unjudged: bool = False,
                   min_grade: int = 1) -> pd.DataFrame:
    """Judged non-relevant documents that some system ranks in its top ``depth``.

    Returns ``qid, docno, grade, judged, n_systems, best_rank, ranks`` (ranks:
    "system@rank, ..." in system order) in the module's document order. With
    ``include_unjudged``, unjudged documents ranked above every relevant one
    (grade >= ``min_grade``) join them with ``judged`` False and grade <NA>.
    """
    table = _candidates(runs, _depth(depth), _check_grade(min_grade), include_unjudged)
    return _frame(table, ["qid", "docno", "grade", "judged", "n_systems", "best_rank", "ranks_text"])


def _qrels_table(qrels) -> pa.Table:
    table = getattr(qrels, "table", qrels)
    if not isinstance(table, pa.Table) or not {"qid", "docno", "rel"} <= set(table.column_names):
        raise MetricsError("qrels must be a metrics.Qrels or a table with qid, docno, rel",
                           fix="read it with metrics.read_qrels(path)")
    return pa.table({"qid": table["qid"].cast(pa.string()), "docno": table["docno"].cast(pa.string()),
                     "rel": table["rel"].cast(pa.int64())})


def _positives(qrels, runs, depth, min_grade) -> pa.Table:
    """Judged documents with grade >= min_grade of the compared queries, with their best rank in the top depth."""
    rows = _stack(runs, depth, min_grade)
    ranked = _group(rows, rows.judged & (rows.rel >= min_grade))
    table = _qrels_table(qrels)
    table = table.filter(pc.and_(pc.greater_equal(table["rel"], min_grade),
                                 pc.is_in(table["qid"], value_set=pa.array(rows.qids.tolist(), pa.string()))))
    # Acero joins carry no list columns: join on a row number, then take the columns by it
    keys = ranked.select(["qid", "docno"]).append_column("_row", pa.array(np.arange(ranked.num_rows), pa.int64()))
    joined = table.join(keys, keys=["qid", "docno"], join_type="left outer", use_threads=False)
    joined = joined.sort_by([("qid", "ascending"), ("rel", "descending"), ("docno", "ascending")])
    found = ranked.select(["best_rank", "n_systems", "ranks", "ranks_text"]).take(joined["_row"])
    return pa.table({
        "qid": joined["qid"], "docno": joined["docno"], "grade": joined["rel"],
        "best_rank": found["best_rank"], "n_systems": pc.fill_null(found["n_systems"], 0),
        "ranks": found["ranks"], "ranks_text": found["ranks_text"],
    })


def recall_failures(qrels, runs: Mapping[str, Ranked], depth: int = 10, *, min_grade: int = 1) -> pd.DataFrame:
    """Relevant documents (grade >= ``min_grade``) that no system ranks in its top ``depth``.

    Returns ``qid, docno, grade, best_rank`` where best_rank is the best rank at
    any depth (<NA>: no system retrieves it at all); by qid, grade (highest
    first), docno.
    """
    depth, min_grade = _depth(depth), _check_grade(min_grade)
    positives = _positives(qrels, runs, None, min_grade)
    missed = positives.filter(pc.or_kleene(pc.is_null(positives["best_rank"]),
                                     pc.greater(positives["best_rank"], depth)))
    return _frame(missed, ["qid", "docno", "grade", "best_rank"])


# ---------------------------------------------------------------- training export

@dataclass
class TrainingSet:
    """Positives and capped hard negatives per query, ready to export.

    Only queries with at least one positive and one negative are kept.
    ``positives``: ``qid, docno, grade, best_rank, n_systems, ranks`` (every
    judged document with grade >= min_grade; by grade, highest first, then
    docno). ``negatives``: ``qid, docno, grade, judged, n_systems, best_rank,
    ranks``, at most ``per_query`` per query in the module's document order.
    Ranks are within the top ``depth`` (<NA>: not ranked there).
    """

    positives: pa.Table
    negatives: pa.Table
    depth: int
    per_query: int
    min_grade: int
    include_unjudged: bool
    systems: list[str]

    @property
    def queries(self) -> list[str]:
        return list(dict.fromkeys(self.positives["qid"].to_pylist()))

    def frames(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        return (_frame(self.positives, ["qid", "docno", "grade", "best_rank", "n_systems", "ranks_text"]),
                _frame(self.negatives, ["qid", "docno", "grade", "judged", "n_systems", "best_rank", "ranks_text"]))

    def triples(self) -> pd.DataFrame:
        """``qid, positive_docno, negative_docno``: every positive of a query with each of its negatives.

        Order: query, positive (grade desc, docno), negative (document order).
        """
        table = self._triples()
        return table.to_pandas(types_mapper={pa.string(): pd.StringDtype()}.get)

    def _triples(self) -> pa.Table:
        pos_q = _query_codes(self.positives["qid"], self.queries)
        neg_q = _query_codes(self.negatives["qid"], self.queries)
        n_neg = np.bincount(neg_q, minlength=len(self.queries))
        neg_start = _offsets(n_neg)[:-1]
        # every positive repeats once per negative of its query; both tables are sorted by query
        repeats = n_neg[pos_q]
        pos_rows = np.repeat(np.arange(len(pos_q)), repeats)
        neg_rows = np.repeat(neg_start[pos_q], repeats) + positions(_offsets(repeats))
        return pa.table({
            "qid": self.positives["qid"].take(pa.array(pos_rows, pa.int64())),
            "positive_docno": self.positives["docno"].take(pa.array(pos_rows, pa.int64())),
            "negative_docno": self.negatives["docno"].take(pa.array(neg_rows, pa.int64())),
        })

    def to_tsv(self) -> str:
        """Triples as TSV: the header ``qid<TAB>positive_docno<TAB>negative_docno``, then one triple a line."""
        table = self._triples()
        body = pc.binary_join_element_wise(table["qid"], table["positive_docno"], table["negative_docno"], "\t")
        return "".join(line + "\n" for line in ["qid\tpositive_docno\tnegative_docno", *body.to_pylist()])

    def to_jsonl(self) -> str:
        """One JSON object per query: ``{"qid", "positives": [...], "negatives": [...]}``.

        A positive is ``{"docno", "grade", "best_rank", "ranks"}``; a negative
        ``{"docno", "grade", "judged", "best_rank", "n_systems", "ranks"}``, with
        ``ranks`` = {system: rank within the top depth}; ``grade`` is null for
        an unjudged negative, ``best_rank`` null for a positive no system ranks
        in the top depth.
        """
        positives = _by_query(self.positives, ("docno", "grade", "best_rank", "ranks"))
        negatives = _by_query(self.negatives, ("docno", "grade", "judged", "best_rank", "n_systems", "ranks"))
        lines = [json.dumps({"qid": qid, "positives": positives.get(qid, []), "negatives": negatives.get(qid, [])},
                            ensure_ascii=False)
                 for qid in self.queries]
        return "".join(line + "\n" for line in lines)


def _query_codes(qid: pa.ChunkedArray | pa.Array, queries: list[str]) -> np.ndarray:
    return pc.index_in(qid, value_set=pa.array(queries, pa.string())).to_numpy(zero_copy_only=False).astype(np.int64)


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _by_query(table: pa.Table, columns) -> dict[str, list[dict]]:
    """{qid: [row dicts]} in table order (serialisation only; the rows are the output)."""
    records = table.select(["qid", *columns]).to_pylist()
    out: dict[str, list[dict]] = {}
    for record in records:
        qid = record.pop("qid")
        if "ranks" in record:
            record["ranks"] = {item["system"]: item["rank"] for item in (record["ranks"] or [])}
        out.setdefault(qid, []).append(record)
    return out


def training_set(qrels, runs: Mapping[str, Ranked], *, depth: int = 100, per_query: int = 10, min_grade: int = 1,
                 include_unjudged: bool = False) -> TrainingSet:
    """Positives (grade >= ``min_grade``) and the ``per_query`` hardest negatives of every query.

    Negatives are the hard negatives of :func:`hard_negatives` at ``depth``
    (plus unjudged documents above every relevant one with
    ``include_unjudged``), in the module's document order, cut at
    ``per_query``. Documents with 0 < grade < ``min_grade`` are neither.
    """
    depth, min_grade = _depth(depth), _check_grade(min_grade)
    per_query = _depth(per_query, "per_query")
    runs = _check_runs(runs)
    positives = _positives(qrels, runs, depth, min_grade)
    with_positive = pc.unique(positives["qid"])

    def has_positive(qids: np.ndarray) -> np.ndarray:
        return pc.is_in(pa.array(qids.tolist(), pa.string()), value_set=with_positive).to_numpy(zero_copy_only=False)

    negatives = _candidates(runs, depth, min_grade, include_unjudged, per_query=per_query, queries=has_positive)
    positives = positives.filter(pc.is_in(positives["qid"], value_set=pc.unique(negatives["qid"])))
    return TrainingSet(positives=positives, negatives=negatives, depth=depth, per_query=per_query,
                       min_grade=min_grade, include_unjudged=include_unjudged, systems=list(runs))


# ---------------------------------------------------------------- proxy agreement

def proxy_agreement(qrels, proxy) -> dict:
    """How the proxy labels relate to the real qrels.

    ``{"labels", "fills", "overlap", "exact", "within_one"}``: proxy labels in
    total, those for pairs the qrels do not judge (the ones ``inferred`` uses;
    rows of queries outside the qrels are not counted), those for judged pairs,
    and on those the share with the same grade and with grades at most one apart
    (NaN without overlap).
    """
    real, guess = _qrels_table(qrels), _qrels_table(proxy)
    guess = guess.filter(pc.is_in(guess["qid"], value_set=pc.unique(real["qid"])))
    joined = guess.join(real.rename_columns(["qid", "docno", "real"]), keys=["qid", "docno"], join_type="inner",
                        use_threads=False)
    diff = np.abs(joined["rel"].to_numpy() - joined["real"].to_numpy()) if joined.num_rows else np.array([])
    n = int(joined.num_rows)
    return {"labels": int(_qrels_table(proxy).num_rows), "fills": int(guess.num_rows) - n, "overlap": n,
            "exact": float((diff == 0).mean()) if n else float("nan"),
            "within_one": float((diff <= 1).mean()) if n else float("nan")}
