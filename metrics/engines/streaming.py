"""The streaming and Dask engines behind ``metrics.evaluate(engine=...)``: partition each run, then
score its buckets, one after another in this process (``streaming``: peak memory ~ one bucket)
or mapped over a Dask cluster (``dask``). A TREC text file of contiguous queries, with no
``buckets`` asked for, is read in one pass instead (:mod:`metrics.engines.contiguous`): byte
ranges on threads here, or one per worker thread on Dask.

An evaluation task reads all fragments of its bucket whole (never a row group alone: a query may
straddle row groups and fragments), checks that every query id hashes to this bucket, checks
duplicates across files, ranks and scores with the same kernels as the local engine
(:func:`metrics.ranking.rank`, :func:`metrics.evaluation.evaluate_ranked`). Those are per-query
independent, so the values are bit-identical to the in-memory engine.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import io
from ..errors import MetricsError
from ..evaluation import Options, measure_list, run_specs, takes_options, tidy
from ..io.paths import filesystem, is_shards, is_url, join_path, shard_name
from ..measures import parse
from . import contiguous
from .buckets import PARTITIONED, bucket_of, check_engine, local_threads
from .dask import client_for, is_local_address
from .partitioning import (
    Partition,
    Progress,
    duplicates,
    partition,
    read_fragments,
    read_qrels_at,
    remove_tree,
    task_parts,
)
from .parts import PIECE_BYTES, RANGE_BYTES, ROW_GROUP_ROWS, read_ipc


@dataclass(frozen=True)
class BucketTask:
    path: str
    bucket: int
    n_buckets: int
    files: tuple[str, ...]
    qrels_file: str
    proxy_file: str | None
    sources: tuple[str, ...]
    part_files: tuple[int, ...]        # part -> file index
    part_first_line: tuple[int, ...]   # part -> lines of its file before it
    part_kinds: tuple[str, ...]
    name: str
    measures: tuple[str, ...]
    options: tuple[tuple[str, object], ...]


def _evaluate_bucket(task: BucketTask) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Evaluation task: one bucket, whole; (qids, {measure: values}, rows) with the metrics kernels."""
    return _score_bucket(task, _load_bucket(task))


def _load_bucket(task: BucketTask) -> tuple[pa.Table, pa.Table, pa.Table | None]:
    """The bucket's run rows (every fragment, every row group), its qrels and its proxy qrels."""
    fs, _ = filesystem(task.path)
    table = read_fragments([filesystem(f)[1] for f in task.files], fs)
    qrels_table = read_ipc(filesystem(task.qrels_file)[1], fs)
    proxy_table = None if task.proxy_file is None else read_ipc(filesystem(task.proxy_file)[1], fs)
    return table, qrels_table, proxy_table


def _score_bucket(task: BucketTask, tables) -> tuple[np.ndarray, dict[str, np.ndarray], int]:

    table, qrels_table, proxy_table = tables
    options: dict[str, Any] = dict(task.options)
    for what, t in (("run", table), ("qrels", qrels_table)):
        if t.num_rows:
            queries = pc.unique(t["qid"])
            wrong = bucket_of(queries, task.n_buckets) != task.bucket
            if wrong.any():
                raise MetricsError(f"bucket {task.bucket} of {task.path!r} holds {what} query "
                                   f"{queries[int(np.flatnonzero(wrong)[0])].as_py()!r} of another bucket",
                                   fix="the partition is damaged or was written with another hash; partition again")
    keep = duplicates(table, task_parts(task), options["on_duplicate"])
    if keep is not None:
        table = table.filter(pa.array(keep))
    return contiguous.score_rows(table, qrels_table, proxy_table, options, task.name, task.measures)


def _tasks(part: Partition, measures, options: dict) -> list[BucketTask]:
    return [BucketTask(
        path=part.path, bucket=b, n_buckets=part.n_buckets, files=tuple(part.run_files(b)),
        qrels_file=part.qrels_file(b), proxy_file=part.qrels_file(b, proxy=True) if part.proxy else None,
        sources=tuple(part.sources), part_files=tuple(p["file"] for p in part.parts),
        part_first_line=tuple(p["first_line"] for p in part.parts),
        part_kinds=tuple(p["kind"] for p in part.parts), name=part.name, measures=tuple(measures),
        options=tuple(sorted(options.items()))) for b in range(part.n_buckets)]


