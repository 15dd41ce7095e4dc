"""Bucket fragments of a partition: the Arrow IPC files ``run/b{bucket}/p{part}.arrow`` that each
partition task appends its rows to (:class:`FragmentWriters`, one writer thread a piece behind the
reader), their schema and reading back, and the stop file through which the driver ends the tasks
once a part has failed."""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.fs as pafs

from ..io.paths import filesystem, is_url, join_path
from .buckets import bucket_order

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

FRAGMENT_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64()),
                             ("rank", pa.int64()), ("part", pa.int32()), ("line", pa.int64())])


STOP = "_stop"
"""A file the driver writes into the output folder once the partition has failed: a task that
sees it writes nothing more and returns (see :func:`stop_requested`)."""


class Stopped(Exception):
    """The driver asked the tasks to stop (the partition already failed elsewhere)."""


def stop_requested(fs, root: str) -> bool:
    return fs.get_file_info(join_path(root, STOP)).type != pafs.FileType.NotFound


class FragmentWriters:
    """One Arrow IPC fragment per bucket for one part, opened on first use.

    Writing runs on a background thread, one piece behind the reader, so that parsing the next
    piece overlaps it (pyarrow releases the GIL); at most one piece waits, so memory stays bounded.
    """

    def __init__(self, out: str, part: int, n_buckets: int, row_group_rows: int):
        self.fs, self.root = filesystem(out)
        self.part, self.n_buckets, self.row_group_rows = part, n_buckets, row_group_rows
        self.options = ipc_options(out)
        self.writers: dict[int, tuple] = {}
        self.rows: dict[int, int] = {}
        self._pool: ThreadPoolExecutor | None = None
        self._pending: Future[None] | None = None

    def write(self, table: pa.Table) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if stop_requested(self.fs, self.root):
            raise Stopped
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ndcg-lab-writer")
        self._wait()
        self._pending = self._pool.submit(self._write, table)

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def _write(self, table: pa.Table) -> None:
        counts, order = bucket_order(table["qid"], self.n_buckets)
        ordered = table if order is None else table.take(pa.array(order))
        start = 0
        for bucket in np.flatnonzero(counts):
            b = int(bucket)
            piece = ordered.slice(start, int(counts[b]))
            start += int(counts[b])
            if b not in self.writers:
                path = join_path(self.root, "run", f"b{b:05d}", f"p{self.part:05d}{FRAGMENT_SUFFIX}")
                self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
                sink = self.fs.open_output_stream(path)
                self.writers[b] = (sink, pa.ipc.new_file(sink, FRAGMENT_SCHEMA, options=self.options))
            self.writers[b][1].write_table(piece, max_chunksize=self.row_group_rows)
            self.rows[b] = self.rows.get(b, 0) + piece.num_rows

    def close(self) -> None:
        try:
            self._wait()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            for sink, writer in self.writers.values():
                writer.close()
                sink.close()


FRAGMENT_SUFFIX = ".arrow"
"""Bucket fragments and bucketed qrels are Arrow IPC files: written and read back as the buffers
they are in memory (no encoding, no decoding), memory-mapped on local disks."""


def ipc_options(out: str) -> pa.ipc.IpcWriteOptions:
    """Plain buffers on local disks, where they are read back at once; lz4 on object storage, where they travel."""
    return pa.ipc.IpcWriteOptions(compression="lz4" if is_url(out) else None)


def write_ipc(table: pa.Table, path: str, fs, options: pa.ipc.IpcWriteOptions) -> None:
    with fs.open_output_stream(path) as sink, pa.ipc.new_file(sink, table.schema, options=options) as writer:
        writer.write_table(table)


def read_ipc(path: str, fs) -> pa.Table:
    """One IPC file whole: memory-mapped on a local disk (no copy), read into memory elsewhere."""
    if isinstance(fs, pafs.LocalFileSystem):
        with pa.memory_map(path) as source:
            return pa.ipc.open_file(source).read_all()
    with fs.open_input_file(path) as source:
        return pa.ipc.open_file(source).read_all()


def fragment_table(table: pa.Table, part: int, lines: np.ndarray) -> pa.Table:
    return pa.table({"qid": table["qid"], "docno": table["docno"], "score": table["score"],
                     "rank": table["rank"],
                     "part": pa.array(np.full(table.num_rows, part, dtype=np.int32)),
                     "line": pa.array(lines.astype(np.int64))}, schema=FRAGMENT_SCHEMA)
