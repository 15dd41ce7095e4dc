"""A run whose queries come one after another, scored as it is read: no partition.

Retrieval systems write a run query by query. When every query's lines are one stretch of the
file, the streaming engine needs no buckets: each piece of text is parsed and checked as a
partition task parses it (:func:`metrics.engines.parts.partition_text`, here with a sink in
place of the fragment writers), the queries that end inside it are scored at once on the thread
that read it, and only the query still open at its end is carried to the next piece. Two
threads read the two halves of the file (the partition's byte ranges); the query that straddles
the cut is joined at the end. On Dask each worker reads one range as a task and sends back its
scores, its first and last queries' rows and the query ids it saw; the client joins them.
Nothing is written to disk, and memory holds about a piece of text and a batch of ended queries
(:data:`BATCH_ROWS`) per thread: the 50M-line bench run with the 12 measures of the bench suite
took 9.0-9.3 s and 0.67 GB, against 10.9-11.3 s and 0.88 GB in buckets
(``python bench/bench_scale.py --lines 50000000 --engines default,bucketed``).

Whatever this path does not prove gives it up (:func:`scores` returns None) and the caller
partitions the run as before: a query that comes back after another one, a document twice in
one query (the partition's check words the error, or keeps the first), any problem in the text
(the partition names its line). The values are the bucket engine's: the same kernels
(:func:`score_rows`) on the same rows of each query, and a query's values depend on its own
rows only.
"""
from __future__ import annotations

import shutil
import tempfile
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from ..errors import MetricsError
from ..evaluation import evaluate_ranked
from ..io.keys import exact_duplicates
from ..io.paths import expand, filesystem, is_url, join_path
from ..io.validate import encode
from ..ordering import run_heads, take
from ..ranking import rank
from .partitioning import PROGRESS_SECONDS, Progress, n_workers, plain_bytes, remove_tree, request_stop
from .parts import PIECE_BYTES, Part, PartResult, Stopped, partition_text, plan

COLUMNS = ["qid", "docno", "score", "rank"]

BATCH_ROWS = 1 << 20
"""Rows of ended queries scored together: each call of the kernels has a fixed cost (the 12
measures of the bench suite, scored piece by piece, made the 50M-line run 0.8 s slower than its
buckets), and a batch of this many rows holds ~40 MB."""


class NotContiguous(Exception):
    """The run is not one this path can score alone: partition it."""


@dataclass
class Range:
    """What reading one byte range left: its scored batches, its first query (``first_qid``, rows
    ``first``) and the query open at its end (``open``: qid, rows), which may go on in the ranges
    before and after and are scored by :func:`_join`, and every query id it saw."""

    results: list[tuple]
    first_qid: str | None
    first: list[pa.Table] | None
    open: tuple[str, list[pa.Table]] | None
    seen: set[str]