def evaluate_partition(part: Partition | str, measures, *, engine: str = "streaming", client=None,
                       missing: str = "zero", judged_only: bool = False, max_depth: int | None = None,
                       rel_level: int = 1, ties: str = "score", on_duplicate: str = "error",
                       progress: Progress | None = None, name: str | None = None,
                       threads: int | None = None) -> pd.DataFrame:
    """Evaluate a partitioned run bucket by bucket: the tidy frame of :func:`metrics.evaluate`.

    ``engine="streaming"``: ``threads`` buckets at a time in this process (default
    :func:`metrics.engines.buckets.local_threads`; peak memory ~ ``threads`` buckets);
    ``engine="dask"``: buckets mapped over ``client`` (a ``dask.distributed.Client``).
    """

    part = part if isinstance(part, Partition) else Partition.open(part)
    if missing not in ("zero", "skip"):
        raise MetricsError(f"missing={missing!r} is not an option", fix="use missing='zero' or missing='skip'")
    if ties not in ("score", "rank"):
        raise MetricsError(f"ties={ties!r} is not an option", fix="use ties='score' or ties='rank'")
    if ties == "rank" and not part.has_rank:
        ties = "score"   # ranks were computed from the scores (metrics.io's rule): the same order
    names = list(dict.fromkeys(str(parse(m)) for m in measure_list(measures)))
    options = contiguous.task_options(missing, judged_only, max_depth, rel_level, ties, on_duplicate)
    tasks = _tasks(part, names, options)
    system = name or part.name
    report = progress or (lambda done, total, message: None)
    total = len(tasks)
    report(0, total, f"evaluating {system}: {total} buckets")
    results: dict[int, tuple] = {}
    close = None
    if engine == "dask" and client is None:
        client, close = client_for(None, None)
    try:
        _score_buckets(tasks, engine, client, results, report, system,
                       local_threads() if threads is None else threads)
    finally:
        if close is not None:
            close()
    return _assemble(system, [results[b] for b in range(total)], names)


def _quiet(done: int, total: int, message: str) -> None:
    pass


def _score_buckets(tasks: list[BucketTask], engine: str, client, results: dict, report, system: str,
                   threads: int = 1) -> None:
    """Run the bucket tasks here or on Dask; on errors, raise the first bad bucket's (as streaming would)."""
    total = len(tasks)
    if engine == "streaming" or client is None:
        from concurrent.futures import ThreadPoolExecutor

        # ``threads`` buckets are read (memory-mapped IPC) and scored at once, each on its own thread
        # (arrow and numpy release the GIL): memory ~ ``threads`` buckets.
        with ThreadPoolExecutor(max_workers=max(1, min(threads, total)), thread_name_prefix="ndcg-lab-bucket") as pool:
            futures = [pool.submit(_evaluate_bucket, task) for task in tasks]
            try:
                for task, future in zip(tasks, futures):
                    results[task.bucket] = future.result()
                    report(len(results), total, f"evaluated bucket {task.bucket + 1} of {total} of {system} "
                                                f"({results[task.bucket][2]:,} lines)")
            finally:
                for future in futures:
                    future.cancel()
    else:
        from dask.distributed import as_completed
        futures = client.map(_evaluate_bucket, tasks, pure=False)
        by_key = {f.key: i for i, f in enumerate(futures)}
        errors: dict[int, BaseException] = {}
        try:
            for future in as_completed(futures):
                b = by_key[future.key]
                try:
                    results[b] = future.result()
                except MetricsError as exc:
                    errors[b] = exc
                else:
                    report(len(results), total, f"evaluated bucket {b + 1} of {total} of {system} "
                                                f"({results[b][2]:,} lines)")
                if errors and all(j in results or j in errors for j in range(min(errors))):
                    raise errors[min(errors)]   # the same error as streaming: the first bad bucket
        finally:
            for future in futures:
                future.cancel()


def _assemble(system: str, results: list[tuple], names: list[str]) -> pd.DataFrame:
    """One tidy frame from the buckets' results, queries in string order as the local engine gives them."""
    return tidy(system, *contiguous.assemble(results, names), names)


