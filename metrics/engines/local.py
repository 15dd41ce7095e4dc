"""The local engine: everything in memory. A run given as several files (a glob, a folder, an
fsspec URL or a list of shards) is read into one :class:`metrics.io.Run` first.

:func:`scores` is the engine as arrays (:class:`metrics.evaluation.Scores`), what the command
line prints from; :func:`evaluate` is its tidy frame. The partition and streaming modules are
imported only for runs given as several files or paths a visitor named.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .. import io
from ..evaluation import DEFAULT_MEASURES, Scores, frame_of, run_specs, score_runs
from ..io.paths import display_name, expand, filesystem, is_shards, is_url, shard_name, stem
from ..io.sniff import compression_of
from ..io.validate import quoting
from .buckets import COMPRESSED_RATIO, local_threads

if TYPE_CHECKING:
    import pandas as pd


def read_run_files(files, *, name: str | None = None, on_duplicate: str = "error", allowed=None) -> io.Run:
    """One run from several files (shards) in memory, for the local engine: each file read by
    metrics.io, then duplicates across files checked with file and line. ``allowed``: see
    :func:`metrics.io.paths.expand` (server files a visitor named: checked, never quoted)."""
    from .partitioning import duplicates

    paths = expand(files, allowed=allowed)
    name = name or shard_name(files if isinstance(files, (list, tuple)) else str(files))
    runs = []
    with quoting(allowed is None):
        for path in paths:
            if is_url(path):
                fs, inner = filesystem(path)
                with fs.open_input_stream(inner) as f:
                    runs.append(io.read_run(f.read(), name=name, source=display_name(path),
                                            on_duplicate=on_duplicate))
            else:
                runs.append(io.read_run(path, name=name, on_duplicate=on_duplicate))
    if len(runs) == 1:
        return runs[0]
    table = pa.concat_tables([pa.table({
        "qid": r.table["qid"], "docno": r.table["docno"], "score": r.table["score"], "rank": r.table["rank"],
        "tag": r.table["tag"], "part": pa.array(np.full(len(r), i, dtype=np.int32)),
        "line": pa.array(r.line_of(np.arange(len(r))) if r.line_of([0]) is not None
                         else np.arange(1, len(r) + 1))}) for i, r in enumerate(runs)])
    parts = [(r.source, "text" if r.line_of([0]) is not None else "parquet", 0) for r in runs]
    keep = duplicates(table, parts, on_duplicate)
    if keep is not None:
        table = table.filter(pa.array(keep))
    findings = [f for r in runs for f in r.findings]
    digest = hashlib.sha256("".join(r.digest for r in runs).encode()).hexdigest()
    return io.Run(table.select(["qid", "docno", "score", "rank", "tag"]), name,
                  ", ".join(r.source for r in runs), digest, findings)


def local_runs(runs, *, on_duplicate: str = "error", allowed=None):
    """``runs`` with every multi-file run (glob, URL, list of shards) read into one :class:`metrics.io.Run`;
    ``runs`` unchanged when it has none (and no ``allowed`` settings ask for paths to be checked)."""
    if allowed is None and isinstance(runs, (list, tuple)) and \
            all(isinstance(r, (str, Path)) and not is_shards(r) for r in runs):
        return runs   # plain files, as the command line gives them: no need of the partition module

    specs = run_specs(runs)
    paths = allowed is not None and any(isinstance(spec, (str, Path)) for _, spec in specs)
    if not paths and not any(is_shards(spec) for _, spec in specs):
        return runs
    return [read_run_files(spec, name=name, on_duplicate=on_duplicate, allowed=allowed)
            if is_shards(spec) or (allowed is not None and isinstance(spec, (str, Path)))
            else io.read_run(spec, name=name, on_duplicate=on_duplicate) for name, spec in specs]


def scores(qrels, runs, measures=DEFAULT_MEASURES, *, on_duplicate: str = "error", allowed=None,
           **options) -> list[Scores]:
    """The local engine as arrays: :func:`metrics.evaluation.score_runs` on ``runs``, multi-file runs
    read into memory."""
    if allowed is not None:
        from .partitioning import read_qrels_at

        qrels = read_qrels_at(qrels, allowed=allowed)
        if options.get("inferred") is not None:
            options["inferred"] = read_qrels_at(options["inferred"], allowed=allowed)
    return score_runs(qrels, local_runs(runs, on_duplicate=on_duplicate, allowed=allowed), measures,
                      on_duplicate=on_duplicate, one_pass=_one_pass, **options)


ONE_PASS_BYTES = 64 << 20
"""A TREC text run file of at least this size (a compressed one counted 4 times its size) is
first read in one pass, its queries scored as they end (:mod:`metrics.engines.contiguous`): the
7M-line bench run in 1.5 s and 0.51 GB (1.18x pyarrow's ``read_csv`` alone), against 1.9 s and
0.64 GB read whole. A smaller run is read whole: the pass's imports would cost more than it saves."""


def _one_pass(name, run, qrels: io.Qrels, measures: list, o) -> Scores | None:
    """``run``'s scores from one pass over it, or None (not a large local TREC text file of
    contiguous queries free of problems: :func:`metrics.evaluation.score_runs` reads it whole)."""
    if o.inferred is not None or not isinstance(run, (str, Path)) or is_shards(run) or is_url(str(run)):
        return None
    try:
        with open(run, "rb") as f:
            text_bytes = os.fstat(f.fileno()).st_size * (COMPRESSED_RATIO if compression_of(f.read(6)) else 1)
    except OSError:
        return None                                      # read whole, which names the problem
    if text_bytes < ONE_PASS_BYTES:
        return None
    from . import contiguous

    options = contiguous.task_options(o.missing, o.judged_only, o.max_depth, o.rel_level, o.ties, o.on_duplicate)
    names = list(dict.fromkeys(str(m) for m in measures))
    found = contiguous.scores(str(run), qrels, names, options, threads=local_threads(),
                              progress=lambda done, total, message: None)
    if found is None:
        return None
    qids, values = found
    return Scores(name or stem(Path(run).name), qids, {str(m): values[str(m)] for m in measures})


def evaluate(qrels, runs, measures=DEFAULT_MEASURES, *, on_duplicate: str = "error", allowed=None,
             **options) -> pd.DataFrame:
    """The local engine: :func:`metrics.evaluation.evaluate` on ``runs``, multi-file runs read into memory."""
    return frame_of(scores(qrels, runs, measures, on_duplicate=on_duplicate, allowed=allowed, **options))
