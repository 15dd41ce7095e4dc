"""Engines behind ``metrics.evaluate``: ``local`` (in memory), ``streaming`` (a run file whose
queries come one after another read and scored in one pass, :mod:`.contiguous`; any other run
split into buckets by query and scored one bucket at a time) and ``dask`` (the buckets mapped
over a Dask cluster). All three give identical per-query values; the streaming and Dask engines bound
memory by a bucket. See docs/scale.md.

Only ``local`` and ``buckets`` are imported with the package, so that evaluating in memory
imports neither pandas nor Dask: :func:`evaluate` imports ``streaming`` when it streams, and the
names below from ``partitioning``, ``streaming`` and ``dask`` are looked up on first use (PEP 562).
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ..evaluation import DEFAULT_MEASURES, Scores, scores_of, takes_options
from . import local
from .buckets import (
    ENGINES,
    HASH,
    bucket_of,
    check_engine,
    choose_engine,
    crc32,
    default_buckets,
    memory_threshold,
    streaming_threshold,
)
from .local import local_runs, read_run_files

if TYPE_CHECKING:
    import pandas as pd

    from .partitioning import Progress

__all__ = ["ENGINES", "HASH", "Partition", "Progress", "bucket_of", "check_engine", "choose_engine", "crc32",
           "default_buckets", "evaluate", "evaluate_partition", "local_cluster", "local_runs", "memory_threshold",
           "partition", "read_bucket", "read_run_files", "scores", "streaming_threshold", "to_dask"]

LAZY = {"Partition": "partitioning", "Progress": "partitioning", "partition": "partitioning",
        "read_bucket": "partitioning", "evaluate_partition": "streaming", "local_cluster": "dask", "to_dask": "dask"}
"""Names of this package that live in a module imported on first use: {name: module}."""


def __getattr__(name: str):
    if name in LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(LAZY))


@takes_options
def evaluate(qrels, runs, measures=DEFAULT_MEASURES, *, engine: str | None = None, buckets: int | None = None,
             scheduler: str | None = None, workers: int | None = None, workdir=None, allowed=None,
             **options) -> pd.DataFrame:
    """Evaluate runs against qrels: a tidy frame ``system, qid, measure, value``; ``options``:
    :class:`metrics.evaluation.Options` (missing, judged_only, inferred, max_depth, rel_level, ties,
    on_duplicate, progress).

    ``engine``: one of :data:`ENGINES`: ``"local"`` (in memory), ``"streaming"`` (the run split into
    ``buckets`` by query and scored one bucket at a time: memory bounded by a
    bucket) or ``"dask"`` (buckets mapped over the Dask cluster at ``scheduler``,
    ``tcp://HOST:PORT``, or over a LocalCluster of ``workers`` processes started
    here). All three give identical per-query values. None (the default) picks
    ``"streaming"`` when the run files hold more text than
    :func:`metrics.engines.buckets.streaming_threshold` (RAM / 16, or env
    NDCG_LAB_STREAMING_BYTES), else ``"local"``
    (:func:`metrics.engines.buckets.choose_engine`). A run may also be a glob,
    an fsspec URL or (inside a list or mapping) a list of shard files read as one
    run. ``workdir`` holds the buckets (default: a temporary folder).

    ``allowed``: None when paths come from the local user (CLI, Python); the app's
    :class:`metrics.settings.Settings` when a visitor typed them: every path or URL must then
    pass :func:`metrics.settings.check_server_source`, and errors name lines without quoting them.
    """
    engine = check_engine(choose_engine(runs, allowed=allowed) if engine is None else engine)
    if engine == "local":
        return local.evaluate(qrels, runs, measures, allowed=allowed, **options)
    from . import streaming

    return streaming.evaluate(qrels, runs, measures, engine=engine, buckets=buckets, scheduler=scheduler,
                              workers=workers, workdir=workdir, allowed=allowed, **options)


@takes_options
def scores(qrels, runs, measures=DEFAULT_MEASURES, *, engine: str | None = None, **kwargs) -> list[Scores]:
    """:func:`evaluate` as arrays (:class:`metrics.evaluation.Scores`, what the command line prints
    from); the local engine computes them without pandas."""
    engine = check_engine(choose_engine(runs, allowed=kwargs.get("allowed")) if engine is None else engine)
    if engine == "local":
        return local.scores(qrels, runs, measures, **kwargs)
    return scores_of(evaluate(qrels, runs, measures, engine=engine, **kwargs))