@takes_options
def evaluate(qrels, runs, measures, *, engine: str = "streaming", buckets: int | None = None,
             scheduler: str | None = None, workers: int | None = None, workdir=None,
             piece_bytes: int = PIECE_BYTES, range_bytes: int = RANGE_BYTES,
             row_group_rows: int = ROW_GROUP_ROWS, allowed=None, **options) -> pd.DataFrame:
    """``metrics.evaluate`` with ``engine="streaming"`` or ``"dask"``: partition each run, then evaluate
    its buckets. Inputs that are not files (DataFrames, parsed Runs, dicts) are written as parquet first.
    ``options``: :class:`metrics.evaluation.Options`.

    ``workdir`` holds the buckets (default: a temporary folder, removed afterwards; a remote Dask
    cluster needs a folder or URL its workers can read). ``allowed``: see
    :func:`metrics.engines.evaluate`.
    """

    check_engine(engine, PARTITIONED)
    o = Options(**options)
    on_duplicate, progress = o.on_duplicate, o.progress
    if on_duplicate not in ("error", "first"):
        raise MetricsError(f"on_duplicate={on_duplicate!r} is not an option",
                           fix="use on_duplicate='error' or on_duplicate='first'")
    names = [str(parse(m)) for m in measure_list(measures)]
    if engine == "dask" and scheduler and workdir is None and not is_local_address(scheduler):
        raise MetricsError(f"the Dask cluster at {scheduler} cannot read this machine's temporary folder",
                           fix="give workdir= (--workdir) on storage every worker reads: a shared folder or "
                               "an fsspec URL such as s3://bucket/ndcg-lab")
    own_workdir = workdir is None
    base = tempfile.mkdtemp(prefix="ndcg-lab-") if own_workdir else str(workdir)
    client, close = (None, lambda: None)
    threads = local_threads() if engine == "streaming" else 1
    frames = []
    judgments = None   # the qrels, read once for the runs scored without a partition
    try:
        if engine == "dask":
            client, close = client_for(scheduler, workers)
        for i, (given_name, spec) in enumerate(run_specs(runs)):
            if not is_shards(spec) and not (isinstance(spec, (str, Path))):
                spec, given_name = _spill(spec, given_name, base, i, on_duplicate)
            system = given_name or shard_name(spec if isinstance(spec, (list, tuple)) else str(spec))
            if buckets is None and o.inferred is None and isinstance(spec, (str, Path)):
                if judgments is None:
                    judgments = read_qrels_at(qrels, allowed=allowed)
                options = contiguous.task_options(o.missing, o.judged_only, o.max_depth, o.rel_level, o.ties,
                                                  on_duplicate)
                unique = list(dict.fromkeys(names))
                found = contiguous.scores(spec, judgments, unique, options, threads=threads,
                                          progress=progress or _quiet, piece_bytes=piece_bytes, allowed=allowed,
                                          client=client, workdir=base if client is not None else None)
                if found is not None:
                    frames.append(tidy(system, *found, unique))
                    continue
            out = join_path(base, f"run-{i:03d}-{uuid.uuid4().hex[:6]}")
            given = qrels if judgments is None else judgments
            part = partition(spec, given, out, n_buckets=buckets, name=system, inferred=o.inferred,
                             on_duplicate=on_duplicate, piece_bytes=piece_bytes, range_bytes=range_bytes,
                             row_group_rows=row_group_rows, progress=progress, client=client, threads=threads,
                             allowed=allowed)
            try:
                frames.append(evaluate_partition(part, names, engine=engine, client=client, missing=o.missing,
                                                 judged_only=o.judged_only, max_depth=o.max_depth,
                                                 rel_level=o.rel_level, ties=o.ties, on_duplicate=on_duplicate,
                                                 progress=progress, threads=threads))
            finally:
                fs, root = filesystem(out)
                remove_tree(fs, root)
    finally:
        close()
        if own_workdir:
            shutil.rmtree(base, ignore_errors=True)
    frames = _unique_systems(frames)
    return pd.concat(frames, ignore_index=True) if frames else tidy("", np.array([]), {}, [])


def _spill(spec, name, base: str, i: int, on_duplicate: str):
    """An in-memory run (DataFrame, Run, dict, bytes) written as parquet so that it can be partitioned."""
    run = io.read_run(spec, name=name, on_duplicate=on_duplicate)
    file_name = f"input-{i:03d}.parquet"
    path = join_path(base, file_name) if is_url(base) else os.path.join(base, file_name)
    fs, inner = filesystem(path)
    pq.write_table(run.table.select(["qid", "docno", "score", "rank"]), inner, filesystem=fs)
    return path, name or run.name


def _unique_systems(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Same names get #1, #2 suffixes, as metrics.evaluation.as_runs does."""
    names = [str(f["system"].iloc[0]) if len(f) else "" for f in frames]
    counts: dict[str, int] = {}
    out = []
    for f, n in zip(frames, names):
        if names.count(n) > 1:
            counts[n] = counts.get(n, 0) + 1
            f = f.assign(system=pd.Series([f"{n}#{counts[n]}"] * len(f), dtype="string"))
        out.append(f)
    return out
