"""The bucket of a query: ``crc32(utf-8 qid) mod N`` (zlib's CRC-32, never Python's salted ``hash``).

Every query lands whole in one bucket and the qrels are bucketed the same way, so each bucket
is a complete small evaluation. Also the size rules: how many buckets an input gets, the run
size above which ``metrics.evaluate`` and the dashboard stream (:func:`choose_engine`).
"""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError
from ..evaluation import run_specs
from ..io.paths import expand, filesystem, is_url
from ..io.sniff import compression_of
from ..ordering import run_heads

HASH = "crc32(utf-8 qid) mod N"


BUCKET_BYTES = 192 << 20        # default bucket size, in bytes of TREC text (~5M lines)


COMPRESSED_RATIO = 4            # a compressed run is counted as this many times its size in text


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


def bucket_order(qids, n_buckets: int) -> tuple[np.ndarray, np.ndarray | None]:
    """(rows of every bucket, the rows' stable order by bucket or None when they are in it already)
    of one piece of a run: ``np.argsort(bucket_of(qids, n_buckets), kind="stable")``, found from
    the runs of equal qids (a run file comes query by query): only the first row of each run is
    hashed, the runs are sorted, and the order is spelt out from them."""
    if isinstance(qids, pa.ChunkedArray):
        qids = qids.combine_chunks() if qids.num_chunks != 1 else qids.chunk(0)
    n = len(qids)
    if n == 0:
        return np.zeros(n_buckets, dtype=np.int64), None
    heads, lengths = run_heads(qids)
    head_buckets = bucket_of(qids.take(pa.array(heads)), n_buckets)
    counts = np.bincount(head_buckets, weights=lengths, minlength=n_buckets).astype(np.int64)
    if np.all(head_buckets[1:] >= head_buckets[:-1]):
        return counts, None
    by_bucket = np.argsort(head_buckets, kind="stable")
    moved = lengths[by_bucket]
    order = np.repeat(heads[by_bucket] - (np.cumsum(moved) - moved), moved)
    order += np.arange(n, dtype=np.int64)
    return counts, order


def default_buckets(total_bytes: int, bucket_bytes: int = BUCKET_BYTES, workers: int = 1) -> int:
    """Buckets for an input of ``total_bytes`` (text): about ``bucket_bytes`` each, at least two per
    worker, and a multiple of ``workers`` so that the last round of buckets keeps every worker busy."""
    workers = max(1, int(workers))
    n = max(-(-int(total_bytes) // int(bucket_bytes)), 2 * workers if workers > 1 else 1)
    return -(-n // workers) * workers


MAX_THREADS = 4


def local_threads() -> int:
    """Threads of the streaming engine: one per core this process may use, at most ``MAX_THREADS``
    (each scores a bucket at a time, so memory grows with them)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_THREADS))


def streaming_threshold() -> int:
    """Run size in bytes of text above which the default engine and the dashboard stream: env
    NDCG_LAB_STREAMING_BYTES, else RAM / 16 (the local engine holds ~3.5 bytes per byte of text,
    so a run at the threshold takes about a quarter of the memory)."""
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


def run_bytes(runs, *, allowed=None) -> int:
    """Bytes of text of the runs given as files (paths, globs, shard lists, URLs), from their sizes and
    first bytes only: a compressed file counts ``COMPRESSED_RATIO`` times its size. Runs already in
    memory (frames, parsed runs, dicts, bytes) count 0: streaming them would not save memory."""
    total = 0
    for _, spec in run_specs(runs):
        if not isinstance(spec, (str, os.PathLike)) and not (
                isinstance(spec, (list, tuple)) and spec and all(isinstance(x, (str, os.PathLike)) for x in spec)):
            continue
        for path in expand(spec, allowed=allowed):
            size, head = _size_and_head(path)
            total += size * (COMPRESSED_RATIO if compression_of(head) is not None else 1)
    return total


def _size_and_head(path: str) -> tuple[int, bytes]:
    """The size and first 6 bytes of a file: a local one with the os module (no pyarrow.fs import on
    a command's start-up path), a URL through its filesystem."""
    if not is_url(path):
        with open(os.path.expanduser(path.removeprefix("file://")), "rb") as f:
            return os.fstat(f.fileno()).st_size, f.read(6)
    fs, inner = filesystem(path)
    with fs.open_input_file(inner) as f:
        return f.size(), f.read(6)


ENGINES: dict[str, str] = {
    "local": "in memory",
    "streaming": "the run split into buckets by query, scored one bucket at a time in this process",
    "dask": "the buckets mapped over a Dask cluster",
}
"""The engines of ``metrics.evaluate(engine=...)`` and ``ndcg-lab eval --engine``, in the order they
are offered: the one registry the dispatcher (:func:`metrics.engines.evaluate`), the streaming
engine and the command line read. Every engine but ``local`` partitions the runs
(:data:`PARTITIONED`) and runs in :mod:`metrics.engines.streaming`."""

PARTITIONED = tuple(name for name in ENGINES if name != "local")


def check_engine(engine: str, among=ENGINES) -> str:
    """``engine`` when it is one of ``among`` (default: every engine), else MetricsError naming them."""
    if engine not in among:
        raise MetricsError(f"engine={engine!r} is not an option", fix=f"use {', '.join(among)}")
    return engine


def choose_engine(runs, *, allowed=None) -> str:
    """The engine of ``metrics.evaluate`` when none is named: ``"streaming"`` when the run files
    together hold more than :func:`streaming_threshold` bytes of text (:func:`run_bytes`, decided
    before anything is read), else ``"local"``. An input that cannot be opened goes to ``"local"``,
    whose reader reports it as it always does."""
    threshold = streaming_threshold()
    try:
        size = run_bytes(runs, allowed=allowed)
    except (MetricsError, OSError, pa.ArrowException):
        return "local"
    return "streaming" if size > threshold else "local"
