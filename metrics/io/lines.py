"""Line arithmetic on raw bytes, for the messages that name a line: newline counts, line ends
(\\n, \\r\\n and a lone \\r, as pyarrow reads them), the line of a byte offset, a line's text quoted
for a message, and the checks, block by block, that no line is longer than the operator's bound
and that the text is not degenerate (blank, or a few lines repeated)."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import MetricsError

_SHOWN = 80  # characters of an offending line quoted in a message


_COUNT_SLICE = 1 << 20


def count_newlines(data: bytes) -> int:
    """``data.count(b"\\n")``, counted by numpy in slices of :data:`_COUNT_SLICE` bytes (each
    slice's comparison stays in cache): several times faster than ``bytes.count``, which compares
    byte by byte, and without holding the GIL, so a block counted on one thread leaves the
    others running."""
    if len(data) < _COUNT_SLICE:
        return data.count(b"\n")
    a = np.frombuffer(data, dtype=np.uint8)
    return sum(int(np.count_nonzero(a[at:at + _COUNT_SLICE] == 10)) for at in range(0, len(a), _COUNT_SLICE))


def a_line_starts_with(data: bytes, firsts: bytes) -> bool:
    """Whether a line after the first starts with one of the bytes ``firsts`` (``b"\\n"``: a blank
    line). numpy in slices of :data:`_COUNT_SLICE` bytes, each slice's newlines found and the byte
    after each looked up: a test of a pair of bytes that starts with a newline stops at every line
    (``b"\\n#" in data``: 0.25 s for 284 MB, three of them 0.8 s; a regular expression 0.16 s,
    holding the GIL), this 0.14 s, and half that on two threads."""
    wanted = np.zeros(256, dtype=bool)
    wanted[list(firsts)] = True
    a = np.frombuffer(data, dtype=np.uint8)
    for at in range(0, len(a), _COUNT_SLICE):
        part = a[at:at + _COUNT_SLICE + 1]   # one byte more: the byte after a slice's last newline
        after = np.flatnonzero(part[:-1] == 10) + 1
        if wanted[part[after]].any():
            return True
    return False


def line_ends(data: bytes) -> np.ndarray:
    """Position of the byte ending each line: \\n, a lone \\r, or the \\r of \\r\\n (as pyarrow reads)."""
    a = np.frombuffer(data, dtype=np.uint8)
    if b"\r" not in data:
        return np.flatnonzero(a == 10)
    ends = np.flatnonzero((a == 10) | (a == 13))
    after_cr = np.zeros(len(ends), dtype=bool)
    after_cr[1:] = (a[ends[:-1]] == 13) & (a[ends[1:]] == 10) & (ends[1:] == ends[:-1] + 1)
    return ends[~after_cr]


def line_of_offset(data: bytes, offset: int) -> int:
    """1-based line holding byte ``offset``."""
    head = data[:offset]
    if b"\r" not in head:
        return count_newlines(head) + 1
    return len(line_ends(head)) + 1


def line_text(data: bytes, line: int) -> str | None:
    """The original text of 1-based ``line``, quoted and shortened for a message."""
    ends = line_ends(data)
    if line < 1 or line > len(ends) + 1:
        return None
    start = 0 if line == 1 else int(ends[line - 2]) + 1
    if data[start - 1:start] == b"\r" and data[start:start + 1] == b"\n":
        start += 1
    end = int(ends[line - 1]) if line - 1 < len(ends) else len(data)
    text = data[start:end].decode("utf-8", errors="replace")
    if len(text) > _SHOWN:
        text = text[:_SHOWN] + "..."
    return repr(text)


def line_too_long(max_line: int, source: str, line: int) -> MetricsError:
    return MetricsError(f"the line is longer than {max_line:,} bytes", source=source, line=line,
                        fix="a run, qrels or topics line is short (the operator sets NDCG_LAB_MAX_LINE)")


def check_line_lengths(chunk: bytes, open_line: int, lines: int, max_line: int, source: str, *,
                       count: bool = True) -> tuple[int, int]:
    """(bytes of the line left open after ``chunk``, lines ended so far), or MetricsError at a line
    longer than ``max_line``. Windows of max_line / 2 bytes are searched for a line end (memchr):
    a line that long cannot hide between two that hold one, so text of short lines costs a few
    searches per block; only a window without one is measured exactly. A lone \\r ends a line too."""
    def too_long(line_number: int) -> MetricsError:
        return line_too_long(max_line, source, line_number)

    first = chunk.find(b"\n")
    if first < 0:
        if open_line + len(chunk) > max_line and b"\r" not in chunk:
            raise too_long(lines + 1)
        return open_line + len(chunk), lines
    if open_line + first > max_line and b"\r" not in chunk[:first]:
        raise too_long(lines + 1)
    last = chunk.rfind(b"\n")
    window = max(1, max_line // 2)
    at = first + 1
    while at < last:
        stop = min(at + window, last)
        if chunk.find(b"\n", at, stop) < 0 and chunk.find(b"\r", at, stop) < 0:
            start = chunk.rfind(b"\n", 0, at) + 1
            end = chunk.find(b"\n", at)
            if end - start > max_line and b"\r" not in chunk[start:end]:
                raise too_long(lines + chunk.count(b"\n", 0, start) + 1)
            at = end + 1
        else:
            at = stop
    if len(chunk) - last - 1 > max_line and b"\r" not in chunk[last + 1:]:
        raise too_long(lines + count_newlines(chunk) + 1)
    return len(chunk) - last - 1, lines + count_newlines(chunk) if count else lines


DEGENERATE_WINDOW = 1 << 19
"""Bytes of a block judged by :func:`check_degenerate` (its first whole lines): enough lines to tell
text that repeats itself from any real file, few enough to cost a millisecond a block."""

DEGENERATE_LINES = 1024
"""Lines a window must hold to be judged: a short file of repeated lines is bounded by its size."""

DEGENERATE_SHARE = 16
"""A window is degenerate when fewer than one line in this many is new: neither blank nor a repeat
of a line before it in the window, nor of its key (its first and third fields: a run's or qrels'
query and document) in the window. Real runs and qrels repeat no line and no key; TREC topics, the
most repetitive real text (``<top>``, ``</top>``, ``<desc> Description:``), repeat fewer than half."""

_KEY = r"^\s*(?P<qid>\S+)\s+\S+\s+(?P<docno>\S+)"
"""A line's key: its first and third whitespace-separated fields (query and document of a run or
qrels line); a line of fewer fields is its own key."""


DEGENERATE_KEYS = 4096
"""Lines of a window whose keys are judged (its first): a key costs a regular expression and a
join, three times a line's hash, so fewer lines are enough."""


