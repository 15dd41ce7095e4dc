"""Helpers of the hand-computed measure tests: tiny runs and qrels, and the value of one measure."""
from __future__ import annotations

from types import SimpleNamespace

import pyarrow as pa

from metrics.measures import (
    Context,
    compute,
    parse,
)
from metrics.ranking import rank


def tables(ranking: dict[str, list[tuple[str, float]]], judgments: dict[str, dict[str, int]]):
    run_rows = [(q, d, s) for q, docs in ranking.items() for d, s in docs]
    run = SimpleNamespace(name="run", table=pa.table({
        "qid": [r[0] for r in run_rows], "docno": [r[1] for r in run_rows],
        "score": pa.array([float(r[2]) for r in run_rows], pa.float64()),
        "rank": pa.array(range(1, len(run_rows) + 1), pa.int64()), "tag": ["t"] * len(run_rows)}))
    q_rows = [(q, d, r) for q, docs in judgments.items() for d, r in docs.items()]
    qrels = SimpleNamespace(table=pa.table({
        "qid": [r[0] for r in q_rows], "docno": [r[1] for r in q_rows],
        "rel": pa.array([r[2] for r in q_rows], pa.int64())}))
    return run, qrels


def ranked_from(grades: dict[str, list], extra: dict[str, dict[str, int]] | None = None, **options):
    """A run whose documents d0, d1, ... come in the listed order, ranked against its qrels: a grade of
    None means unjudged; ``extra`` adds judgments of documents the run lacks ({qid: {docno: grade}})."""
    ranking = {q: [(f"d{i}", 100.0 - i) for i in range(len(gs))] for q, gs in grades.items()}
    judgments = {q: {f"d{i}": g for i, g in enumerate(gs) if g is not None} for q, gs in grades.items()}
    for q, docs in (extra or {}).items():
        judgments.setdefault(q, {}).update(docs)
    run, qrels = tables(ranking, judgments)
    return rank(run, qrels, **options)


def value(ranked, measure: str, **ctx_options) -> float:
    values = compute(Context(ranked, **ctx_options), parse(measure))
    assert len(values) == 1
    return float(values[0])


def values(ranked, measure: str) -> list[float]:
    return [float(v) for v in compute(Context(ranked), parse(measure))]
