"""Evaluation against several judgment groups (trec_eval 10's ``-R qrels_jg``).

Each group's judgments form a qrels of their own; the run is ranked and scored against each
with the qrels kernels (one vectorised pass per group, never a loop over queries), and a
query's value is the mean over the groups that judged it: the values added in group order
(groups sorted as strings), then divided by their number, as trec_eval forms it.
"""
from __future__ import annotations

import numpy as np
import pyarrow as pa

from ..errors import MetricsError
from ..evaluation import evaluate_ranked, rank_run
from ..io import Qrels, read_qrels
from ..io.judgment_files import JudgmentLines
from ..measures import parse
from ..measures.trec_names import atol


def group_qrels(lines: JudgmentLines) -> dict[str, Qrels]:
    """One qrels per judgment group (sorted as strings) of a ``qrels_jg`` file; a docno twice in one
    group of one query is refused, as trec_eval refuses it."""
    qid, jg, docno = lines.column("qid"), lines.column("jg"), lines.column("docno")
    rel = np.fromiter((atol(text) for text in lines.column("rel")), dtype=np.int64, count=len(lines))
    key = np.array([f"{q}\0{g}\0{d}" for q, g, d in zip(qid, jg, docno)], dtype=object)
    order = np.argsort(key, kind="stable")
    twice = np.flatnonzero(key[order][1:] == key[order][:-1])
    if len(twice):
        row = order[twice[0] + 1]
        raise MetricsError(f"document {docno[row]!r} is judged twice for query {qid[row]!r} in judgment group "
                           f"{jg[row]!r}", source=lines.source, line=int(lines.lines[row]),
                           fix="judge each document once per group")
    out = {}
    for group in sorted(set(jg.tolist())):
        rows = np.flatnonzero(jg == group)
        table = pa.table({"qid": pa.array(qid[rows].tolist(), pa.string()),
                          "docno": pa.array(docno[rows].tolist(), pa.string()),
                          "rel": pa.array(rel[rows], pa.int64())})
        out[group] = read_qrels(table, name=f"group {group}", source=lines.source)
    return out


def evaluate_groups(groups: dict[str, Qrels], run, measures: list[str], qids: list[str], *, rel_level: int = 1,
                    max_depth: int | None = None, judged_only: bool = False) -> dict[str, np.ndarray]:
    """{measure: per-query values for ``qids``}, each the mean over the groups that judged the query."""
    totals = {m: np.zeros(len(qids)) for m in measures}
    n_groups = np.zeros(len(qids), dtype=np.int64)
    where = {q: i for i, q in enumerate(qids)}
    for qrels in groups.values():
        ranked = rank_run(qrels, run, missing="skip", max_depth=max_depth, judged_only=judged_only)
        rows = np.fromiter((where.get(str(q), -1) for q in ranked.qids), dtype=np.int64, count=len(ranked.qids))
        keep = rows >= 0
        values = evaluate_ranked(ranked, measures, rel_level=rel_level)
        for m in measures:
            totals[m][rows[keep]] += values[str(parse(m))][keep]
        n_groups[rows[keep]] += 1
    divisor = np.where(n_groups > 1, n_groups, 1)
    return {m: totals[m] / divisor for m in measures}


__all__ = ["group_qrels", "evaluate_groups"]
