"""A run and its qrels split into buckets by query, as a folder of Arrow IPC fragments and a manifest.

:func:`partition` plans the parts (:mod:`metrics.engines.parts`), runs their tasks here or on
Dask, buckets the qrels, and renames the folder into place only when every task succeeded, so
bad input leaves nothing behind.
"""
from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from .. import io
from ..errors import MetricsError
from ..io.keys import exact_duplicates
from ..io.paths import display_name, expand, filesystem, is_url, join_path, shard_name, stem
from ..io.validate import RUN, encode, quoting
from ..settings import check_server_source
from .buckets import HASH, bucket_of, default_buckets
from .parts import (
    FRAGMENT_SCHEMA,
    FRAGMENT_SUFFIX,
    MIN_RANGE_BYTES,
    PIECE_BYTES,
    RANGE_BYTES,
    ROW_GROUP_ROWS,
    STOP,
    Part,
    PartResult,
    ipc_options,
    partition_part,
    plan,
    read_ipc,
    write_ipc,
)

Progress = Callable[[int, int, str], None]
"""``progress(done, total, message)``: called as partitioning and evaluation advance."""

FORMAT_VERSION = 2


MANIFEST = "_manifest.json"


PROGRESS_SECONDS = 0.25         # progress is reported this often while partition tasks run on threads


@dataclass
class Partition:
    """A run and its qrels split into buckets by query: the manifest of a partition directory."""

    path: str
    name: str
    n_buckets: int
    sources: list[str]                 # input files, in order
    parts: list[dict]                  # per part: file index, kind, first line offset, has_rank, rows
    bucket_rows: list[int]
    bucket_parts: list[list[int]]      # parts that wrote a fragment of each bucket
    qrels_source: str = ""
    qrels_digest: str = ""
    proxy: bool = False
    hash: str = HASH
    version: int = FORMAT_VERSION

    @property
    def rows(self) -> int:
        return int(sum(self.bucket_rows))

    @property
    def has_rank(self) -> bool:
        return all(p.get("has_rank", True) for p in self.parts)

    def run_files(self, bucket: int) -> list[str]:
        return [join_path(self.path, "run", f"b{bucket:05d}", f"p{p:05d}{FRAGMENT_SUFFIX}")
                for p in self.bucket_parts[bucket]]

    def qrels_file(self, bucket: int, proxy: bool = False) -> str:
        return join_path(self.path, "proxy" if proxy else "qrels", f"b{bucket:05d}{FRAGMENT_SUFFIX}")

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data.pop("path")
        return json.dumps(data, indent=1)

    @classmethod
    def open(cls, path) -> Partition:
        """Read the manifest of a partition directory (written last, so its presence means complete)."""
        path = str(path)
        fs, inner = filesystem(path)
        try:
            with fs.open_input_stream(join_path(inner, MANIFEST)) as f:
                data = json.loads(f.read())
        except (FileNotFoundError, OSError, pa.ArrowException):
            raise MetricsError(f"{path!r} is not a complete partition (no {MANIFEST})",
                               fix="partition the run again with metrics.engines.partition") from None
        if data.get("version") != FORMAT_VERSION:
            raise MetricsError(f"{path!r} was written by another version of nDCG Lab",
                               fix="partition the run again")
        return cls(path=path if is_url(path) else inner, **data)


def _bucket_qrels(qrels: io.Qrels, n_buckets: int, out: str, folder: str) -> None:
    fs, root = filesystem(out)
    fs.create_dir(join_path(root, folder), recursive=True)
    table = qrels.table
    bucket = bucket_of(table["qid"], n_buckets) if table.num_rows else np.zeros(0, dtype=np.int32)
    order = np.argsort(bucket, kind="stable")
    counts = np.bincount(bucket, minlength=n_buckets)
    ordered = table.take(pa.array(order)) if len(order) else table
    options = ipc_options(out)
    start = 0
    for b in range(n_buckets):
        write_ipc(ordered.slice(start, int(counts[b])), join_path(root, folder, f"b{b:05d}{FRAGMENT_SUFFIX}"), fs,
                  options)
        start += int(counts[b])


