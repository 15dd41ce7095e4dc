"""The flat rows of all systems: the top ``depth`` of every system stacked into one set of arrays,
grouped per (query, document), and the checks every judgments function shares."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import MetricsError
from ...ordering import offsets_of, positions
from ...ranking import Ranked


@dataclass
class Rows:
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


def check_runs(runs: Mapping[str, Ranked]) -> dict[str, Ranked]:
    if isinstance(runs, Ranked):
        runs = {runs.name: runs}
    if not isinstance(runs, Mapping) or not runs:
        raise MetricsError("no systems given", fix="pass {name: Ranked}, e.g. {'bm25': metrics.rank_run(qrels, run)}")
    for name, ranked in runs.items():
        if not isinstance(ranked, Ranked):
            raise MetricsError(f"system {name!r} is a {type(ranked).__name__}, not a Ranked",
                               fix="rank it first: metrics.rank_run(qrels, run)")
    return {str(k): v for k, v in runs.items()}


def check_depth(depth, what: str = "depth") -> int | None:
    if depth is None:
        return None
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or depth < 1:
        raise MetricsError(f"{what} must be a whole number >= 1, got {depth!r}", fix=f"for example {what}=10")
    return int(depth)


def check_cut(value, what: str = "depth") -> int:
    """:func:`check_depth` for a cut that must be a number: there None would not mean "every rank"."""
    checked = check_depth(value, what)
    if checked is None:
        raise MetricsError(f"{what} must be a whole number >= 1, got None", fix=f"for example {what}=10")
    return checked


def stack(runs: Mapping[str, Ranked], depth: int | None, min_grade: int = 1) -> Rows:
    runs = check_runs(runs)
    names = list(runs)
    qids = np.unique(np.concatenate([np.asarray(r.qids, dtype=object) for r in runs.values()]).astype(str))
    parts: dict[str, list[Any]] = {k: [] for k in ("system", "query", "rank", "rel", "judged", "above")}
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
    return Rows(systems=names, qids=qids, system=cat["system"], query=cat["query"], docno=docno,
                 rank=cat["rank"], rel=cat["rel"], judged=cat["judged"].astype(bool),
                 above_relevant=cat["above"].astype(bool), retrieved=retrieved)


def doc_codes(*arrays: pa.Array) -> tuple[list[np.ndarray], int]:
    """Codes of docnos in a shared dictionary sorted as strings (so code order = docno order)."""
    joined = pa.concat_arrays([a.cast(pa.string()) for a in arrays])
    dictionary = pc.unique(joined)
    dictionary = dictionary.take(pc.sort_indices(dictionary))
    out = [pc.index_in(a.cast(pa.string()), value_set=dictionary).to_numpy(zero_copy_only=False).astype(np.int64)
           for a in arrays]
    return out, max(len(dictionary), 1)


def row_order(*keys: tuple[np.ndarray, int]) -> np.ndarray:
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


def group(rows: Rows, select: np.ndarray, *, keep=None, per_query: int | None = None) -> pa.Table:
    """One row per (query, docno) among the selected rows, with best rank, systems and ranks.

    Columns: qid, docno, best_rank, n_systems, judged, grade (null when
    unjudged), above_relevant (some system ranks it above all its relevant
    documents), ranks (list of {system, rank} in system order), ranks_text
    ("bm25@3, dense@1") and ranks_list (["bm25@3", "dense@1"]: one item per system, whatever
    separators a run's name holds). Sorted by qid, best rank, systems (more first), docno.
    ``keep(groups) -> bool mask`` drops groups (``groups`` maps judged, above,
    query, best, counts to per-group arrays) and ``per_query`` keeps the first
    N groups of each query, before the (costlier) string and list columns are built.
    """
    idx = np.flatnonzero(select)
    docno = rows.docno.take(pa.array(idx, type=pa.int64()))
    (dcode,), n_docs = doc_codes(docno) if len(idx) else ([np.array([], dtype=np.int64)], 1)
    query, system, rank = rows.query[idx], rows.system[idx], rows.rank[idx]
    n_q, n_s = len(rows.qids), len(rows.systems)
    order = row_order((query, n_q), (dcode, n_docs), (system, n_s)) if len(idx) else np.array([], np.int64)
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
    final = row_order((groups["query"], n_q), (groups["best"], max_rank), (n_s - groups["counts"], n_s + 1),
                   (groups["dcode"], n_docs)) if len(groups["best"]) else np.array([], np.int64)
    groups = {k: v[final] for k, v in groups.items()}
    if per_query is not None and len(groups["query"]):
        change = np.flatnonzero(np.concatenate(([True], groups["query"][1:] != groups["query"][:-1], [True])))
        capped = positions(change) < per_query
        groups = {k: v[capped] for k, v in groups.items()}

    # member rows of the kept groups, in system order within a group
    member_offsets = offsets_of(groups["counts"])
    members = order[np.repeat(groups["start"], groups["counts"]) + positions(member_offsets)]
    names = pa.array(rows.systems, pa.string()).take(pa.array(system[members], type=pa.int64()))
    rank_values = pa.array(rank[members], pa.int64())
    offsets = pa.array(member_offsets, pa.int64())
    ranks = pa.LargeListArray.from_arrays(offsets, pa.StructArray.from_arrays([names, rank_values],
                                                                              ["system", "rank"]))
    listed = pa.LargeListArray.from_arrays(offsets, pc.binary_join_element_wise(names, pc.cast(rank_values,
                                                                                              pa.string()), "@"))
    text = pc.binary_join(listed, ", ")
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
        "ranks_list": listed,
    })


def as_frame(table: pa.Table, columns: list[str]) -> pd.DataFrame:
    """pandas view with nullable integers and string columns."""
    frame = table.select(columns).to_pandas(types_mapper={pa.int64(): pd.Int64Dtype(),
                                                          pa.string(): pd.StringDtype()}.get)
    if "ranks_list" in frame.columns:
        frame["ranks_list"] = [[] if items is None else list(items) for items in frame["ranks_list"]]
    return frame.rename(columns={"ranks_text": "ranks", "ranks_list": "ranks"})


def qrels_table(qrels) -> pa.Table:
    table = getattr(qrels, "table", qrels)
    if not isinstance(table, pa.Table) or not {"qid", "docno", "rel"} <= set(table.column_names):
        raise MetricsError("qrels must be a metrics.Qrels or a table with qid, docno, rel",
                           fix="read it with metrics.read_qrels(path)")
    return pa.table({"qid": table["qid"].cast(pa.string()), "docno": table["docno"].cast(pa.string()),
                     "rel": table["rel"].cast(pa.int64())})


def check_grade(min_grade) -> int:
    if isinstance(min_grade, bool) or not isinstance(min_grade, (int, np.integer)) or min_grade < 1:
        raise MetricsError(f"min_grade must be a whole number >= 1, got {min_grade!r}",
                           fix="positives need a grade above the non-relevant 0, e.g. min_grade=1")
    return int(min_grade)
