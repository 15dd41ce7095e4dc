"""The bucket of a query: ``crc32(utf-8 qid) mod N`` (zlib's CRC-32, never Python's salted ``hash``).

Every query lands whole in one bucket and the qrels are bucketed the same way, so each bucket
is a complete small evaluation. Also the size rules: how many buckets an input gets, and
the run size above which the dashboard streams.
"""
from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError

HASH = "crc32(utf-8 qid) mod N"


BUCKET_BYTES = 192 << 20        # default bucket size, in bytes of TREC text (~5M lines)


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
