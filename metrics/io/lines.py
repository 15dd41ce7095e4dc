"""Line arithmetic on raw bytes, for the messages that name a line: newline counts, line ends
(\\n, \\r\\n and a lone \\r, as pyarrow reads them), the line of a byte offset, a line's text quoted
for a message, and the check, block by block, that no line is longer than the operator's bound."""
from __future__ import annotations

import numpy as np

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
