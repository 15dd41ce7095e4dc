"""Integer codes of docno strings, equal exactly where the strings are equal.

Matching documents across runs (the two runs of "Where it differs", the inputs of a fusion) is
integer work once every docno has a code. A dictionary encoding hashes every string: 3.2-3.8 s
for the 14M docnos of two 7M-line runs here. Most collections number their documents
(``7067032`` in MS MARCO's passages, ``D1555982`` in its documents): such docnos are read as their
number, one cast of 0.5 s, and the strings come back from the numbers when they are needed.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..beside import beside

__all__ = ["Coded", "chunks_of", "encode", "numbered"]


@dataclass(frozen=True)
class Coded:
    """``codes``: one per row of the chunks given, concatenated (int32 where the codes fit). The
    strings of codes are :meth:`strings`: ``prefix`` and the number's decimal text when
    ``dictionary`` is None, else the dictionary's entries."""

    codes: np.ndarray
    dictionary: pa.Array | None
    prefix: str = ""

    def strings(self, codes: np.ndarray) -> pa.Array:
        """The docno of each code in ``codes`` (codes of this encoding), as strings."""
        if self.dictionary is not None:
            return self.dictionary.take(pa.array(codes))
        text = pc.cast(pa.array(np.asarray(codes, dtype=np.int64)), pa.string())
        return pc.binary_join_element_wise(self.prefix, text, "") if self.prefix else text


def chunks_of(column) -> list:
    """The chunks of a column: an array's one, or a chunked array's."""
    return list(column.chunks) if isinstance(column, pa.ChunkedArray) else [column]


def numbered(chunks: list) -> tuple[list[np.ndarray], str] | None:
    """The numbers and prefix of docno strings that are one prefix and a number (``7067032``,
    ``D1555982``), or None when any string is not of that form (``007``, ``+7``, ``0x7``, ``-7``,
    another prefix, a null). Each string must be the prefix (the first string's leading
    non-digits) followed by the number's own decimal text: ASCII digits without a leading zero,
    so equal numbers are equal strings, as a dictionary's codes are."""
    first = next((chunk[0].as_py() for chunk in chunks if len(chunk)), None)
    if not isinstance(first, str) or any(chunk.null_count for chunk in chunks):
        return None
    prefix = re.split(r"\d", first, maxsplit=1)[0]   # the leading non-digits
    out = []
    try:
        for chunk in chunks:
            if prefix and not pc.all(pc.starts_with(chunk, prefix)).as_py():
                return None
            number = pc.utf8_slice_codeunits(chunk, len(prefix)) if prefix else chunk
            if len(chunk) and not (pc.all(pc.ascii_is_decimal(number)).as_py() and not pc.any(
                    pc.and_(pc.starts_with(number, "0"), pc.not_equal(number, "0"))).as_py()):
                return None   # a sign, a hex digit, a leading zero: not a number's own text
            try:   # int32 where every number fits (MS MARCO's do): half the memory, no narrowing copy
                cast = pc.cast(number, pa.int32())
            except pa.ArrowInvalid:
                cast = pc.cast(number, pa.int64())   # ArrowInvalid past int64
            out.append(cast.to_numpy(zero_copy_only=False))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):   # not a number, or not strings: a dictionary then
        return None
    return out, prefix


def encode(chunks: list, numbers: bool = True, groups: list[int] | None = None) -> Coded:
    """:class:`Coded` of the docno chunks (string arrays), concatenated: their numbers when
    :func:`numbered` reads them (and ``numbers``), else one ``dictionary_encode`` of all of them
    together (codes below the number of distinct strings).

    ``groups``: how many of the chunks each run gives, in order: the runs' numbers are then read on
    two threads when they are many (pyarrow's casts release the GIL; two runs' 14M docnos), with the
    codes :func:`numbered` gives all of them."""
    read = None if not numbers else numbered(chunks) if groups is None else _numbered_apart(chunks, groups)
    if read is not None:
        values, prefix = read
        codes = np.concatenate(values) if values else np.zeros(0, dtype=np.int32)
        if codes.dtype != np.int32 and (not len(codes) or codes.max() < 2**31):
            codes = codes.astype(np.int32)   # as a dictionary's indices: half the memory
        return Coded(codes, None, prefix)
    if len({chunk.type for chunk in chunks}) > 1 or sum(chunk.nbytes for chunk in chunks) >= 2**31:
        chunks = [chunk.cast(pa.large_string()) for chunk in chunks]   # one type; 64-bit offsets when large
    # one array, not chunks: a chunked array's encoding hands every chunk the dictionary so far
    encoded = pc.dictionary_encode(pa.concat_arrays(chunks) if chunks else pa.array([], pa.string()))
    return Coded(encoded.indices.to_numpy(zero_copy_only=False), encoded.dictionary)


def _numbered_apart(chunks: list, groups: list[int]) -> tuple[list[np.ndarray], str] | None:
    """:func:`numbered` of ``chunks``, read a group at a time: the first half of the groups on a
    second thread (:func:`metrics.beside.beside`) while this one reads the rest. The same answer:
    a group's prefix is its first string's leading non-digits, which hold no digit, so the groups
    of one numbered whole are each numbered with the whole's prefix, and groups numbered with one
    prefix are a numbered whole. A group without rows has no prefix of its own: then the whole."""
    bounds = np.cumsum([0, *groups])
    parts = [chunks[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    if bounds[-1] != len(chunks) or any(not any(len(chunk) for chunk in part) for part in parts):
        return numbered(chunks)
    half = len(parts) // 2

    def first_half() -> list:
        return [numbered(part) for part in parts[:half]]

    early = beside(sum(len(chunk) for part in parts[:half] for chunk in part), first_half)
    read = [numbered(part) for part in parts[half:]]
    found = [r for r in early.result() + read if r is not None]
    if len(found) < len(parts) or len({prefix for _, prefix in found}) > 1:
        return None
    return [values for group, _ in found for values in group], found[0][1]
