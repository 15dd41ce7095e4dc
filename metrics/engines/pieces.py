"""Pieces of whole lines read from one part of a text file, each checked as it passes: line
lengths (``NDCG_LAB_MAX_LINE``), a degenerate plain block, the inflate limit and ratio of a compressed
stream (:class:`PieceChecks`); and the line arithmetic a partition task needs at a piece's end (its
line count, its last line, its last data line)."""
from __future__ import annotations

import numpy as np

from .. import settings as settings_module
from ..io.inflate import inflate_refusal, ratio_refusal, within_ratio
from ..io.lines import check_degenerate, check_line_lengths, line_ends, line_too_long
from ..io.sniff import data_starts


def read_pieces(stream, piece_bytes: int, limit: int | None, checks: PieceChecks, first_bytes: int | None = None):
    """Pieces of whole lines (each ends with \\n, but maybe the last), the first of ``first_bytes``
    when given. With ``limit``: only the lines
    starting before byte ``limit`` of the stream (the line crossing it is read to its end).
    ``checks`` refuses a line too long and a stream that inflates past its limit as soon as they
    are seen; a block with a NUL byte is yielded at once, so that its parse names the byte."""
    pending = b""
    pos = 0
    while True:
        if limit is not None and pos >= limit:
            while pending:
                block = stream.read(1 << 16)
                if not block:
                    yield pending
                    return
                checks.block(block)
                cut = block.find(b"\n")
                if cut >= 0:
                    yield pending + block[:cut + 1]
                    return
                pending += block
            return
        size = first_bytes if first_bytes and pos == 0 else piece_bytes
        want = size if limit is None else min(size, limit - pos)
        block = stream.read(want)
        if not block:
            if pending:
                yield pending
            return
        pos += len(block)
        if b"\x00" in block:
            yield pending + block
            return
        checks.block(block)
        data = pending + block if pending else block
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            pending = data
            continue
        pending = data[cut:]
        yield data[:cut] if cut < len(data) else data


class PieceChecks:
    """Line lengths (``NDCG_LAB_MAX_LINE``) and inflated bytes (``NDCG_LAB_INFLATE_LIMIT`` and
    ``NDCG_LAB_INFLATE_RATIO`` times the compressed bytes read, ``raw_read()``, for a compressed
    part: the readers' rule, :func:`metrics.io.inflate.within_ratio`) of the blocks one part reads,
    lines counted from the part's start."""

    def __init__(self, source: str, compressed: bool, raw_read=None):
        settings = settings_module.load()
        self.source, self.max_line = source, settings.max_line
        self.limit = settings.inflate_limit if compressed else None
        self.ratio, self.raw_read = settings.inflate_ratio, raw_read if compressed else None
        self.bytes = self.open_line = self.lines = 0

    def block(self, block: bytes) -> None:
        if self.raw_read is None:   # plain text: a degenerate block is refused as the readers refuse it
            check_degenerate(block, self.lines, self.source, open_line=self.open_line)
        self.open_line, self.lines = check_line_lengths(block, self.open_line, self.lines, self.max_line,
                                                        self.source)
        self.bytes += len(block)
        if self.raw_read is not None and self.ratio is not None and \
                not within_ratio(self.bytes, self.raw_read(), self.ratio):
            raise ratio_refusal(self.ratio, self.source)
        if self.limit is not None and self.bytes > self.limit:
            raise inflate_refusal(self.limit, self.source)


def read_pieces_seekable(raw, piece_bytes: int, limit: int | None, checks: PieceChecks):
    """As :func:`read_pieces` on a seekable file: a piece's end (its last line end) is found first in
    small reads, then the piece is read once at its exact length (no copy to cut it). A piece
    without a line end is a line longer than ``checks.max_line``: refused before it is read."""
    size = raw.size()
    begin = raw.tell()
    pos = 0
    while (limit is None or pos < limit) and begin + pos < size:
        start = begin + pos
        want = piece_bytes if limit is None else min(piece_bytes, limit - pos)
        stop = min(start + want, size)
        if stop >= size:
            end = size
        elif limit is not None and pos + want >= limit:
            end = _line_end(raw, stop - 1, size)             # the line crossing the limit is ours
        else:
            end = _last_line_end(raw, start, stop)
            if end is None:            # a line longer than a piece
                if stop - start > checks.max_line:
                    raise line_too_long(checks.max_line, checks.source, checks.lines + 1)
                end = _line_end(raw, stop, size)
        block = raw.read_at(end - start, start)
        raw.seek(end)
        if not block:
            return
        pos += len(block)
        if b"\x00" not in block:
            checks.block(block)
        yield block