class _Queries:
    """The sink of one byte range: scores each query as soon as its last row is read."""

    def __init__(self, root: str, score):
        self.fs, self.root = filesystem(root)        # where partition_text looks for a stop
        self.score = score
        self.seen: set[str] = set()
        self.results: list[tuple] = []
        self.batch: list[pa.Table] = []
        self.batch_rows = 0
        self.first_qid: str | None = None
        self.first: list[pa.Table] | None = None
        self.open: tuple[str, list[pa.Table]] | None = None

    def write(self, table: pa.Table) -> None:
        rows = table.select(COLUMNS)
        heads, lengths = run_heads(rows["qid"])
        qids = take(rows["qid"], heads).to_pylist()
        if self.first_qid is None:
            self.first_qid = qids[0]
        i = 0
        if self.open is not None and qids[0] == self.open[0]:
            self.open[1].append(rows.slice(0, int(lengths[0])))
            i = 1
        for qid in qids[i:]:
            if qid in self.seen:
                raise NotContiguous(qid)
            self.seen.add(qid)
        if i == len(qids):
            return                                  # the open query goes on past this piece
        self._close()
        last = len(qids) - 1
        if i < last and qids[i] == self.first_qid:  # the range's first query, whole in this piece
            self._ended(qids[i], [rows.slice(int(heads[i]), int(lengths[i]))])
            i += 1
        start, end = int(heads[i]), int(heads[last])
        if end > start:
            self._add([rows.slice(start, end - start)])
        self.open = (qids[last], [rows.slice(end)])

    def _close(self) -> None:
        if self.open is not None:
            qid, pieces = self.open
            self.open = None
            self._ended(qid, pieces)

    def _ended(self, qid: str, pieces: list[pa.Table]) -> None:
        if qid == self.first_qid:
            self.first = pieces
        else:
            self._add(pieces)

    def _add(self, tables: list[pa.Table]) -> None:
        """Whole queries to score (a query is never split between two batches)."""
        self.batch += tables
        self.batch_rows += sum(t.num_rows for t in tables)
        if self.batch_rows >= BATCH_ROWS:
            self._score()

    def _score(self) -> None:
        if self.batch:
            self.results.append(self.score(pa.concat_tables(self.batch)))
            self.batch, self.batch_rows = [], 0

    def finish(self) -> None:
        """The range was read to its end: the batch scored; a range of one query has it as its
        first only."""
        self._score()
        if self.open is not None and self.open[0] == self.first_qid:
            self._close()

    def range(self) -> Range:
        """What the range leaves; its first and open queries' rows copied out of their pieces."""
        first = None if self.first is None else _own(self.first)
        opened = None if self.open is None else (self.open[0], _own(self.open[1]))
        return Range(self.results, self.first_qid, first, opened, self.seen)


def _own(tables: list[pa.Table]) -> list[pa.Table]:
    """``tables`` as one table in buffers of its own. A slice shares its piece's buffers, and a
    pickled slice carries all of them: on Dask the two queries' ~1,750 rows of a 50M-line range
    took 26 MB to the client, 0.16-0.30 s after the task had ended."""
    table = pa.concat_tables(tables)
    return [pa.table([pa.concat_arrays(column.chunks) if column.num_chunks else pa.array([], column.type)
                      for column in table.columns], schema=table.schema)]


def _join(sinks: list[Range], score) -> list[tuple]:
    """Every range's scores, with the queries at the ranges' cuts joined and scored."""
    results: list[tuple] = []
    pending: tuple[str, list[pa.Table]] | None = None    # the query open at the last cut
    seen: set[str] = set()
    for sink in sinks:
        if sink.first_qid is None:
            continue                                      # a range without rows
        if sink.first is None:                            # a finished range holds its first query's rows
            raise NotContiguous(f"the rows of query {sink.first_qid} were not kept")
        joins = pending is not None and sink.first_qid == pending[0]
        if (sink.seen & seen) - ({sink.first_qid} if joins else set()):
            raise NotContiguous("a query in two ranges")
        if pending is not None and joins:
            pending[1].extend(sink.first)
        else:
            if pending is not None:
                results.append(score(pa.concat_tables(pending[1])))
            pending = (sink.first_qid, list(sink.first))
        if sink.open is not None:
            results.append(score(pa.concat_tables(pending[1])))
            pending = sink.open
        results.extend(sink.results)
        seen |= sink.seen
    if pending is not None:
        results.append(score(pa.concat_tables(pending[1])))
    return results


