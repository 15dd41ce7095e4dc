"""Scale-out: runs larger than memory on one machine, and across machines on Dask.

A run (one file, a glob or a list of shard files; TREC text, compressed text
or parquet, local paths or fsspec URLs) is split into N buckets by a fixed
hash of the query id, ``crc32(utf-8 qid) mod N`` (zlib's CRC-32, never
Python's salted ``hash``), and written as parquet. Every query lands whole in
one bucket and the qrels are bucketed the same way, so each bucket is a
complete small evaluation: the same kernels (:func:`metrics.ranking.rank` and
:func:`metrics.evaluate.evaluate_ranked`) score it, and because they are
per-query independent the values are bit-identical to the in-memory engine.

Two phases, both made of independent tasks:

1. *partition*: one task per input *part* (a whole file, or a byte range of a
   large plain-text file cut at line boundaries). A task reads its part in
   pieces of whole lines, parses each piece with ``metrics.io`` (same
   normalisation, same validation, same messages; line numbers are shifted to
   the original file) and appends each bucket's rows to its own parquet
   fragment ``run/b{bucket}/p{part}.parquet``. Memory is bounded by the piece
   size, never by the run.
2. *evaluate*: one task per bucket reads all its fragments whole (never a
   row group alone: a query may straddle row groups and fragments), checks
   that every query id hashes to this bucket, checks duplicates across files,
   ranks and scores.

Engines: ``streaming`` runs the tasks one after another in this process;
``dask`` maps them over a Dask cluster (an existing one at
``tcp://HOST:PORT``, or a ``LocalCluster`` started and closed here). The
output directory is written under a temporary name and renamed into place
only when every task succeeded, so bad input leaves nothing behind.
"""
from __future__ import annotations

import dataclasses
import bz2
import glob as globlib
import gzip
import json
import lzma
import os
import re
import shutil
import sys
import tempfile
import time
import uuid
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.fs as pafs
import pyarrow.parquet as pq

from . import io
from .errors import MetricsError

__all__ = ["ENGINES", "Partition", "partition", "evaluate", "evaluate_partition", "bucket_of", "crc32",
           "expand", "read_run_files", "read_bucket", "to_dask", "default_buckets", "streaming_threshold",
           "memory_threshold", "terminal_progress", "local_cluster"]

ENGINES = ("local", "streaming", "dask")
HASH = "crc32(utf-8 qid) mod N"
FORMAT_VERSION = 1
MANIFEST = "_manifest.json"
PIECE_BYTES = 64 << 20          # text read and parsed at a time by one partition task
RANGE_BYTES = 512 << 20         # plain text files larger than this are split into byte ranges (parts)
MIN_RANGE_BYTES = 64 << 20      # ... and on a Dask cluster into ranges of at least this, two per worker
BUCKET_BYTES = 192 << 20        # default bucket size, in bytes of TREC text (~5M lines)
ROW_GROUP_ROWS = 1 << 20
_GLOB_CHARS = re.compile(r"[*?\[]")
_COMPRESSED = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}

Progress = Callable[[int, int, str], None]

FRAGMENT_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64()),
                             ("rank", pa.int64()), ("part", pa.int32()), ("line", pa.int64())])


# --------------------------------------------------------------------------- the hash


def _crc_table() -> np.ndarray:
    table = np.arange(256, dtype=np.uint32)
    for _ in range(8):
        table = np.where(table & 1, np.uint32(0xEDB88320) ^ (table >> 1), table >> 1).astype(np.uint32)
    return table


_CRC_TABLE = _crc_table()


def crc32(strings) -> np.ndarray:
    """zlib's CRC-32 of the UTF-8 bytes of every string (vectorised over strings, one pass per byte position)."""
    arr = strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings
    if not isinstance(arr, pa.Array):
        arr = pa.array(list(arr), pa.string())
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    n = len(arr)
    crc = np.full(n, 0xFFFFFFFF, dtype=np.uint32)
    if n == 0:
        return crc ^ np.uint32(0xFFFFFFFF)
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32, count=arr.offset + n + 1)[arr.offset:]
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None \
        else np.zeros(0, dtype=np.uint8)
    lengths = np.diff(offsets)
    by_length = np.argsort(-lengths, kind="stable")   # longest first: the active rows are a prefix
    starts, lengths = offsets[:-1][by_length].astype(np.int64), lengths[by_length]
    value = crc[by_length]
    active = n
    for j in range(int(lengths[0]) if n else 0):
        while active and lengths[active - 1] <= j:
            active -= 1
        head = value[:active]
        byte = data[starts[:active] + j].astype(np.uint32)
        value[:active] = _CRC_TABLE[(head ^ byte) & np.uint32(0xFF)] ^ (head >> np.uint32(8))
    crc[by_length] = value
    return crc ^ np.uint32(0xFFFFFFFF)


def bucket_of(qids, n_buckets: int) -> np.ndarray:
    """Bucket of every query id: ``crc32(utf-8 qid) mod n_buckets`` (hashes each distinct id once)."""
    if isinstance(qids, np.ndarray) or isinstance(qids, (list, tuple)):
        qids = pa.array(list(qids) if not isinstance(qids, np.ndarray) else qids.astype(object), pa.string())
    if isinstance(qids, pa.ChunkedArray):
        qids = qids.combine_chunks() if qids.num_chunks != 1 else qids.chunk(0)
    encoded = pc.dictionary_encode(qids)
    buckets = (crc32(encoded.dictionary) % np.uint32(n_buckets)).astype(np.int32)
    return buckets[encoded.indices.to_numpy(zero_copy_only=False)]


