"""64-bit keys of docno strings and (query, docno) pairs, exact duplicate detection, content digests.

The hashes are a pre-filter: rows whose keys collide are always compared exactly.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..ordering import offsets_of, take

_LONG = 256
"""Strings longer than this many bytes are hashed by their ends and length (:func:`string_hash`)."""


def string_hash(arr: pa.Array) -> np.ndarray:
    """64-bit hash of every string of ``arr``: its bytes zero-padded to whole 8-byte
    words, folded word by word (xor, multiply). Equal strings hash equal; callers
    compare colliding strings exactly.
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    lengths = pc.binary_length(arr).to_numpy(zero_copy_only=False).astype(np.uint64)
    width = (int(lengths.max()) + 7) // 8 * 8 or 8
    if width > _LONG:
        # Very long ids (URLs): hash the first and last 128 bytes and the length. Only those: a
        # string's hash never depends on the others beside it (chunks of one column differ).
        long = lengths > np.uint64(_LONG)
        h = np.empty(n, dtype=np.uint64)
        short = np.flatnonzero(~long)
        if len(short):
            h[short] = string_hash(arr.take(pa.array(short)))
        rows = np.flatnonzero(long)
        raw = (arr if len(rows) == n else arr.take(pa.array(rows))).view(pa.binary())
        head = string_hash(pc.binary_slice(raw, 0, 128).view(pa.string()))   # no UTF-8 check on the cut
        tail = string_hash(pc.binary_slice(raw, -128).view(pa.string()))
        with np.errstate(over="ignore"):
            h[rows] = _mix(head * np.uint64(0x9E3779B97F4A7C15) ^ tail) ^ lengths[rows]
        return h
    padded = pc.ascii_rpad(arr, width, "\x00")   # pads by bytes, for any UTF-8
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32, count=padded.offset + n + 1)[padded.offset:]
    first = int(offsets[0])
    words = np.frombuffer(padded.buffers()[2], dtype="<u8", count=n * width // 8,
                          offset=first).reshape(n, width // 8)
    h = lengths if width == 8 else lengths.copy()   # hashed in place: every 7M-row temporary adds 56 MB
    with np.errstate(over="ignore"):
        h *= np.uint64(0xBF58476D1CE4E5B9)
        np.bitwise_xor(h, words[:, 0], out=h)
        np.multiply(h, np.uint64(0x94D049BB133111EB), out=h)
        for j in range(1, width // 8):
            # only the words a string has, so that a hash never depends on the padding width
            inside = lengths > np.uint64(8 * j)
            step = np.bitwise_xor(h, words[:, j])
            np.multiply(step, np.uint64(0x94D049BB133111EB), out=step)
            np.copyto(h, step, where=inside)
    return h


def _mix(x: np.ndarray, *, inplace: bool = False) -> np.ndarray:
    """splitmix64 finaliser (on a copy of ``x`` unless ``inplace``)."""
    if not inplace:
        x = x.copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def pair_keys(qcode: np.ndarray, docno) -> np.ndarray:
    """64-bit key of every (query code, docno) row: the docno's :func:`string_hash` and the code,
    mixed. Chunks are hashed into one array on two threads (numpy and pyarrow kernels release the
    GIL), each chunk mixed while it is in cache."""
    chunks = [c for c in docno.chunks] if isinstance(docno, pa.ChunkedArray) else [docno]
    starts = offsets_of(np.array([len(c) for c in chunks], dtype=np.int64))
    out = np.empty(int(starts[-1]), dtype=np.uint64)
    # slices of a chunk: the padded copy string_hash makes of one slice stays small
    slices = [(i, lo, min(lo + _HASH_SLICE, len(c))) for i, c in enumerate(chunks)
              for lo in range(0, len(c), _HASH_SLICE)]

    def hash_slice(piece: tuple[int, int, int]) -> None:
        i, lo, hi = piece
        at = int(starts[i])
        h = out[at + lo:at + hi]
        h[:] = string_hash(chunks[i].slice(lo, hi - lo))
        with np.errstate(over="ignore"):
            np.multiply(h, np.uint64(0x9E3779B97F4A7C15), out=h)
            np.add(h, qcode[at + lo:at + hi], out=h, dtype=np.uint64, casting="unsafe")
        _mix(h, inplace=True)

    if len(slices) > 1:
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(hash_slice, slices))
    elif slices:
        hash_slice(slices[0])
    return out


_HASH_SLICE = 1 << 18
"""Rows hashed at a time by :func:`pair_keys`: string_hash pads a slice's strings into a copy
(tens of bytes a row), so a slice bounds that scratch memory whatever the run's size."""


def exact_duplicates(qid: pa.Array, docno: pa.Array, qcode: np.ndarray):
    """Rows repeating an earlier (qid, docno), with the row of that earlier occurrence.

    Hash the pairs and sort the hashes, query by query when each query's rows are one block (fast
    path: no two hashes equal); only rows whose hash collides are compared exactly.
    """
    colliding = _colliding(pair_keys(qcode, docno), qcode)
    if not len(colliding):
        return None
    candidates = np.flatnonzero(np.isin(pair_keys(qcode, docno), colliding))
    # Colliding rows compared exactly: group them by (query, docno), first row of each group kept.
    dcode = as_array(pc.dictionary_encode(take(docno, candidates))).indices.to_numpy()
    order = np.lexsort((candidates, dcode, qcode[candidates]))
    q, d = qcode[candidates][order], dcode[order]
    repeat = np.zeros(len(order), dtype=bool)
    repeat[1:] = (q[1:] == q[:-1]) & (d[1:] == d[:-1])
    if not repeat.any():
        return None
    group_first = np.maximum.accumulate(np.where(repeat, 0, np.arange(len(order))))
    rows, first = candidates[order][repeat], candidates[order][group_first][repeat]
    by_row = np.argsort(rows, kind="stable")
    return rows[by_row], first[by_row]


def _colliding(keys: np.ndarray, qcode: np.ndarray) -> np.ndarray:
    """The pair keys that occur twice among ``keys`` (sorted in place: the keys in row order are
    needed again only when two are equal). Runs and qrels come in blocks of one query, and two
    rows of a block are all a duplicate can be: the blocks of each length are sorted as the rows of
    one matrix, a few thousand keys at a time in cache (1M keys in blocks of 1,000: 12 ms, one
    sort of all of them 52 ms). A query in two blocks: one sort of all the keys."""
    n = len(keys)
    heads = np.flatnonzero(np.concatenate(([True], qcode[1:] != qcode[:-1]))) if n else np.zeros(0, np.int64)
    if len(np.unique(qcode[heads])) < len(heads):
        keys.sort()
        return np.unique(keys[1:][keys[1:] == keys[:-1]])
    lengths = np.diff(np.append(heads, n))
    by_length = np.argsort(lengths, kind="stable")
    sizes, firsts = np.unique(lengths[by_length], return_index=True)
    found = []
    for length, starts in zip(sizes.tolist(), np.split(heads[by_length], firsts[1:])):
        if length < 2:
            continue
        if len(starts) * length == n:                     # every block this long: the keys as a matrix
            groups: Iterable[np.ndarray] = [keys.reshape(-1, length)]
        elif length >= _SORT_ROWS:                        # a long block: in place
            groups = (keys[at:at + length].reshape(1, -1) for at in starts.tolist())
        else:                                             # gathered a slice of blocks at a time
            step = _SORT_ROWS // length
            groups = (keys[starts[at:at + step, None] + np.arange(length)] for at in range(0, len(starts), step))
        for block in groups:
            block.sort(axis=1)
            found.append(block[:, 1:][block[:, 1:] == block[:, :-1]])
    return np.unique(np.concatenate(found)) if found else np.zeros(0, dtype=np.uint64)


_SORT_ROWS = 1 << 18
"""Keys of blocks of one length gathered at a time by :func:`_colliding` (2 MiB, and 2 MiB of index)."""


def canonical_digest(table: pa.Table, kind) -> str:
    """sha256 of the columns in schema order: string lengths and bytes, numbers as little-endian."""
    h = hashlib.sha256(f"nDCG-Lab {kind.what} v1\n".encode())
    for col_name in table.column_names:
        col = as_array(table[col_name])
        h.update(col_name.encode() + b"\x00")
        if pa.types.is_string(col.type):
            offsets = np.frombuffer(col.buffers()[1], dtype=np.int32,
                                    count=col.offset + len(col) + 1)[col.offset:]
            h.update(np.diff(offsets).astype("<i8").tobytes())
            if col.buffers()[2] is not None:
                h.update(memoryview(col.buffers()[2])[int(offsets[0]):int(offsets[-1])])
        elif pa.types.is_floating(col.type):
            h.update(col.to_numpy(zero_copy_only=False).astype("<f8").tobytes())
        else:
            h.update(col.to_numpy(zero_copy_only=False).astype("<i8").tobytes())
    return h.hexdigest()


def as_array(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col