def scores(run, qrels: io.Qrels, measures: list[str], options: dict, *, threads: int, progress: Progress,
           piece_bytes: int = PIECE_BYTES, allowed=None, client=None,
           workdir: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """(qids in string order, {measure: per-query values}) of one run, or None when the run is
    not one local TREC text file (plain: a byte range per thread, or per thread of the Dask
    cluster with ``client``; compressed: one range, inflated on a second thread) of contiguous queries free of
    problems: the caller then reads it the other way. ``options``: :func:`task_options`;
    ``measures``: measure strings, each once; ``workdir``: where the ranges are told to stop
    (default: a temporary folder here; a remote cluster's workers need one they read)."""
    if options["missing"] not in ("zero", "skip") or options["ties"] not in ("score", "rank"):
        return None                                       # the other way words the error
    try:
        files = expand(run, allowed=allowed)
        if len(files) != 1 or is_url(files[0]):
            return None
        ranges = n_workers(client, threads=True) if client is not None else threads
        parts = plan(files, max(piece_bytes, -(-plain_bytes(files) // max(1, ranges))))
    except MetricsError:
        return None
    if any(p.kind != "text" for p in parts):
        return None                                       # parquet, headed CSV or JSON
    judgments = qrels.table
    score = _scorer(judgments, options, measures)
    own = workdir is None
    base = tempfile.mkdtemp(prefix="ndcg-lab-contiguous-") if workdir is None else workdir
    root = join_path(base, f"pass-{uuid.uuid4().hex[:8]}")
    fs, inner = filesystem(root)
    fs.create_dir(inner, recursive=True)
    try:
        if client is None:
            found = _read_here(parts, score, piece_bytes, root, progress)
        else:
            found = _read_on(client, parts, judgments, measures, options, piece_bytes, root, progress)
        if found is None:
            return None
        try:
            results = _join(found, score)
        except NotContiguous:
            return None
        if options["missing"] == "zero":              # the judged queries the run lacks
            seen = pa.array(sorted(set().union(*(r.seen for r in found))), pa.string())
            left = judgments.filter(pc.invert(pc.is_in(judgments["qid"], value_set=seen)))
            if left.num_rows:
                results.append(score_rows(EMPTY, left, None, options, "run", measures))
    finally:
        remove_tree(fs, inner)
        if own:
            shutil.rmtree(base, ignore_errors=True)
    return assemble(results, list(measures))


def _scorer(judgments: pa.Table, options: dict, measures: list[str]):
    """The scoring of whole queries' rows with their judgments; a repeated document gives the pass up."""

    def score(rows: pa.Table) -> tuple:
        qcode, qids = encode(rows["qid"])
        if exact_duplicates(rows["qid"], rows["docno"], qcode) is not None:
            raise NotContiguous("a repeated document")
        judged = judgments.filter(pc.is_in(judgments["qid"], value_set=qids))
        return score_rows(rows, judged, None, options, "run", measures)
    return score


def read_range(part: Part, score, piece_bytes: int, root: str, on_bytes=None) -> Range | None:
    """Read and score one byte range (a task); None when it gives the pass up, after asking the
    other ranges to stop at their next piece."""
    sink = _Queries(root, score)
    fs, inner = filesystem(part.path)
    try:
        partition_text(part, fs, inner, sink, PartResult(part.index), piece_bytes, on_bytes)
        sink.finish()
    except (MetricsError, NotContiguous, Stopped):
        request_stop(root)
        return None
    return sink.range()


def _read_here(parts: list[Part], score, piece_bytes: int, root: str, progress: Progress) -> list[Range] | None:
    """Every range on its own thread of this process."""
    done = [0]
    total = sum(p.size for p in parts)
    lock = threading.Lock()

    def on_bytes(n: int) -> None:
        with lock:
            done[0] += n

    with ThreadPoolExecutor(max_workers=len(parts), thread_name_prefix="ndcg-lab-range") as pool:
        futures = [pool.submit(read_range, part, score, piece_bytes, root, on_bytes) for part in parts]
        while wait(futures, timeout=PROGRESS_SECONDS).not_done:
            progress(min(done[0], total), total, f"reading and scoring {parts[0].source}")
        found = [f.result() for f in futures]
    ranges = [r for r in found if r is not None]
    if len(ranges) < len(found):
        return None
    progress(total, total, f"read and scored {parts[0].source}")
    return ranges


def _range_task(part: Part, judgments: pa.Table, measures: list[str], options: dict, piece_bytes: int,
                root: str) -> Range | None:
    """A Dask task: one range read and scored on a worker."""
    return read_range(part, _scorer(judgments, options, measures), piece_bytes, root)


def _read_on(client, parts: list[Part], judgments: pa.Table, measures: list[str], options: dict,
             piece_bytes: int, root: str, progress: Progress) -> list[Range] | None:
    """Every range as a task on the Dask cluster; the judgments are sent to each worker once."""
    from dask.distributed import as_completed
    from dask.distributed import wait as wait_all

    total = sum(p.size for p in parts)
    progress(0, total, f"reading and scoring {parts[0].source}")
    [shared] = client.scatter([judgments], broadcast=True)
    futures = client.map(_range_task, parts, judgments=shared, measures=list(measures), options=options,
                         piece_bytes=piece_bytes, root=root, pure=False)
    index = {f.key: i for i, f in enumerate(futures)}
    found: dict[int, Range] = {}
    done = 0
    try:
        for future in as_completed(futures):
            i = index[future.key]
            got = future.result()
            if got is None:
                return None
            found[i] = got
            done += parts[i].size
            progress(done, total, f"reading and scoring {parts[0].source}")
    finally:
        if len(found) < len(futures):
            request_stop(root)       # a running task is not cancelled: it stops at its next piece
            wait_all(futures)
        client.cancel([shared])
    progress(total, total, f"read and scored {parts[0].source}")
    return [found[i] for i in range(len(parts))]


EMPTY = pa.table({"qid": pa.array([], pa.string()), "docno": pa.array([], pa.string()),
                  "score": pa.array([], pa.float64()), "rank": pa.array([], pa.int64())})


def score_rows(table: pa.Table, qrels_table: pa.Table, proxy_table: pa.Table | None, options: dict, name: str,
               measures) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """(qids, {measure: values}, rows) of run rows free of repeated documents, with the qrels (and
    proxy qrels) of their queries: the metrics kernels, as the local engine runs them."""
    run = io.Run(table.select(["qid", "docno", "score", "rank"]), name, name, "", [])
    qrels = io.Qrels(qrels_table, "qrels", "qrels", "", [])
    proxy = None if proxy_table is None else io.Qrels(proxy_table, "proxy", "proxy", "", [])
    ranked = rank(run, qrels, missing=options["missing"], ties=options["ties"], max_depth=options["max_depth"],
                  inferred=proxy, name=name)
    if options["judged_only"]:
        ranked = ranked.condensed()
    values = evaluate_ranked(ranked, list(measures), rel_level=options["rel_level"])
    return ranked.qids, values, table.num_rows



def task_options(missing: str, judged_only: bool, max_depth: int | None, rel_level: int, ties: str,
                 on_duplicate: str) -> dict:
    """The options of :func:`score_rows` (and of a bucket task)."""
    return {"missing": missing, "judged_only": bool(judged_only), "max_depth": max_depth,
            "rel_level": int(rel_level), "ties": ties, "on_duplicate": on_duplicate}


def assemble(results: list[tuple], names: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """(qids, {measure: values}) of scored parts of a run (buckets, batches), queries in string
    order as the local engine gives them."""
    qids = np.concatenate([r[0] for r in results]) if results else np.array([], dtype=object)
    values = {m: np.concatenate([r[1][m] for r in results]) if results else np.array([]) for m in names}
    if len(qids):
        order = pc.sort_indices(pa.array(qids.astype(object), pa.string())).to_numpy()
        qids = qids[order]
        if len(np.unique(qids)) != len(qids):
            raise MetricsError("a query was scored in two buckets",
                               fix="the partition is damaged (a query split across buckets); partition again")
        values = {m: v[order] for m, v in values.items()}
    return qids, values