def _last_line_end(raw, start: int, stop: int) -> int | None:
    """The offset just after the last newline in bytes ``start:stop`` of ``raw``, or None."""
    hi = stop
    while hi > start:
        lo = max(start, hi - (1 << 16))
        cut = raw.read_at(hi - lo, lo).rfind(b"\n")
        if cut >= 0:
            return lo + cut + 1
        hi = lo
    return None


def _line_end(raw, at: int, size: int) -> int:
    """The offset just after the first newline at or after byte ``at`` (the file's size if none)."""
    while at < size:
        block = raw.read_at(min(1 << 16, size - at), at)
        if not block:
            break
        cut = block.find(b"\n")
        if cut >= 0:
            return at + cut + 1
        at += len(block)
    return size


def count_lines(piece: bytes) -> int:
    """Lines in a piece as io counts them (\\n, \\r\\n and a lone \\r end a line)."""
    ends = piece.count(b"\n") if b"\r" not in piece else len(line_ends(piece))
    return ends + (not piece.endswith((b"\n", b"\r")))


def last_line(piece: bytes) -> bytes:
    end = len(piece) - 1 if piece.endswith(b"\n") else len(piece)
    return piece[piece.rfind(b"\n", 0, end) + 1:end]


def last_data_line(piece: bytes) -> bytes | None:
    """The last line of ``piece`` that holds data (not blank, not a comment), without its line end.
    Trailing blank lines are skipped at once (:func:`ink_end`), and a piece whose last lines are
    not data is searched by numpy (:func:`metrics.io.sniff.data_starts`), not line by line: a part
    of a file of comment lines looks back through all of them."""
    ink = ink_end(piece)
    ends = [at for at in (piece.find(b"\n", ink), piece.find(b"\r", ink)) if at >= 0]
    end = min(ends) + 1 if ends else len(piece)
    for _ in range(LINES_LOOKED_AT):
        if end <= 0:
            return None
        newline = piece.rfind(b"\n", 0, end - 1)
        start = max(newline, piece.rfind(b"\r", max(newline, 0), end - 1)) + 1    # \r only after that \n
        line = piece[start:end].rstrip(b"\r\n")
        stripped = line.strip(b" \t\f\v")
        if stripped and not stripped.startswith(b"#"):
            return line
        end = start
    starts = data_starts(np.frombuffer(piece, dtype=np.uint8, count=end))
    if not len(starts):
        return None
    at = int(starts[-1])
    start = max(piece.rfind(b"\n", 0, at), piece.rfind(b"\r", 0, at)) + 1
    stops = [stop for stop in (piece.find(b"\n", at), piece.find(b"\r", at)) if stop >= 0]
    return piece[start:min(stops) if stops else len(piece)]


LINES_LOOKED_AT = 64
"""Lines :func:`last_data_line` tries one by one from the end before it searches with numpy."""


def ink_end(piece: bytes) -> int:
    """``len(piece.rstrip())``, with the tail stripped a window at a time: ``rstrip`` of a piece
    that ends in a line end copies all of it (16 MiB a piece, twice a piece: 0.25 s of CPU and
    its page faults on the 7M-line run)."""
    end = len(piece)
    while end > 0:
        start = max(0, end - INK_WINDOW)
        ink = len(piece[start:end].rstrip())
        if ink:
            return start + ink
        end = start
    return 0


INK_WINDOW = 4096
"""Bytes :func:`ink_end` strips at a time from the end."""
