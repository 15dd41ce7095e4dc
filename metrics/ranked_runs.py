"""Runs as their canonical rankings, each ordered once: the edge where an analysis that takes runs
(paths, frames, parsed runs) or rankings already built (:class:`metrics.ranking.Ranked`, such as a
workspace's memory-mapped cache) turns them into one kind, so that it has one code path.

A ranking given is taken as it is (it was ordered and joined with the caller's qrels); a run given
is parsed and ranked here against the qrels with ``missing="zero"``, uncondensed, so the same
ranking serves every judgments of its queries (:class:`metrics.ranking.Rejudge`).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from . import io
from .engines import scores as engine_scores
from .errors import MetricsError
from .evaluation import Options, Scores, as_runs, evaluate_ranked, frame_of, unique_names
from .measures import parse
from .ranking import Ranked, Rejudge, rank

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ENGINE_OPTIONS", "evaluate_rankings", "evaluator", "judged", "rankings"]


def rankings(qrels, runs, *, ties: str = "score", max_depth: int | None = None,
             on_duplicate: str = "error") -> dict[str, Ranked]:
    """{name: ranking} of ``runs`` against ``qrels`` (a parsed Qrels): a mapping or list whose values are all
    :class:`Ranked` is kept (cut to ``max_depth`` when given), anything :func:`metrics.evaluation.as_runs`
    takes is parsed and ranked once. ``ties`` other than ``"score"`` needs runs, not rankings."""
    given = runs if isinstance(runs, Mapping) else None
    if given is None and isinstance(runs, list | tuple) and runs and all(isinstance(r, Ranked) for r in runs):
        given = dict(zip(unique_names([r.name for r in runs]), runs))
    if given and all(isinstance(r, Ranked) for r in given.values()):
        if ties != "score":
            raise MetricsError(f"ties={ties!r} needs the runs, not their rankings", fix="give the runs")
        return {str(name): r if max_depth is None else r.truncated(max_depth) for name, r in given.items()}
    return {run.name: rank(run, qrels, ties=ties, max_depth=max_depth, name=run.name)
            for run in as_runs(runs, on_duplicate=on_duplicate)}


def judged(ranked: Ranked, qrels, *, missing: str = "zero", inferred=None) -> Ranked:
    """``ranked`` (a ranking against ``qrels``) as :func:`metrics.ranking.rank` would join it with ``missing``
    and ``inferred`` (a parsed proxy qrels): itself when they change nothing."""
    if inferred is None and missing == "zero":
        return ranked
    return Rejudge(ranked)(qrels, missing=missing, inferred=inferred)


def evaluate_rankings(qrels, runs: Mapping, measures, *, missing: str = "zero", judged_only: bool = False,
                      inferred=None, rel_level: int = 1) -> pd.DataFrame:
    """:func:`metrics.evaluate` (tidy ``system, qid, measure, value``, systems in the order given) of
    ``runs`` {name: run}, where a run may be a ranking against ``qrels`` (a parsed Qrels; evaluated from
    its arrays, never ordered again) or anything the engines take."""
    proxy = io.read_qrels(inferred) if inferred is not None else None
    scores: list[Scores] = []
    for name, run in runs.items():
        if isinstance(run, Ranked):
            r = judged(run, qrels, missing=missing, inferred=proxy)
            r = r.condensed() if judged_only else r
            scores.append(Scores(str(name), r.qids, evaluate_ranked(r, measures, rel_level=rel_level)))
        else:
            scores += engine_scores(qrels, {name: run}, measures, missing=missing,
                                    judged_only=judged_only, inferred=proxy, rel_level=rel_level)
    return frame_of(scores)


ENGINE_OPTIONS = ("engine", "buckets", "scheduler", "workers", "workdir", "allowed", "progress")
"""Options of :func:`metrics.evaluate` that choose how, not what: every engine gives the same values,
and :func:`evaluator` ranks the runs in memory once."""


def evaluator(qrels, runs, **options):
    """(``frame(judgments, measures)``, the rankings): ``frame`` is the tidy frame of
    ``metrics.evaluate(judgments, runs, measures, **options)`` for any judgments of the queries of
    ``qrels`` (a parsed Qrels; the full qrels, a reduction of them, another judge's labels of the same
    queries), each run ordered once here (:func:`rankings`) and joined again per judgments
    (:class:`metrics.ranking.Rejudge`)."""
    o = Options(**{k: v for k, v in options.items() if k not in ENGINE_OPTIONS})
    proxy = io.read_qrels(o.inferred) if o.inferred is not None else None
    ranked = rankings(qrels, runs, ties=o.ties, max_depth=o.max_depth, on_duplicate=o.on_duplicate)
    judges = [Rejudge(r) for r in ranked.values()]

    def frame(judgments, measures) -> pd.DataFrame:
        parsed = [parse(m) for m in measures]
        scores = []
        for name, judge in zip(ranked, judges):
            r = judge(judgments, missing=o.missing, inferred=proxy)
            r = r.condensed() if o.judged_only else r
            scores.append(Scores(name, r.qids, evaluate_ranked(r, parsed, rel_level=o.rel_level)))
        return frame_of(scores)
    return frame, ranked