def read_qrels_at(qrels, what: str = "qrels", *, allowed=None) -> io.Qrels:
    """Qrels from a path, URL or anything :func:`metrics.io.read_qrels` takes. With ``allowed``
    settings a path or URL is a server file a visitor named: checked by
    :func:`metrics.settings.check_server_source`, its lines never quoted in errors."""
    if isinstance(qrels, (str, Path)) and allowed is not None:
        given = str(qrels)
        qrels = check_server_source(given, allowed)
        with quoting(False):
            if is_url(qrels):
                return read_qrels_at(qrels, what)
            return io.read_qrels(qrels, name=stem(display_name(given)), source=display_name(given))
    if isinstance(qrels, (str, Path)) and is_url(str(qrels)):
        fs, inner = filesystem(str(qrels))
        with fs.open_input_stream(inner) as f:
            return io.read_qrels(f.read(), name=stem(display_name(str(qrels))), source=display_name(str(qrels)))
    return io.read_qrels(qrels)


def partition(run, qrels, out=None, *, n_buckets: int | None = None, name: str | None = None, inferred=None,
              on_duplicate: str = "error", piece_bytes: int = PIECE_BYTES, range_bytes: int = RANGE_BYTES,
              row_group_rows: int = ROW_GROUP_ROWS, progress: Progress | None = None,
              client=None, threads: int = 1, allowed=None) -> Partition:
    """Split one run (a file, glob, URL or list of shard files) and its qrels into ``n_buckets``
    buckets by ``crc32(qid) mod n_buckets``, as Arrow IPC files under ``out`` (a path or fsspec URL;
    default: a new temporary folder).

    Memory stays bounded by ``piece_bytes`` of text at a time. With a Dask ``client`` the parts are
    partitioned on its workers (inputs and ``out`` must then be visible to them); without one, on
    ``threads`` threads of this process (pyarrow and numpy release the GIL). The folder is
    written under a temporary name and renamed to ``out`` only on success; an earlier partition
    at ``out`` is replaced. ``allowed``: see :func:`metrics.io.paths.expand` (server files a
    visitor named: checked, and their lines never quoted in errors).
    """
    files = expand(run, allowed=allowed)
    name = name or shard_name(run if isinstance(run, (list, tuple)) else str(run))
    qrels = read_qrels_at(qrels, allowed=allowed)
    proxy = read_qrels_at(inferred, allowed=allowed) if inferred is not None else None
    workers = n_workers(client) if client is not None else max(1, int(threads))
    if workers > 1:
        # Enough parts for every worker: cut plain text into ranges of at least 64 MB.
        range_bytes = min(range_bytes, max(MIN_RANGE_BYTES, plain_bytes(files) // (2 * workers) + 1))
    parts = plan(files, range_bytes)
    if allowed is not None:
        parts = [dataclasses.replace(p, quote=False) for p in parts]
    total_bytes = sum(p.size for p in parts)
    if n_buckets is None:
        n_buckets = default_buckets(sum(p.size * (4 if p.compression else 1) for p in parts), workers=workers)
    if int(n_buckets) < 1:
        raise MetricsError(f"buckets must be a whole number >= 1, got {n_buckets!r}", fix="for example 16")
    n_buckets = int(n_buckets)
    if out is None:
        out = tempfile.mkdtemp(prefix="ndcg-lab-partition-")
        os.rmdir(out)
    out = str(out)
    fs, root = filesystem(out)
    final = out if is_url(out) else root
    tmp = f"{final.rstrip('/')}.partial-{uuid.uuid4().hex[:8]}"
    _, tmp_root = filesystem(tmp)
    fs.create_dir(tmp_root, recursive=True)
    report = progress or (lambda done, total, message: None)
    try:
        results = _run_parts(parts, tmp, n_buckets, piece_bytes, row_group_rows, on_duplicate, report,
                             total_bytes, client, workers)
        offsets = _line_offsets(parts, results)
        bucket_rows = [0] * n_buckets
        bucket_parts: list[list[int]] = [[] for _ in range(n_buckets)]
        for r in results:
            for b, rows in sorted(r.bucket_rows.items()):
                bucket_rows[b] += rows
                bucket_parts[b].append(r.part)
        if sum(bucket_rows) == 0:
            raise MetricsError("no documents in the run", source=parts[0].source if parts else None,
                               fix=f"give lines like: {' '.join(RUN.fields)}")
        _bucket_qrels(qrels, n_buckets, tmp, "qrels")
        if proxy is not None:
            _bucket_qrels(proxy, n_buckets, tmp, "proxy")
        result = Partition(
            path=final, name=name, n_buckets=n_buckets, sources=[display_name(f) for f in files],
            parts=[{"file": p.file, "kind": p.kind, "start": p.start, "first_line": int(offsets[i]),
                    "has_rank": results[i].has_rank, "rows": results[i].rows} for i, p in enumerate(parts)],
            bucket_rows=bucket_rows, bucket_parts=bucket_parts, qrels_source=qrels.source,
            qrels_digest=qrels.digest, proxy=proxy is not None)
        with fs.open_output_stream(join_path(tmp_root, MANIFEST)) as f:
            f.write(result.to_json().encode())
        _replace(fs, tmp_root, root)
    except BaseException:
        remove_tree(fs, tmp_root)
        raise
    return result


def n_workers(client, threads: bool = False) -> int:
    """The Dask cluster's workers, or with ``threads`` their threads in all (1 without a client, or
    when the scheduler cannot tell)."""
    if client is None:
        return 1
    try:
        workers = client.scheduler_info().get("workers", {})
        return max(1, sum(int(w.get("nthreads", 1)) for w in workers.values()) if threads else len(workers))
    except Exception:  # noqa: BLE001 - a client that cannot tell: assume one worker
        return 1


def plain_bytes(files: list[str]) -> int:
    """The files' sizes in bytes, summed (a file whose size cannot be asked counts 0)."""
    total = 0
    for path in files:
        fs, inner = filesystem(path)
        try:
            total += int(fs.get_file_info(inner).size or 0)
        except (OSError, pa.ArrowException):
            pass
    return total


def _run_parts(parts, tmp, n_buckets, piece_bytes, row_group_rows, on_duplicate, report, total_bytes,
               client, threads: int = 1) -> list[PartResult]:
    """All partition tasks, here (on ``threads`` threads) or on Dask; errors are raised in file order
    (the first bad line wins)."""
    done_bytes = 0
    results: list[PartResult] = []
    report(0, total_bytes, "partitioning")
    lock = threading.Lock()

    def first_error(result: PartResult, error: tuple, earlier: list[PartResult]) -> MetricsError:
        problem, source, line, fix = error
        if line is not None:
            part = parts[result.part]
            line += sum(r.lines for r in earlier if parts[r.part].file == part.file)
        return MetricsError(problem, source=source, line=line, fix=fix)

    def on_bytes(n):
        nonlocal done_bytes
        with lock:
            done_bytes += n

    if client is None:
        from concurrent.futures import ThreadPoolExecutor, wait

        # Tasks run on threads; ``progress`` is called from this thread only (a UI may require it).
        # The pool's exit waits for every running task, so nothing writes into ``tmp`` once this returns.
        with ThreadPoolExecutor(max_workers=max(1, min(threads, len(parts))),
                                thread_name_prefix="ndcg-lab-part") as pool:
            futures = [pool.submit(partition_part, part, tmp, n_buckets, piece_bytes, row_group_rows,
                                   on_duplicate, on_bytes) for part in parts]
            try:
                for part, future in zip(parts, futures):
                    while not wait([future], timeout=PROGRESS_SECONDS).done:
                        report(min(done_bytes, total_bytes), total_bytes, f"partitioning {part.source}")
                    result = future.result()
                    if result.error is not None:
                        raise first_error(result, result.error, results)
                    results.append(result)
                    report(min(done_bytes, total_bytes), total_bytes, f"partitioned {part.source}")
            finally:
                if len(results) < len(futures):
                    for future in futures:
                        future.cancel()
                    request_stop(tmp)
        return results
    from dask.distributed import as_completed, wait
    futures = client.map(partition_part, parts, out=tmp, n_buckets=n_buckets, piece_bytes=piece_bytes,
                         row_group_rows=row_group_rows, on_duplicate=on_duplicate, pure=False)
    by_index = {f.key: i for i, f in enumerate(futures)}
    finished: dict[int, PartResult] = {}
    try:
        for future in as_completed(futures):
            i = by_index[future.key]
            finished[i] = future.result()
            done_bytes += parts[i].size
            report(done_bytes, total_bytes, f"partitioned {parts[i].source}")
            failed = sorted(j for j, r in finished.items() if r.error is not None)
            if failed and all(j in finished for j in range(failed[0])):
                break
    finally:
        if len(finished) < len(futures):
            # Cancelling a future does not stop a task that already runs on a worker: it would
            # go on writing into ``tmp`` after the caller removed it. Ask every task to stop,
            # then wait until each has ended, so that nothing writes once this returns.
            request_stop(tmp)
            wait(futures)
    for i in range(len(parts)):
        if i not in finished:
            break
        error = finished[i].error
        if error is not None:
            raise first_error(finished[i], error, [finished[j] for j in range(i)])
        results.append(finished[i])
    return results


def request_stop(tmp: str) -> None:
    """Ask every task writing into ``tmp`` to stop at its next piece (:data:`metrics.engines.parts.STOP`)."""
    fs, root = filesystem(tmp)
    with fs.open_output_stream(join_path(root, STOP)) as f:
        f.write(b"stop")


def _line_offsets(parts: list[Part], results: list[PartResult]) -> np.ndarray:
    """Lines of the same file before each part (to turn part-relative line numbers into file lines)."""
    offsets = np.zeros(len(parts), dtype=np.int64)
    seen: dict[int, int] = {}
    for i, part in enumerate(parts):
        offsets[i] = seen.get(part.file, 0)
        seen[part.file] = offsets[i] + results[i].lines
    return offsets


def _replace(fs: pafs.FileSystem, tmp: str, final: str) -> None:
    """Move the finished folder into place (replacing an earlier partition, never other data)."""
    info = fs.get_file_info(final)
    old = None
    if info.type != pafs.FileType.NotFound:
        if info.type != pafs.FileType.Directory or (
                fs.get_file_info(join_path(final, MANIFEST)).type == pafs.FileType.NotFound
                and fs.get_file_info(pafs.FileSelector(final)) != []):
            raise MetricsError(f"{final!r} exists and is not a partition folder", source=None,
                               fix="give a new or empty folder for the buckets")
        old = f"{final}.old-{uuid.uuid4().hex[:8]}"
        fs.move(final, old)
    fs.move(tmp, final)
    if old is not None:
        remove_tree(fs, old)


def remove_tree(fs: pafs.FileSystem, path: str) -> None:
    try:
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_dir(path)
    except (OSError, pa.ArrowException):
        pass


def read_fragments(files, fs) -> pa.Table:
    """Every record batch of every fragment, in order (never a batch alone: queries straddle them)."""
    tables = [read_ipc(f, fs) for f in files]
    return pa.concat_tables(tables) if tables else FRAGMENT_SCHEMA.empty_table()


def task_parts(task) -> list[tuple[str, str, int]]:
    """The ``parts`` of :func:`duplicates` for a bucket task's part files."""
    return [(task.sources[task.part_files[p]], task.part_kinds[p], task.part_first_line[p])
            for p in range(len(task.part_files))]


def duplicates(table: pa.Table, parts: Sequence[tuple[str, str, int]], on_duplicate: str) -> np.ndarray | None:
    """A docno twice in one query (within or across files): an error naming both lines, or rows to keep.

    ``table`` has the columns qid, docno, part and line; ``parts[part]`` is (the source, ``"text"``
    or ``"parquet"``, the line number of the part's first row less one), what an error names.
    """
    if table.num_rows < 2:
        return None
    qid, docno = table["qid"], table["docno"]   # chunked as memory-mapped: hashed chunk by chunk, no copy
    qcode, _ = encode(qid)
    found = exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    if on_duplicate == "error":
        part = table["part"].to_numpy()
        line = table["line"].to_numpy()

        def where(row: int) -> tuple[str, int, str]:
            source, kind, first_line = parts[int(part[row])]
            return source, int(line[row]) + first_line, "row" if kind == "parquet" else "line"

        r, f = int(rows[0]), int(firsts[0])
        (src_f, line_f, word_f), (src_r, line_r, word_r) = where(f), where(r)
        first_text = f"{word_f} {line_f}" if src_f == src_r else f"{src_f} {word_f} {line_f}"
        problem = (f"document {docno[r].as_py()!r} appears twice for query {qid[r].as_py()!r} "
                   f"({first_text} and {word_r} {line_r})")
        fix = ("trec_eval refuses duplicate documents too; remove one, or pass "
               "on_duplicate='first' to keep the first")
        if word_r == "row":
            raise MetricsError(f"row {line_r}: {problem}", source=src_r, fix=fix)
        raise MetricsError(problem, source=src_r, line=line_r, fix=fix)
    keep = np.ones(table.num_rows, dtype=bool)
    keep[rows] = False
    return keep


def read_bucket(part: Partition | str, bucket: int) -> pa.Table:
    """One bucket's run rows (qid, docno, score, rank, part, line), all fragments whole, in input order."""
    part = part if isinstance(part, Partition) else Partition.open(part)
    fs, _ = filesystem(part.path)
    return read_fragments([filesystem(f)[1] for f in part.run_files(bucket)], fs)