def default_buckets(total_bytes: int, bucket_bytes: int = BUCKET_BYTES) -> int:
    """Buckets for an input of ``total_bytes`` (text): about ``bucket_bytes`` each, at least 1."""
    return max(1, -(-int(total_bytes) // int(bucket_bytes)))


def streaming_threshold() -> int:
    """Run size in bytes above which the dashboard streams: env NDCG_LAB_STREAMING_BYTES, else RAM / 16."""
    value = os.environ.get("NDCG_LAB_STREAMING_BYTES")
    if value:
        try:
            return int(float(value))
        except ValueError:
            raise MetricsError(f"NDCG_LAB_STREAMING_BYTES={value!r} is not a number of bytes",
                               fix="for example NDCG_LAB_STREAMING_BYTES=500000000") from None
    return memory_threshold()


def memory_threshold() -> int:
    """The machine's physical memory / 16 (8 GiB assumed where it cannot be read)."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        total = 8 << 30
    return int(total // 16)


# --------------------------------------------------------------------------- files and URLs


def _is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def _filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path on it: local paths directly, URLs through fsspec."""
    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    if not _is_url(path):
        return pafs.LocalFileSystem(), os.path.abspath(os.path.expanduser(path))
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with dask
        raise MetricsError(f"cannot open {path!r}: fsspec is not installed", fix="pip install fsspec") from None
    try:
        fs, inner = fsspec.core.url_to_fs(path)
    except (ImportError, ValueError) as exc:
        raise MetricsError(f"cannot open {path!r}: {exc}",
                           fix="install the fsspec driver for this protocol (s3fs, gcsfs, adlfs, ...)") from None
    return pafs.PyFileSystem(pafs.FSSpecHandler(fs)), inner


def _join(base: str, *names: str) -> str:
    return "/".join([base.rstrip("/"), *names])


def _display_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def expand(src) -> list[str]:
    """Input files of one run: a path or fsspec URL, a glob of them, or a list/tuple of those; sorted per glob."""
    if isinstance(src, (str, Path)):
        items = [str(src)]
    elif isinstance(src, (list, tuple)) and src and all(isinstance(x, (str, Path)) for x in src):
        items = [str(x) for x in src]
    else:
        raise MetricsError(f"cannot read run files from a {type(src).__name__}",
                           fix="give a path, a glob such as 'runs/part-*.txt', or a list of paths")
    files: list[str] = []
    for item in items:
        if _GLOB_CHARS.search(item) and not (not _is_url(item) and os.path.exists(os.path.expanduser(item))):
            if _is_url(item):
                import fsspec
                fs, inner = fsspec.core.url_to_fs(item)
                found = sorted(fs.unstrip_protocol(p) for p in fs.glob(inner))
            else:
                found = sorted(globlib.glob(os.path.expanduser(item)))
            found = [f for f in found if not os.path.isdir(f)] if not _is_url(item) else found
            if not found:
                raise MetricsError(f"no file matches {item!r}", source=_display_name(item),
                                   fix="check the pattern (a glob such as runs/part-*.txt)")
            files += found
        elif _is_directory(item):
            files += _directory_files(item)
        else:
            files.append(item if _is_url(item) else os.path.abspath(os.path.expanduser(item)))
    return files


def _is_directory(item: str) -> bool:
    if not _is_url(item):
        return os.path.isdir(os.path.expanduser(item))
    fs, inner = _filesystem(item)
    return fs.get_file_info(inner).type == pafs.FileType.Directory


def _directory_files(item: str) -> list[str]:
    """The data files of a folder (as Spark or Dask write them), without _SUCCESS, .crc and other hidden files."""
    fs, inner = _filesystem(item)
    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
    found = sorted(i.path for i in infos if i.type == pafs.FileType.File
                   and not any(p.startswith(("_", ".")) for p in i.path[len(inner):].split("/") if p))
    if not found:
        raise MetricsError(f"the folder {item!r} holds no run files", source=_display_name(item),
                           fix="give the folder of the run's files, or a glob such as folder/part-*")
    if _is_url(item):
        prefix = item.split("://", 1)[0] + "://"
        return [prefix + p.lstrip("/") if not p.startswith(prefix) else p for p in found]
    return found


def _is_shards(value) -> bool:
    """A run given as files to combine: a glob, a URL, or a list/tuple of paths (as one run)."""
    if isinstance(value, (str, Path)):
        text = str(value)
        local = os.path.expanduser(text)
        return _is_url(text) or os.path.isdir(local) or (bool(_GLOB_CHARS.search(text)) and not os.path.exists(local))
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(x, (str, Path)) for x in value)


def _shard_name(value) -> str:
    """System name of a run given as files: the file's stem, or the glob's without its wildcards
    (``runs/bm25-*.txt`` -> ``bm25``; ``runs/bm25/*.txt`` -> ``bm25``)."""
    first = str(value[0]) if isinstance(value, (list, tuple)) else str(value)
    base = _display_name(first)
    if not _GLOB_CHARS.search(base) and not isinstance(value, (list, tuple)):
        return io._stem(base) or "run"
    base = re.sub(r"\[[^\]]*\]", "", base)
    base = re.sub(r"[-_.]*[*?]+", "", base)
    stem = io._stem(base).strip("-_.") if base and not base.startswith(".") else ""
    if not stem or isinstance(value, (list, tuple)) and len(value) > 1 and not _GLOB_CHARS.search(first):
        parent = _display_name(first.rstrip("/").rsplit("/", 1)[0]) if "/" in first else ""
        stem = stem or parent
    return stem or "run"


def run_specs(runs) -> list[tuple[str | None, object]]:
    """(name or None, run) pairs as ``metrics.evaluate`` takes them: a mapping name -> run, a list of
    runs, or one run. A run is a path, glob or URL, a list/tuple of shard files (inside a list or
    mapping), bytes, a DataFrame, a parsed Run or a {qid: {docno: score}} dict."""
    if isinstance(runs, Mapping) and not _is_ranx_dict(runs):
        return [(str(k), v) for k, v in runs.items()]
    if isinstance(runs, (str, Path, bytes, bytearray, pd.DataFrame, pa.Table, io.Run)) or _is_ranx_dict(runs):
        return [(None, runs)]
    return [(None, r) for r in runs]


def _is_ranx_dict(value) -> bool:
    if not isinstance(value, Mapping) or not value:
        return False
    return isinstance(next(iter(value.values())), Mapping)


# --------------------------------------------------------------------------- reading input


@dataclass
class _Part:
    """One partition task: a whole file, or the lines starting in a byte range of a plain text file."""

    index: int
    file: int
    path: str
    source: str
    kind: str            # "text" | "parquet" | "whole" (headed CSV/JSON: io.read_run on the whole file)
    compression: str | None
    start: int = 0
    end: int | None = None
    size: int = 0        # bytes of input this part covers (for progress)


def _peek(fs: pafs.FileSystem, path: str, source: str) -> tuple[bytes, int]:
    try:
        info = fs.get_file_info(path)
    except (OSError, pa.ArrowException) as exc:
        raise MetricsError(f"cannot read {source!r}: {exc}", source=source, fix="check the path") from None
    if info.type == pafs.FileType.NotFound:
        raise MetricsError(f"no such file: {path!r}", source=source, fix="check the path")
    if info.type == pafs.FileType.Directory:
        raise MetricsError(f"{path!r} is a folder, not a file", source=source,
                           fix="give the run files inside it (a glob such as folder/*.txt)")
    with fs.open_input_file(path) as f:
        return f.read(65536), int(info.size)


def _text_stream(raw, compression: str | None):
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    if compression == "zstd":
        return pa.CompressedInputStream(raw, "zstd")
    return raw


def _first_data_line(head: bytes) -> bytes | None:
    m = re.search(rb"(?m)(?:^|(?<=\r))[ \t\f\v]*([^#\s][^\r\n]*)", head)
    return None if m is None else m.group(1).rstrip()


def _plan(files: list[str], range_bytes: int) -> list[_Part]:
    """Split the inputs into partition tasks: byte ranges of large plain text files, whole files otherwise."""
    parts: list[_Part] = []
    for file_index, path in enumerate(files):
        fs, inner = _filesystem(path)
        source = _display_name(path)
        head, size = _peek(fs, inner, source)
        compression = next((c for magic, c in _COMPRESSED.items() if head.startswith(magic)), None)
        text = head
        if compression is not None:
            try:
                with fs.open_input_file(inner) as raw:
                    text = _text_stream(raw, compression).read(65536)
            except (OSError, EOFError, zlib.error, lzma.LZMAError, pa.ArrowException, ValueError) as exc:
                raise MetricsError(f"cannot decompress the file ({exc})", source=source,
                                   fix="the file may be truncated or damaged; download or compress it again") \
                    from None
        if text[:4] == b"PAR1":
            kind = "parquet"
        else:
            first = _first_data_line(text[3:] if text[:3] == b"\xef\xbb\xbf" else text)
            whole = first is not None and (first[:1] in (b"{", b"[") or io._header(first) is not None)
            kind = "whole" if whole else "text"
        if kind == "text" and compression is None and size > range_bytes and b"\n" in head:
            n_ranges = -(-size // range_bytes)
            bounds = [size * i // n_ranges for i in range(n_ranges + 1)]
            for start, end in zip(bounds[:-1], bounds[1:]):
                parts.append(_Part(len(parts), file_index, path, source, kind, None, start, end, end - start))
        else:
            parts.append(_Part(len(parts), file_index, path, source, kind, compression, 0, None, size))
    return parts


def _pieces(stream, piece_bytes: int, limit: int | None):
    """Pieces of whole lines (each ends with \\n, but maybe the last). With ``limit``: only the lines
    starting before byte ``limit`` of the stream (the line crossing it is read to its end)."""
    pending = b""
    pos = 0
    while True:
        if limit is not None and pos >= limit:
            while pending:
                block = stream.read(1 << 16)
                if not block:
                    yield pending
                    return
                cut = block.find(b"\n")
                if cut >= 0:
                    yield pending + block[:cut + 1]
                    return
                pending += block
            return
        want = piece_bytes if limit is None else min(piece_bytes, limit - pos)
        block = stream.read(want)
        if not block:
            if pending:
                yield pending
            return
        pos += len(block)
        data = pending + block if pending else block
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            pending = data
            continue
        pending = data[cut:]
        yield data[:cut] if cut < len(data) else data


def _pieces_seekable(raw, piece_bytes: int, limit: int | None):
    """As :func:`_pieces` on a seekable file: the bytes after the last newline are read again with
    the next piece instead of being carried over (one copy fewer)."""
    pos = 0
    while limit is None or pos < limit:
        want = piece_bytes if limit is None else min(piece_bytes, limit - pos)
        block = raw.read(want)
        if not block:
            return
        if limit is not None and pos + len(block) >= limit:
            if not block.endswith(b"\n"):
                block += _rest_of_line(raw)          # the line crossing the limit is ours
            yield block
            return
        cut = block.rfind(b"\n") + 1
        if cut == 0:
            block += _rest_of_line(raw)              # a line longer than a piece
        elif cut < len(block):
            raw.seek(cut - len(block), 1)
            block = block[:cut]
        pos += len(block)
        yield block


def _rest_of_line(raw) -> bytes:
    rest = []
    while True:
        block = raw.read(1 << 16)
        if not block:
            break
        cut = block.find(b"\n")
        if cut >= 0:
            rest.append(block[:cut + 1])
            raw.seek(cut + 1 - len(block), 1)
            break
        rest.append(block)
    return b"".join(rest)


def _count_lines(piece: bytes) -> int:
    """Lines in a piece as io counts them (\\n, \\r\\n and a lone \\r end a line)."""
    ends = piece.count(b"\n") if b"\r" not in piece else len(io._line_ends(piece))
    return ends + (not piece.endswith((b"\n", b"\r")))


def _last_line(piece: bytes) -> bytes:
    end = len(piece) - 1 if piece.endswith(b"\n") else len(piece)
    return piece[piece.rfind(b"\n", 0, end) + 1:end]


def _last_data_line(piece: bytes) -> bytes | None:
    """The last line of ``piece`` that holds data (not blank, not a comment), without its line end."""
    end = len(piece)
    while end > 0:
        start = max(piece.rfind(b"\n", 0, end - 1), piece.rfind(b"\r", 0, end - 1)) + 1
        line = piece[start:end].rstrip(b"\r\n")
        stripped = line.strip(b" \t\f\v")
        if stripped and not stripped.startswith(b"#"):
            return line
        end = start
    return None


def _shifted(exc: MetricsError, lines: int) -> MetricsError:
    """The same error with its line moved by ``lines`` (a piece's offset in its file)."""
    line = None if exc.line is None else exc.line + lines
    return MetricsError(exc.problem, source=exc.source, line=line, fix=exc.fix)


@dataclass
class _PartResult:
    part: int
    lines: int = 0                    # lines (text) or rows (parquet) the part read
    rows: int = 0
    bucket_rows: dict = field(default_factory=dict)   # bucket -> rows written
    has_rank: bool = True
    error: tuple | None = None        # (problem, source, line, fix): a MetricsError, line relative to the part


class _Writers:
    """One parquet fragment per bucket for one part, opened on first use.

    Writing runs on a background thread, one piece behind the reader, so that parsing the next
    piece overlaps it (pyarrow releases the GIL); at most one piece waits, so memory stays bounded.
    """

    def __init__(self, out: str, part: int, n_buckets: int, row_group_rows: int):
        self.fs, self.root = _filesystem(out)
        self.part, self.n_buckets, self.row_group_rows = part, n_buckets, row_group_rows
        # Local buckets are read back at once: not compressing them is faster; remote ones travel.
        self.compression = "lz4" if _is_url(out) else "none"
        self.writers: dict[int, pq.ParquetWriter] = {}
        self.rows: dict[int, int] = {}
        self._pool = None
        self._pending = None

    def write(self, table: pa.Table) -> None:
        from concurrent.futures import ThreadPoolExecutor

        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ndcg-lab-writer")
        self._wait()
        self._pending = self._pool.submit(self._write, table)

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.result()

    def _write(self, table: pa.Table) -> None:
        bucket = bucket_of(table["qid"], self.n_buckets)
        order = np.argsort(bucket, kind="stable")
        counts = np.bincount(bucket, minlength=self.n_buckets)
        ordered = table.take(pa.array(order)) if len(order) else table
        start = 0
        for b in np.flatnonzero(counts):
            b = int(b)
            piece = ordered.slice(start, int(counts[b]))
            start += int(counts[b])
            if b not in self.writers:
                path = _join(self.root, "run", f"b{b:05d}", f"p{self.part:05d}.parquet")
                self.fs.create_dir(path.rsplit("/", 1)[0], recursive=True)
                self.writers[b] = pq.ParquetWriter(
                    path, FRAGMENT_SCHEMA, filesystem=self.fs, compression=self.compression,
                    use_dictionary=["qid"], write_statistics=False,
                    column_encoding={"rank": "DELTA_BINARY_PACKED", "line": "DELTA_BINARY_PACKED",
                                     "part": "DELTA_BINARY_PACKED"})
            self.writers[b].write_table(piece, row_group_size=self.row_group_rows)
            self.rows[b] = self.rows.get(b, 0) + piece.num_rows

    def close(self) -> None:
        try:
            self._wait()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
            for w in self.writers.values():
                w.close()


def _fragment(table: pa.Table, part: int, lines: np.ndarray) -> pa.Table:
    return pa.table({"qid": table["qid"], "docno": table["docno"], "score": table["score"],
                     "rank": table["rank"],
                     "part": pa.array(np.full(table.num_rows, part, dtype=np.int32)),
                     "line": pa.array(lines.astype(np.int64))}, schema=FRAGMENT_SCHEMA)


def _partition_part(part: _Part, out: str, n_buckets: int, piece_bytes: int, row_group_rows: int,
                    on_duplicate: str, on_bytes: Callable[[int], None] | None = None) -> _PartResult:
    """Partition task: read one part, validate it with metrics.io, append its rows to the bucket fragments.

    Errors come back as data (``_PartResult.error``) with the line relative to the part, since only
    the driver knows how many lines the parts before this one hold.
    """
    result = _PartResult(part.index)
    writers = _Writers(out, part.index, n_buckets, row_group_rows)
    try:
        fs, inner = _filesystem(part.path)
        if part.kind == "parquet":
            _partition_parquet(part, fs, inner, writers, result, on_bytes)
        elif part.kind == "whole":
            _partition_whole(part, fs, inner, writers, result, on_duplicate)
        else:
            _partition_text(part, fs, inner, writers, result, piece_bytes, on_bytes)
    except MetricsError as exc:
        result.error = (exc.problem, exc.source, exc.line, exc.fix)
    finally:
        writers.close()
    result.bucket_rows = writers.rows
    return result


def _partition_text(part: _Part, fs, inner: str, writers: _Writers, result: _PartResult, piece_bytes: int,
                    on_bytes) -> None:
    with fs.open_input_file(inner) as raw:
        start = part.start
        if start > 0:
            # A range owns the lines that start inside it: skip the one crossing its start.
            raw.seek(start - 1)
            while True:
                block = raw.read(1 << 16)
                cut = block.find(b"\n")
                if cut >= 0:
                    start += cut
                    break
                if not block:
                    return
                start += len(block)
            prefix = _previous_data_line(raw, start)
            raw.seek(start)
            if part.end is not None and start >= part.end:
                return
        else:
            prefix = None
        stream = _text_stream(raw, part.compression)
        limit = None if part.end is None else part.end - start
        before = 0            # lines of this part before the current piece
        last_pos = raw.tell() if part.compression else start
        first = part.start == 0
        try:
            pieces = _pieces(stream, piece_bytes, limit) if part.compression else \
                _pieces_seekable(raw, piece_bytes, limit)
            for piece in pieces:
                if first and piece[:3] == b"\xef\xbb\xbf":
                    piece = piece[3:]
                first = False
                table, lines = _parse_piece(piece, prefix, part.source, before)
                # A clean piece (one data line per line) needs no count: pyarrow gave one row per line.
                clean = table is not None and lines[-1] - before == table.num_rows and \
                    _last_data_line(piece) == _last_line(piece) and b"\r" not in piece
                n_lines = table.num_rows if clean else _count_lines(piece)
                if table is not None:
                    writers.write(_fragment(table, part.index, lines))
                    result.rows += table.num_rows
                    prefix = _last_data_line(piece)
                before += n_lines
                if on_bytes is not None:
                    pos = raw.tell()
                    on_bytes(pos - last_pos)
                    last_pos = pos
        except (OSError, EOFError, zlib.error, lzma.LZMAError, pa.ArrowException) as exc:
            if part.compression is None:
                raise MetricsError(f"cannot read the file ({exc})", source=part.source,
                                   fix="check the path and permissions") from None
            raise MetricsError(f"cannot decompress the file ({exc})", source=part.source,
                               fix="the file may be truncated or damaged; download or compress it again") from None
    result.lines = before
    if part.start == 0 and part.end is None and result.rows == 0:
        _no_data(part.source, before)


def _previous_data_line(raw, start: int) -> bytes | None:
    """The last data line before byte ``start`` (read backwards in small blocks)."""
    end = start
    while end > 0:
        begin = max(0, end - (1 << 16))
        raw.seek(begin)
        block = raw.read(end - begin)
        line = _last_data_line(block[block.find(b"\n") + 1:] if begin > 0 else block)
        if line is not None:
            return line
        end = begin + max(block.find(b"\n"), 0) if begin > 0 else 0
    return None


def _no_data(source: str, n_lines: int) -> None:
    if n_lines == 0:
        raise MetricsError("the file is empty", source=source, line=1,
                           fix=f"upload the run file itself ({' '.join(io.RUN.fields)} on each line)")
    raise MetricsError(f"no data lines: all {n_lines} lines are blank or comments (#)", source=source,
                       line=n_lines, fix=f"a run file has one line per document: {' '.join(io.RUN.fields)}")


def _parse_piece(piece: bytes, prefix: bytes | None, source: str, before: int):
    """Parse one piece of whole lines with metrics.io; rows and their original line numbers.

    ``prefix`` is the previous data line of the file. A bad piece is parsed again behind it, so
    that the message judges the piece's first line as a line inside the file (metrics.io words
    a bad first line of a file differently), exactly as reading the whole file would.
    """
    nul = piece.find(b"\x00")
    if nul >= 0:
        raise MetricsError("binary data (a NUL byte); this is not a text run file", source=source,
                           line=before + io._line_of_offset(piece, nul),
                           fix="give a plain-text TREC file (gzip, bz2, xz and zstd are unpacked automatically), "
                               "CSV/TSV, parquet or JSON")
    if not piece.isascii():
        try:
            io._check_text(piece, io.RUN, source)
        except MetricsError as exc:
            raise _shifted(exc, before) from None
    if _first_data_line(piece) is None:
        return None, None
    try:
        table, lines = _parse_lines(piece, source)
    except MetricsError as exc:
        if prefix is None:
            raise _shifted(exc, before) from None
        try:
            _parse_lines(prefix + b"\n" + piece, source)
        except MetricsError as exact:
            raise _shifted(exact, before - 1) from None
        raise _shifted(exc, before) from None    # pragma: no cover - the prefix is a good line
    return table, lines + before


def _parse_lines(data: bytes, source: str) -> tuple[pa.Table, np.ndarray]:
    """metrics.io's TREC parsing and checks on ``data``: the table and each row's 1-based line."""
    table, ctx = io._read_trec(data, io.RUN, source)
    io.finite_scores(table, ctx)
    mapping = ctx.lines
    lines = np.arange(mapping.offset, mapping.offset + table.num_rows, dtype=np.int64) if mapping.lines is None \
        else mapping(np.arange(table.num_rows))
    return table, lines


def _partition_parquet(part: _Part, fs, inner: str, writers: _Writers, result: _PartResult, on_bytes) -> None:
    with fs.open_input_file(inner) as raw:
        try:
            reader = pq.ParquetFile(raw)
        except (pa.ArrowException, OSError) as exc:
            raise MetricsError(f"cannot read the parquet file ({exc})", source=part.source,
                               fix="the file may be truncated; write it again") from None
        names = reader.schema_arrow.names
        picked = {role: io._pick(names, role) for role in ("qid", "docno", "score")}
        lacking = [role for role, col in picked.items() if col is None]
        if lacking:
            options = "; ".join(f"{role}: {' / '.join(io.ALIASES[role])}" for role in lacking)
            raise MetricsError(f"no {' or '.join(lacking)} column among {', '.join(map(str, names))}",
                               source=part.source, fix=f"name the columns ({options})")
        rank_col = io._pick(names, "rank")
        result.has_rank = rank_col is not None
        columns = [c for c in (picked["qid"], picked["docno"], picked["score"], rank_col) if c is not None]
        done = 0
        groups = max(reader.metadata.num_row_groups, 1)
        for i, batch in enumerate(reader.iter_batches(batch_size=1 << 20, columns=columns)):
            table = pa.Table.from_batches([batch])
            try:
                table = _validate_rows(table, picked, rank_col, part.source)
            except MetricsError as exc:
                raise _shift_rows(exc, done) from None
            writers.write(_fragment(table, part.index, np.arange(done + 1, done + table.num_rows + 1)))
            done += table.num_rows
            if on_bytes is not None:
                on_bytes(part.size * min(i + 1, groups) // groups - part.size * min(i, groups) // groups)
        result.rows = result.lines = done
        if done == 0:
            raise MetricsError("no documents in the run", source=part.source,
                               fix=f"give lines like: {' '.join(io.RUN.fields)}")


def _validate_rows(table: pa.Table, picked: dict, rank_col: str | None, source: str) -> pa.Table:
    """Columns of an in-memory batch mapped and checked as metrics.io does for parquet and frames."""
    ctx = io._Source(source)
    qid = io._string_column(table[picked["qid"]], "qid", ctx)
    docno = io._string_column(table[picked["docno"]], "docno", ctx)
    ctx = dataclasses.replace(ctx, keys=(io._as_array(qid), io._as_array(docno)))
    score = io._numeric_column(table[picked["score"]], "score", ctx, io._cast_scores)
    io.finite_scores(score, ctx)
    if rank_col is not None:
        rank = io._numeric_column(table[rank_col], "rank", ctx, io._cast_ranks)
    else:
        rank = pa.array(np.zeros(table.num_rows, dtype=np.int64))
    return pa.table({"qid": qid, "docno": docno, "score": pc.cast(score, pa.float64()),
                     "rank": pc.cast(rank, pa.int64())})


def _shift_rows(exc: MetricsError, rows: int) -> MetricsError:
    """Row numbers in a batch's message ("row 3 (query ...)") moved to the file's numbering."""
    problem = re.sub(r"^row (\d+)", lambda m: f"row {int(m.group(1)) + rows}", exc.problem)
    return MetricsError(problem, source=exc.source, line=exc.line, fix=exc.fix)


def _partition_whole(part: _Part, fs, inner: str, writers: _Writers, result: _PartResult,
                     on_duplicate: str) -> None:
    """Headed CSV/TSV or JSON text: parsed whole by metrics.io (these formats are not streamed)."""
    with fs.open_input_file(inner) as raw:
        data = raw.read()
    run = io.read_run(data, source=part.source, on_duplicate=on_duplicate)
    rows = np.arange(len(run))
    lines = run.line_of(rows)
    writers.write(_fragment(run.table, part.index, rows + 1 if lines is None else lines))
    result.rows = result.lines = len(run)


# --------------------------------------------------------------------------- partitions


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
        return [_join(self.path, "run", f"b{bucket:05d}", f"p{p:05d}.parquet") for p in self.bucket_parts[bucket]]

    def qrels_file(self, bucket: int, proxy: bool = False) -> str:
        return _join(self.path, "proxy" if proxy else "qrels", f"b{bucket:05d}.parquet")

    def to_json(self) -> str:
        data = dataclasses.asdict(self)
        data.pop("path")
        return json.dumps(data, indent=1)

    @classmethod
    def open(cls, path) -> "Partition":
        """Read the manifest of a partition directory (written last, so its presence means complete)."""
        path = str(path)
        fs, inner = _filesystem(path)
        try:
            with fs.open_input_stream(_join(inner, MANIFEST)) as f:
                data = json.loads(f.read())
        except (FileNotFoundError, OSError, pa.ArrowException):
            raise MetricsError(f"{path!r} is not a complete partition (no {MANIFEST})",
                               fix="partition the run again with metrics.scale.partition") from None
        if data.get("version") != FORMAT_VERSION:
            raise MetricsError(f"{path!r} was written by another version of nDCG Lab",
                               fix="partition the run again")
        return cls(path=path if _is_url(path) else inner, **data)


def _bucket_qrels(qrels: io.Qrels, n_buckets: int, out: str, folder: str) -> None:
    fs, root = _filesystem(out)
    fs.create_dir(_join(root, folder), recursive=True)
    table = qrels.table
    bucket = bucket_of(table["qid"], n_buckets) if table.num_rows else np.zeros(0, dtype=np.int32)
    order = np.argsort(bucket, kind="stable")
    counts = np.bincount(bucket, minlength=n_buckets)
    ordered = table.take(pa.array(order)) if len(order) else table
    start = 0
    for b in range(n_buckets):
        pq.write_table(ordered.slice(start, int(counts[b])), _join(root, folder, f"b{b:05d}.parquet"),
                       filesystem=fs, compression="lz4")
        start += int(counts[b])


def _read_qrels(qrels, what: str = "qrels") -> io.Qrels:
    if isinstance(qrels, (str, Path)) and _is_url(str(qrels)):
        fs, inner = _filesystem(str(qrels))
        with fs.open_input_stream(inner) as f:
            return io.read_qrels(f.read(), name=io._stem(_display_name(str(qrels))), source=_display_name(str(qrels)))
    return io.read_qrels(qrels)


def partition(run, qrels, out=None, *, n_buckets: int | None = None, name: str | None = None, inferred=None,
              on_duplicate: str = "error", piece_bytes: int = PIECE_BYTES, range_bytes: int = RANGE_BYTES,
              row_group_rows: int = ROW_GROUP_ROWS, progress: Progress | None = None,
              client=None) -> Partition:
    """Split one run (a file, glob, URL or list of shard files) and its qrels into ``n_buckets``
    buckets by ``crc32(qid) mod n_buckets``, as parquet under ``out`` (a path or fsspec URL;
    default: a new temporary folder).

    Memory stays bounded by ``piece_bytes`` of text at a time. With a Dask ``client`` the parts are
    partitioned on its workers (inputs and ``out`` must then be visible to them). The folder is
    written under a temporary name and renamed to ``out`` only on success; an earlier partition
    at ``out`` is replaced.
    """
    files = expand(run)
    name = name or _shard_name(run if isinstance(run, (list, tuple)) else str(run))
    qrels = _read_qrels(qrels)
    proxy = _read_qrels(inferred) if inferred is not None else None
    workers = _n_workers(client)
    if workers > 1:
        # Enough parts for every worker: cut plain text into ranges of at least 64 MB.
        range_bytes = min(range_bytes, max(MIN_RANGE_BYTES, _plain_bytes(files) // (2 * workers) + 1))
    parts = _plan(files, range_bytes)
    total_bytes = sum(p.size for p in parts)
    if n_buckets is None:
        n_buckets = max(default_buckets(sum(p.size * (4 if p.compression else 1) for p in parts)), 2 * workers)
    if int(n_buckets) < 1:
        raise MetricsError(f"buckets must be a whole number >= 1, got {n_buckets!r}", fix="for example 16")
    n_buckets = int(n_buckets)
    if out is None:
        out = tempfile.mkdtemp(prefix="ndcg-lab-partition-")
        os.rmdir(out)
    out = str(out)
    fs, root = _filesystem(out)
    final = out if _is_url(out) else root
    tmp = f"{final.rstrip('/')}.partial-{uuid.uuid4().hex[:8]}"
    _, tmp_root = _filesystem(tmp)
    fs.create_dir(tmp_root, recursive=True)
    report = progress or (lambda done, total, message: None)
    try:
        results = _run_parts(parts, tmp, n_buckets, piece_bytes, row_group_rows, on_duplicate, report,
                             total_bytes, client)
        offsets = _line_offsets(parts, results)
        bucket_rows = [0] * n_buckets
        bucket_parts: list[list[int]] = [[] for _ in range(n_buckets)]
        for r in results:
            for b, rows in sorted(r.bucket_rows.items()):
                bucket_rows[b] += rows
                bucket_parts[b].append(r.part)
        if sum(bucket_rows) == 0:
            raise MetricsError("no documents in the run", source=parts[0].source if parts else None,
                               fix=f"give lines like: {' '.join(io.RUN.fields)}")
        _bucket_qrels(qrels, n_buckets, tmp, "qrels")
        if proxy is not None:
            _bucket_qrels(proxy, n_buckets, tmp, "proxy")
        result = Partition(
            path=final, name=name, n_buckets=n_buckets, sources=[_display_name(f) for f in files],
            parts=[{"file": p.file, "kind": p.kind, "start": p.start, "first_line": int(offsets[i]),
                    "has_rank": results[i].has_rank, "rows": results[i].rows} for i, p in enumerate(parts)],
            bucket_rows=bucket_rows, bucket_parts=bucket_parts, qrels_source=qrels.source,
            qrels_digest=qrels.digest, proxy=proxy is not None)
        with fs.open_output_stream(_join(tmp_root, MANIFEST)) as f:
            f.write(result.to_json().encode())
        _replace(fs, tmp_root, root)
    except BaseException:
        _remove(fs, tmp_root)
        raise
    return result


def _n_workers(client) -> int:
    if client is None:
        return 1
    try:
        return max(1, len(client.scheduler_info().get("workers", {})))
    except Exception:  # noqa: BLE001 - a client that cannot tell: assume one worker
        return 1


def _plain_bytes(files: list[str]) -> int:
    total = 0
    for path in files:
        fs, inner = _filesystem(path)
        try:
            total += int(fs.get_file_info(inner).size or 0)
        except (OSError, pa.ArrowException):
            pass
    return total


def _run_parts(parts, tmp, n_buckets, piece_bytes, row_group_rows, on_duplicate, report, total_bytes,
               client) -> list[_PartResult]:
    """All partition tasks, here or on Dask; errors are raised in file order (the first bad line wins)."""
    done_bytes = 0
    results: list[_PartResult] = []
    report(0, total_bytes, "partitioning")

    def first_error(result: _PartResult, earlier: list[_PartResult]) -> MetricsError:
        problem, source, line, fix = result.error
        if line is not None:
            part = parts[result.part]
            line += sum(r.lines for r in earlier if parts[r.part].file == part.file)
        return MetricsError(problem, source=source, line=line, fix=fix)

    if client is None:
        for part in parts:
            def on_bytes(n, part=part):
                nonlocal done_bytes
                done_bytes += n
                report(min(done_bytes, total_bytes), total_bytes, f"partitioning {part.source}")
            started = done_bytes
            result = _partition_part(part, tmp, n_buckets, piece_bytes, row_group_rows, on_duplicate, on_bytes)
            if result.error is not None:
                raise first_error(result, results)
            done_bytes = started + part.size
            results.append(result)
            report(done_bytes, total_bytes, f"partitioned {part.source}")
        return results
    from dask.distributed import as_completed
    futures = client.map(_partition_part, parts, out=tmp, n_buckets=n_buckets, piece_bytes=piece_bytes,
                         row_group_rows=row_group_rows, on_duplicate=on_duplicate, pure=False)
    by_index = {f.key: i for i, f in enumerate(futures)}
    finished: dict[int, _PartResult] = {}
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
        for future in futures:
            future.cancel()
    for i in range(len(parts)):
        if i not in finished:
            break
        if finished[i].error is not None:
            raise first_error(finished[i], [finished[j] for j in range(i)])
        results.append(finished[i])
    return results


def _line_offsets(parts: list[_Part], results: list[_PartResult]) -> np.ndarray:
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
                fs.get_file_info(_join(final, MANIFEST)).type == pafs.FileType.NotFound
                and fs.get_file_info(pafs.FileSelector(final)) != []):
            raise MetricsError(f"{final!r} exists and is not a partition folder", source=None,
                               fix="give a new or empty folder for the buckets")
        old = f"{final}.old-{uuid.uuid4().hex[:8]}"
        fs.move(final, old)
    fs.move(tmp, final)
    if old is not None:
        _remove(fs, old)


def _remove(fs: pafs.FileSystem, path: str) -> None:
    try:
        if fs.get_file_info(path).type != pafs.FileType.NotFound:
            fs.delete_dir(path)
    except (OSError, pa.ArrowException):
        pass


# --------------------------------------------------------------------------- evaluating buckets


@dataclass(frozen=True)
class _BucketTask:
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


def _read_parquet_whole(files, fs) -> pa.Table:
    """All row groups of every fragment, in order (never a row group alone: queries straddle them)."""
    tables = [pq.read_table(f, filesystem=fs) for f in files]
    return pa.concat_tables(tables) if tables else FRAGMENT_SCHEMA.empty_table()


def _evaluate_bucket(task: _BucketTask) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    """Evaluation task: one bucket, whole; (qids, {measure: values}, rows) with the metrics kernels."""
    return _score_bucket(task, _load_bucket(task))


def _load_bucket(task: _BucketTask) -> tuple[pa.Table, pa.Table, pa.Table | None]:
    """The bucket's run rows (every fragment, every row group), its qrels and its proxy qrels."""
    fs, _ = _filesystem(task.path)
    table = _read_parquet_whole([_filesystem(f)[1] for f in task.files], fs)
    qrels_table = pq.read_table(_filesystem(task.qrels_file)[1], filesystem=fs)
    proxy_table = None if task.proxy_file is None else \
        pq.read_table(_filesystem(task.proxy_file)[1], filesystem=fs)
    return table, qrels_table, proxy_table


def _score_bucket(task: _BucketTask, tables) -> tuple[np.ndarray, dict[str, np.ndarray], int]:
    from .evaluate import evaluate_ranked
    from .ranking import rank

    table, qrels_table, proxy_table = tables
    options = dict(task.options)
    for what, t in (("run", table), ("qrels", qrels_table)):
        if t.num_rows:
            queries = pc.unique(t["qid"])
            wrong = bucket_of(queries, task.n_buckets) != task.bucket
            if wrong.any():
                raise MetricsError(f"bucket {task.bucket} of {task.path!r} holds {what} query "
                                   f"{queries[int(np.flatnonzero(wrong)[0])].as_py()!r} of another bucket",
                                   fix="the partition is damaged or was written with another hash; partition again")
    keep = _duplicates(table, task, options["on_duplicate"])
    if keep is not None:
        table = table.filter(pa.array(keep))
    run = io.Run(table.select(["qid", "docno", "score", "rank"]), task.name, ", ".join(task.sources), "", [])
    qrels = io.Qrels(qrels_table, "qrels", "qrels", "", [])
    proxy = None if proxy_table is None else io.Qrels(proxy_table, "proxy", "proxy", "", [])
    ranked = rank(run, qrels, missing=options["missing"], ties=options["ties"], max_depth=options["max_depth"],
                  inferred=proxy, name=task.name)
    if options["judged_only"]:
        ranked = ranked.condensed()
    values = evaluate_ranked(ranked, list(task.measures), rel_level=options["rel_level"])
    return ranked.qids, values, table.num_rows


def _duplicates(table: pa.Table, task: _BucketTask, on_duplicate: str) -> np.ndarray | None:
    """A docno twice in one query (within or across files): an error naming both lines, or rows to keep."""
    if table.num_rows < 2:
        return None
    qid, docno = io._as_array(table["qid"]), io._as_array(table["docno"])
    qcode, _ = io._encode(qid)
    found = io._exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    if on_duplicate == "error":
        part = table["part"].to_numpy()
        line = table["line"].to_numpy()

        def where(row: int) -> tuple[str, int, str]:
            p = int(part[row])
            word = "row" if task.part_kinds[p] == "parquet" else "line"
            number = int(line[row]) + task.part_first_line[p]
            return task.sources[task.part_files[p]], number, word

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


def _tasks(part: Partition, measures, options: dict) -> list[_BucketTask]:
    return [_BucketTask(
        path=part.path, bucket=b, n_buckets=part.n_buckets, files=tuple(part.run_files(b)),
        qrels_file=part.qrels_file(b), proxy_file=part.qrels_file(b, proxy=True) if part.proxy else None,
        sources=tuple(part.sources), part_files=tuple(p["file"] for p in part.parts),
        part_first_line=tuple(p["first_line"] for p in part.parts),
        part_kinds=tuple(p["kind"] for p in part.parts), name=part.name, measures=tuple(measures),
        options=tuple(sorted(options.items()))) for b in range(part.n_buckets)]


def evaluate_partition(part: Partition | str, measures, *, engine: str = "streaming", client=None,
                       missing: str = "zero", judged_only: bool = False, max_depth: int | None = None,
                       rel_level: int = 1, ties: str = "score", on_duplicate: str = "error",
                       progress: Progress | None = None, name: str | None = None) -> pd.DataFrame:
    """Evaluate a partitioned run bucket by bucket: the tidy frame of :func:`metrics.evaluate`.

    ``engine="streaming"``: one bucket at a time in this process (peak memory ~ one bucket);
    ``engine="dask"``: buckets mapped over ``client`` (a ``dask.distributed.Client``).
    """
    from .evaluate import _measure_list
    from .measures import parse

    part = part if isinstance(part, Partition) else Partition.open(part)
    if missing not in ("zero", "skip"):
        raise MetricsError(f"missing={missing!r} is not an option", fix="use missing='zero' or missing='skip'")
    if ties not in ("score", "rank"):
        raise MetricsError(f"ties={ties!r} is not an option", fix="use ties='score' or ties='rank'")
    if ties == "rank" and not part.has_rank:
        ties = "score"   # ranks were computed from the scores (metrics.io's rule): the same order
    names = list(dict.fromkeys(str(parse(m)) for m in _measure_list(measures)))
    options = {"missing": missing, "judged_only": bool(judged_only), "max_depth": max_depth,
               "rel_level": int(rel_level), "ties": ties, "on_duplicate": on_duplicate}
    tasks = _tasks(part, names, options)
    system = name or part.name
    report = progress or (lambda done, total, message: None)
    total = len(tasks)
    report(0, total, f"evaluating {system}: {total} buckets")
    results: dict[int, tuple] = {}
    close = None
    if engine == "dask" and client is None:
        client, close = _client(None, None)
    try:
        _score_buckets(tasks, engine, client, results, report, system)
    finally:
        if close is not None:
            close()
    return _assemble(system, [results[b] for b in range(total)], names)


def _score_buckets(tasks: list[_BucketTask], engine: str, client, results: dict, report, system: str) -> None:
    """Run the bucket tasks here or on Dask; on errors, raise the first bad bucket's (as streaming would)."""
    total = len(tasks)
    if engine == "streaming" or client is None:
        from concurrent.futures import ThreadPoolExecutor

        # The next bucket is read (parquet, GIL released) while this one is scored: two buckets' raw
        # rows at most, one bucket's working arrays.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ndcg-lab-reader") as pool:
            loading = pool.submit(_load_bucket, tasks[0]) if tasks else None
            for i, task in enumerate(tasks):
                tables = loading.result()
                loading = pool.submit(_load_bucket, tasks[i + 1]) if i + 1 < total else None
                results[task.bucket] = _score_bucket(task, tables)
                del tables
                report(len(results), total, f"evaluated bucket {task.bucket + 1} of {total} of {system} "
                                            f"({results[task.bucket][2]:,} lines)")
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
    from .evaluate import tidy

    qids = np.concatenate([r[0] for r in results]) if results else np.array([], dtype=object)
    values = {m: np.concatenate([r[1][m] for r in results]) if results else np.array([]) for m in names}
    if len(qids):
        order = pc.sort_indices(pa.array(qids.astype(object), pa.string())).to_numpy()
        qids = qids[order]
        if len(np.unique(qids)) != len(qids):
            raise MetricsError("a query was scored in two buckets",
                               fix="the partition is damaged (a query split across buckets); partition again")
        values = {m: v[order] for m, v in values.items()}
    return tidy(system, qids, values, names)


def read_bucket(part: Partition | str, bucket: int) -> pa.Table:
    """One bucket's run rows (qid, docno, score, rank, part, line), all fragments whole, in input order."""
    part = part if isinstance(part, Partition) else Partition.open(part)
    fs, _ = _filesystem(part.path)
    return _read_parquet_whole([_filesystem(f)[1] for f in part.run_files(bucket)], fs)


def to_dask(part: Partition | str):
    """The partitioned run as a Dask DataFrame with exactly one partition per bucket.

    Built with ``dd.from_map`` over bucket numbers, so a partition is a whole bucket (all its
    fragments and row groups): a query never straddles two partitions, unlike
    ``dd.read_parquet`` on the folder, which may split files by row group.
    """
    import dask.dataframe as dd

    part = part if isinstance(part, Partition) else Partition.open(part)
    meta = FRAGMENT_SCHEMA.empty_table().to_pandas()
    return dd.from_map(_bucket_frame, range(part.n_buckets), part=part, meta=meta,
                       divisions=[None] * (part.n_buckets + 1), enforce_metadata=False)


def _bucket_frame(bucket: int, part: Partition) -> pd.DataFrame:
    return read_bucket(part, bucket).to_pandas()


# --------------------------------------------------------------------------- engines behind metrics.evaluate


def read_run_files(files, *, name: str | None = None, on_duplicate: str = "error") -> io.Run:
    """One run from several files (shards) in memory, for the local engine: each file read by
    metrics.io, then duplicates across files checked with file and line."""
    paths = expand(files)
    name = name or _shard_name(files if isinstance(files, (list, tuple)) else str(files))
    runs = []
    for path in paths:
        if _is_url(path):
            fs, inner = _filesystem(path)
            with fs.open_input_stream(inner) as f:
                runs.append(io.read_run(f.read(), name=name, source=_display_name(path), on_duplicate=on_duplicate))
        else:
            runs.append(io.read_run(path, name=name, on_duplicate=on_duplicate))
    if len(runs) == 1:
        return runs[0]
    table = pa.concat_tables([pa.table({
        "qid": r.table["qid"], "docno": r.table["docno"], "score": r.table["score"], "rank": r.table["rank"],
        "tag": r.table["tag"], "part": pa.array(np.full(len(r), i, dtype=np.int32)),
        "line": pa.array(r.line_of(np.arange(len(r))) if r.line_of([0]) is not None
                         else np.arange(1, len(r) + 1))}) for i, r in enumerate(runs)])
    task = _BucketTask(path="", bucket=0, n_buckets=1, files=(), qrels_file="", proxy_file=None,
                       sources=tuple(r.source for r in runs), part_files=tuple(range(len(runs))),
                       part_first_line=(0,) * len(runs),
                       part_kinds=tuple("text" if r.line_of([0]) is not None else "parquet" for r in runs),
                       name=name, measures=(), options=())
    keep = _duplicates(table, task, on_duplicate)
    if keep is not None:
        table = table.filter(pa.array(keep))
    findings = [f for r in runs for f in r.findings]
    digest = io.hashlib.sha256("".join(r.digest for r in runs).encode()).hexdigest()
    return io.Run(table.select(["qid", "docno", "score", "rank", "tag"]), name,
                  ", ".join(r.source for r in runs), digest, findings)


def local_runs(runs, *, on_duplicate: str = "error"):
    """``runs`` with every multi-file run (glob, URL, list of shards) read into one :class:`metrics.io.Run`;
    ``runs`` unchanged when it has none."""
    specs = run_specs(runs)
    if not any(_is_shards(spec) for _, spec in specs):
        return runs
    return [read_run_files(spec, name=name, on_duplicate=on_duplicate) if _is_shards(spec)
            else io.read_run(spec, name=name, on_duplicate=on_duplicate) for name, spec in specs]


def _client(scheduler: str | None, workers: int | None):
    """(client, cleanup): a Client of the cluster at ``scheduler``, or of a LocalCluster started here."""
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover
        raise MetricsError("the dask engine needs dask.distributed", fix="pip install 'dask[distributed]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="20s")
        except (OSError, TimeoutError) as exc:
            raise MetricsError(f"cannot reach the Dask scheduler at {scheduler} ({exc})",
                               fix="start it with `dask scheduler` and check the address (tcp://HOST:8786)") \
                from None
        return client, client.close
    cluster = local_cluster(workers or min(os.cpu_count() or 1, 4))
    client = Client(cluster)

    def close():
        client.close()
        cluster.close()
    return client, close


def local_cluster(n_workers: int, **options):
    """A ``LocalCluster`` of ``n_workers`` processes with one thread each, safe to start from any program.

    Worker processes are spawned, and a spawned process first runs the parent's ``__main__``
    script again: a Streamlit page or a test that ran one (AppTest leaves ``__main__`` set to
    the app) would start the app in every worker. Workers only need ``metrics``, so the
    cluster is started with a bare ``__main__``.
    """
    import types

    from dask.distributed import LocalCluster

    main = sys.modules.get("__main__")
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        return LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                            dashboard_address=None, **options)
    finally:
        if main is not None:
            sys.modules["__main__"] = main


def _is_local_address(scheduler: str) -> bool:
    host = re.sub(r"^\w+://", "", scheduler).rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.startswith("127.") or \
        host == os.uname().nodename


def evaluate(qrels, runs, measures, *, engine: str = "streaming", buckets: int | None = None,
             scheduler: str | None = None, workers: int | None = None, workdir=None,
             missing: str = "zero", judged_only: bool = False, inferred=None, max_depth: int | None = None,
             rel_level: int = 1, ties: str = "score", on_duplicate: str = "error",
             progress: Progress | None = None, piece_bytes: int = PIECE_BYTES, range_bytes: int = RANGE_BYTES,
             row_group_rows: int = ROW_GROUP_ROWS) -> pd.DataFrame:
    """``metrics.evaluate`` with ``engine="streaming"`` or ``"dask"``: partition each run, then evaluate
    its buckets. Inputs that are not files (DataFrames, parsed Runs, dicts) are written as parquet first.

    ``workdir`` holds the buckets (default: a temporary folder, removed afterwards; a remote Dask
    cluster needs a folder or URL its workers can read).
    """
    from .measures import parse
    from .evaluate import _measure_list

    if engine not in ("streaming", "dask"):
        raise MetricsError(f"engine={engine!r} is not an option", fix="use local, streaming or dask")
    if on_duplicate not in ("error", "first"):
        raise MetricsError(f"on_duplicate={on_duplicate!r} is not an option",
                           fix="use on_duplicate='error' or on_duplicate='first'")
    names = [str(parse(m)) for m in _measure_list(measures)]
    if engine == "dask" and scheduler and workdir is None and not _is_local_address(scheduler):
        raise MetricsError(f"the Dask cluster at {scheduler} cannot read this machine's temporary folder",
                           fix="give workdir= (--workdir) on storage every worker reads: a shared folder or "
                               "an fsspec URL such as s3://bucket/ndcg-lab")
    own_workdir = workdir is None
    base = tempfile.mkdtemp(prefix="ndcg-lab-") if own_workdir else str(workdir)
    client, close = (None, lambda: None)
    frames = []
    try:
        if engine == "dask":
            client, close = _client(scheduler, workers)
        for i, (given_name, spec) in enumerate(run_specs(runs)):
            if not _is_shards(spec) and not (isinstance(spec, (str, Path))):
                spec, given_name = _spill(spec, given_name, base, i, on_duplicate)
            system = given_name or _shard_name(spec if isinstance(spec, (list, tuple)) else str(spec))
            out = _join(base, f"run-{i:03d}-{uuid.uuid4().hex[:6]}")
            part = partition(spec, qrels, out, n_buckets=buckets, name=system, inferred=inferred,
                             on_duplicate=on_duplicate, piece_bytes=piece_bytes, range_bytes=range_bytes,
                             row_group_rows=row_group_rows, progress=progress, client=client)
            try:
                frames.append(evaluate_partition(part, names, engine=engine, client=client, missing=missing,
                                                 judged_only=judged_only, max_depth=max_depth,
                                                 rel_level=rel_level, ties=ties, on_duplicate=on_duplicate,
                                                 progress=progress))
            finally:
                fs, root = _filesystem(out)
                _remove(fs, root)
    finally:
        close()
        if own_workdir:
            shutil.rmtree(base, ignore_errors=True)
    frames = _unique_systems(frames)
    from .evaluate import tidy
    return pd.concat(frames, ignore_index=True) if frames else tidy("", np.array([]), {}, [])


def _spill(spec, name, base: str, i: int, on_duplicate: str):
    """An in-memory run (DataFrame, Run, dict, bytes) written as parquet so that it can be partitioned."""
    run = io.read_run(spec, name=name, on_duplicate=on_duplicate)
    path = os.path.join(base, f"input-{i:03d}.parquet") if not _is_url(base) else _join(base, f"input-{i:03d}.parquet")
    fs, inner = _filesystem(path)
    pq.write_table(run.table.select(["qid", "docno", "score", "rank"]), inner, filesystem=fs)
    return path, name or run.name


def _unique_systems(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """Same names get #1, #2 suffixes, as metrics.evaluate.as_runs does."""
    names = [str(f["system"].iloc[0]) if len(f) else "" for f in frames]
    counts: dict[str, int] = {}
    out = []
    for f, n in zip(frames, names):
        if names.count(n) > 1:
            counts[n] = counts.get(n, 0) + 1
            f = f.assign(system=pd.Series([f"{n}#{counts[n]}"] * len(f), dtype="string"))
        out.append(f)
    return out


# --------------------------------------------------------------------------- progress on a terminal


def terminal_progress(stream=None, *, min_interval: float = 0.5) -> Progress:
    """A progress callback that writes one line per step to ``stream`` (stderr), throttled."""
    stream = stream or sys.stderr
    last = {"t": 0.0, "message": None}
    tty = hasattr(stream, "isatty") and stream.isatty()

    def report(done: int, total: int, message: str) -> None:
        now = time.monotonic()
        final = done >= total
        if not final and now - last["t"] < min_interval:
            return
        last["t"] = now
        if message.startswith("partition") and total:
            text = f"{message}: {100 * done / total:5.1f}% ({_size(done)} of {_size(total)})"
        else:
            text = f"{message} [{done}/{total}]"
        if tty:
            stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            stream.write(text + "\n")
        stream.flush()
    return report


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if n >= scale:
            return f"{n / scale:,.1f} {unit}"
    return f"{n} B"
