"""What the qrels miss: unjudged documents per system and pooled (the judging to-do lists), a qrels
template to fill in, how deep judgments reach and how much the systems' top-k lists overlap."""
from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ...errors import MetricsError
from ...ranking import Ranked
from .rows import as_frame, check_depth, check_runs, doc_codes, group, stack

TEMPLATE_PLACEHOLDER = -1
"""Grade written for "not judged yet" in a judging template (see :func:`qrels_template`)."""


def unjudged_top(runs: Mapping[str, Ranked], depth: int = 10) -> pd.DataFrame:
    """Per system, the unjudged documents in its top ``depth``: the judging to-do list.

    Returns ``system, qid, rank, docno`` ordered by system (input order), rank,
    qid: the documents a system ranks highest come first.
    """
    rows = stack(runs, check_depth(depth))
    idx = np.flatnonzero(~rows.judged)
    order = idx[np.lexsort((rows.query[idx], rows.rank[idx], rows.system[idx]))]
    return pd.DataFrame({
        "system": pd.array(np.asarray(rows.systems, dtype=object)[rows.system[order]], dtype="string"),
        "qid": pd.array(rows.qids[rows.query[order]], dtype="string"),
        "rank": pd.array(rows.rank[order], dtype="Int64"),
        "docno": pd.array(rows.docno.take(pa.array(order, type=pa.int64())).to_pylist(), dtype="string"),
    })


def judging_pool(runs: Mapping[str, Ranked], depth: int = 10, *, rank_lists: bool = False) -> pd.DataFrame:
    """Unjudged documents in any system's top ``depth``, pooled: ``qid, docno, best_rank, n_systems, ranks``.

    The pool a TREC-style assessment would add: one row per (query, document),
    in the package's document order (metrics.analysis.judgments). ``ranks`` is
    "system@rank, ..." or, with ``rank_lists``, the list ["system@rank", ...].
    """
    rows = stack(runs, check_depth(depth))
    table = group(rows, ~rows.judged)
    return as_frame(table, ["qid", "docno", "best_rank", "n_systems", "ranks_list" if rank_lists else "ranks_text"])


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
    rows = stack(runs, None)
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


def topk_jaccard(runs: Mapping[str, Ranked], k: int = 10) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Overlap of the systems' top-k lists: (mean matrix, per-query frame).

    Jaccard(A, B) = |A ∩ B| / |A ∪ B| of the two top-k document sets of a
    query; NaN when both are empty (a query neither retrieves for). The
    matrix (systems x systems, diagonal 1) holds the mean over queries with
    a value; the per-query frame has ``qid, system_a, system_b, jaccard``.
    """
    rows = stack(runs, check_depth(k, "k"))
    (dcode,), n_docs = doc_codes(rows.docno) if len(rows.rank) else ([np.array([], np.int64)], 1)
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
    wide = wide.reindex(columns=list(check_runs(runs)))
    _, per_query = topk_jaccard(runs, k)
    mean = per_query.groupby("qid", observed=True)["jaccard"].mean() if len(per_query) else None
    wide[f"jaccard@{k}"] = mean.reindex(wide.index).to_numpy() if mean is not None else np.nan
    wide.columns.name = None
    return wide.reset_index()
