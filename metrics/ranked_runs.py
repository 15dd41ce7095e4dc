"""Runs as their canonical rankings, each ordered once: the edge where an analysis that takes runs
(paths, frames, parsed runs) or rankings already built (:class:`metrics.ranking.Ranked`, such as a
workspace's memory-mapped cache) turns them into one kind, so that it has one code path.

A ranking given is taken as it is (it was ordered and joined with the caller's qrels); a run given
is parsed and ranked here against the qrels with ``missing="zero"``, uncondensed, so the same
ranking serves every judgments of its queries (:class:`metrics.ranking.Rejudge`).
"""
from __future__ import annotations

from collections.abc import Mapping

from .errors import MetricsError
from .evaluation import as_runs
from .ranking import Ranked, rank

__all__ = ["rankings"]


def rankings(qrels, runs, *, ties: str = "score", max_depth: int | None = None,
             on_duplicate: str = "error") -> dict[str, Ranked]:
    """{name: ranking} of ``runs`` against ``qrels`` (a parsed Qrels): a mapping whose values are all
    :class:`Ranked` is kept (cut to ``max_depth`` when given), anything :func:`metrics.evaluation.as_runs`
    takes is parsed and ranked once. ``ties`` other than ``"score"`` needs runs, not rankings."""
    if isinstance(runs, Mapping) and runs and all(isinstance(r, Ranked) for r in runs.values()):
        if ties != "score":
            raise MetricsError(f"ties={ties!r} needs the runs, not their rankings", fix="give the runs")
        return {str(name): r if max_depth is None else r.truncated(max_depth) for name, r in runs.items()}
    return {run.name: rank(run, qrels, ties=ties, max_depth=max_depth, name=run.name)
            for run in as_runs(runs, on_duplicate=on_duplicate)}