def _new(codes: np.ndarray) -> np.ndarray:
    """Which rows of dictionary ``codes`` (numbered in order of first appearance) appear first there."""
    seen = np.maximum.accumulate(codes)
    new = np.ones(len(codes), dtype=bool)
    new[1:] = codes[1:] > seen[:-1]
    return new


def check_degenerate(chunk: bytes, lines_before: int, source: str, *, open_line: int = 0, start: int = 0) -> None:
    """MetricsError naming the line when the first :data:`DEGENERATE_WINDOW` bytes of whole lines
    of ``chunk`` (a block of text after ``lines_before`` ended lines; ``open_line``: bytes of a
    line left open before it, so that the window starts after that line's end; ``start``: where the
    block starts in ``chunk``, which is not copied) are degenerate:
    only blank lines, one line or a few repeated, or lines that differ but repeat a few keys (one
    query and document with ranks, scores or grades that change). A plain file of such text is
    refused at its first block whatever its size, before anything of it is parsed (a compressed
    one at its second, by the inflate ratio); the window costs one pass of pyarrow's hash over half a megabyte
    and a regular expression over its first :data:`DEGENERATE_KEYS` lines."""
    if len(chunk) - start < DEGENERATE_WINDOW // 2:
        return
    begin = start
    if open_line:
        begin = chunk.find(b"\n", start, start + DEGENERATE_WINDOW) + 1
        if begin == 0:
            return
        lines_before += 1
    cut = chunk.rfind(b"\n", begin, begin + DEGENERATE_WINDOW) + 1
    if cut <= begin:
        return
    a = np.frombuffer(chunk, dtype=np.uint8, count=cut - begin, offset=begin)
    ends = np.flatnonzero(a == 10)
    n = len(ends)
    if n < DEGENERATE_LINES:
        return
    starts = np.empty(n + 1, dtype=np.int32)
    starts[0] = 0
    starts[1:] = ends + 1
    lengths = np.diff(starts)
    blank = lengths <= 1
    if chunk.find(b"\r", begin, cut) >= 0:   # \r\n line ends: a blank line is two bytes
        blank |= (lengths == 2) & (a[starts[:-1]] == 13)
    lines = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(starts), pa.py_buffer(chunk).slice(begin)])
    codes = pc.dictionary_encode(lines).indices.to_numpy()
    new = _new(codes)
    useful = int((new & ~blank).sum())
    degenerate = "which no run, qrels or topics file has: a degenerate input"
    if useful * DEGENERATE_SHARE < n:
        repeat = np.flatnonzero(~new & ~blank)
        if len(repeat) == 0:
            row = int(np.flatnonzero(blank)[0])
            held = "all blank" if useful == 0 else f"blank but for {useful:,}"
            raise MetricsError(f"lines {lines_before + 1:,} to {lines_before + n:,} are {held}, {degenerate}",
                               source=source, line=lines_before + row + 1, fix="give the file with one record per line")
        row = int(repeat[0])
        first = int(np.flatnonzero(codes == codes[row])[0])
        raise MetricsError(f"line {lines_before + row + 1:,} repeats line {lines_before + first + 1:,} "
                           f"({line_text(chunk[begin:cut], row + 1)}), and only {useful:,} of the {n:,} lines from "
                           f"line {lines_before + 1:,} {'is' if useful == 1 else 'are'} new (neither blank nor a "
                           f"repeat), {degenerate}", source=source, line=lines_before + row + 1,
                           fix="give the file with each record once")
    n = min(n, DEGENERATE_KEYS)
    lines, blank = lines.slice(0, n), blank[:n]
    fields = pc.extract_regex(lines, _KEY)
    keys = pc.coalesce(pc.binary_join_element_wise(pc.struct_field(fields, "qid"), pc.struct_field(fields, "docno"),
                                                   b"\0"), lines)
    key_codes = pc.dictionary_encode(keys).indices.to_numpy()
    new_key = _new(key_codes)
    useful = int((new_key & ~blank).sum())
    if useful * DEGENERATE_SHARE >= n:
        return
    row = int(np.flatnonzero(~new_key & ~blank)[0])
    first = int(np.flatnonzero(key_codes == key_codes[row])[0])
    qid, docno = (fields.field(name)[row].as_py().decode("utf-8", errors="replace") for name in ("qid", "docno"))
    raise MetricsError(f"line {lines_before + row + 1:,} repeats the query and document of line "
                       f"{lines_before + first + 1:,} ({qid!r} and {docno!r}), and only {useful:,} of the {n:,} lines "
                       f"from line {lines_before + 1:,} {'holds' if useful == 1 else 'hold'} a query and document not "
                       f"seen before it, {degenerate}", source=source,
                       line=lines_before + row + 1, fix="give each document of a query once")
