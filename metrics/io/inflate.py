"""Decompression bounded as it streams: gzip, bz2, xz and zstd inflated in blocks, each checked as
it is read (the inflate limit of one input, the budget of every read in progress in this process,
line lengths, NUL bytes), so that every reader and the streaming engine refuse a bomb holding one
block; and blocks inflated on a second thread while the caller parses (:func:`read_ahead`)."""
from __future__ import annotations

import bz2
import contextlib
import gzip
import io as _stdio
import lzma
import threading
import zlib

import pyarrow as pa

from .. import settings as settings_module
from ..beside import made_ahead
from ..errors import MetricsError
from .lines import DEGENERATE_WINDOW, check_degenerate, check_line_lengths
from .sniff import compression_of, line_checks_apply, refuse_other_formats

DECOMPRESS_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError, pa.ArrowException)


INFLATE_CHUNK = 16 << 20   # bytes inflated at a time, so a bomb is stopped within a chunk of the limit


def decompress(raw: bytes, source: str, *, limit: int | None = None, counted: bool | bytes = False) -> bytes:
    """``raw`` unpacked when its magic bytes name a compression, else ``raw`` itself.

    Inflation is streamed and refused past ``limit`` bytes (default: the operator's
    ``inflate_limit``, :func:`metrics.settings.load`). Containers and encodings that are not
    text (zip, Excel, UTF-16, images, PDF, a second compression) are refused with what they are.
    ``counted``: True when the caller has already inflated the whole input once within the
    limit (:func:`count_inflated`), so it is not counted again before it is held; bytes: the
    whole inflated text, already read with every check.
    """
    compression = compression_of(raw[:6])
    data = raw
    if compression is not None:
        limit = settings_module.load().inflate_limit if limit is None else limit
        data = counted if isinstance(counted, bytes) else inflate(raw, compression, source, limit,
                                                                  counted=bool(counted))
        if compression_of(data[:6]) is not None:
            raise MetricsError(f"the file is compressed twice ({compression} of {compression_of(data[:6])})",
                               source=source, fix="unpack it once and upload the result")
    else:
        check_lines(data, source)
    refuse_other_formats(data, source)
    return data


def check_lines(data: bytes, source: str, settings=None) -> None:
    """MetricsError naming the first line of text ``data`` longer than ``max_line`` bytes, or the
    first degenerate block of it (:func:`metrics.io.lines.check_degenerate`), block by block as
    :func:`checked_blocks` judges a stream."""
    settings = settings_module.load() if settings is None else settings
    if not line_checks_apply(data[:65536]):
        return
    if len(data) > settings.max_line:
        check_line_lengths(data, 0, 0, settings.max_line, source, count=False)
    if b"\x00" in data[:DEGENERATE_WINDOW]:
        return   # binary: check_text names the byte
    lines = 0
    for at in range(0, len(data), INFLATE_CHUNK):
        if at:
            lines += data.count(b"\n", at - INFLATE_CHUNK, at)
        check_degenerate(data, lines, source, open_line=int(at > 0 and data[at - 1] != 10), start=at)


def inflate(raw: bytes, compression: str, source: str, limit: int, *, counted: bool = False) -> bytes:
    """The unpacked bytes of ``raw``, refused once they pass ``limit``.

    An input that inflates to more than one block is inflated twice: first counted block by
    block and dropped (:func:`count_inflated`), so that a bomb is refused holding one block,
    then read whole (:func:`read_stream`) only once it is known to fit within the limit.
    """
    what = f"{compression} of {len(raw):,} bytes"
    try:
        if not counted:
            packed = _raw_stream(raw, compression)
            blocks, first = count_inflated(open_decompressed(packed, compression), source, limit=limit, what=what,
                                           keep_first=True, raw_read=packed.tell)
            if blocks <= 1:
                return first
        packed = _raw_stream(raw, compression)
        return read_stream(open_decompressed(packed, compression), source, limit=limit, what=what,
                           raw_read=packed.tell)
    except DECOMPRESS_ERRORS as exc:
        if isinstance(exc, MetricsError):
            raise
        raise decompress_error(exc, source) from None


def _raw_stream(raw: bytes, compression: str):
    return _stdio.BytesIO(raw) if compression != "zstd" else pa.BufferReader(pa.py_buffer(raw))


def open_decompressed(raw, compression: str | None):
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if compression == "bz2":
        return bz2.BZ2File(raw, mode="rb")
    if compression == "xz":
        return lzma.LZMAFile(raw, mode="rb")
    if compression == "zstd":
        return pa.CompressedInputStream(raw, "zstd")
    return raw


def decompress_error(exc: BaseException, source: str) -> MetricsError:
    return MetricsError(f"cannot decompress the file ({exc})", source=source,
                        fix="the file may be truncated or damaged; download or compress it again")


RATIO_FLOOR = INFLATE_CHUNK
"""Inflated bytes every compressed input may reach whatever its ratio (a small file of very
repetitive text); past them the inflate ratio holds (``NDCG_LAB_INFLATE_RATIO``)."""


def ratio_refusal(ratio: int, source: str, what: str = "") -> MetricsError:
    """The error for an input that inflates past ``ratio`` times the compressed bytes read."""
    return MetricsError(f"the file inflates to more than {ratio} times its compressed size, which no run, qrels "
                        "or topics file does (real ones inflate 3 to 6 times): a compression bomb"
                        + (f" ({what})" if what else ""), source=source,
                        fix="give the file uncompressed, or compressed as it came; the operator can raise "
                            "NDCG_LAB_INFLATE_RATIO")


def within_ratio(total: int, raw_read: int, ratio: int | None) -> bool:
    """Whether ``total`` inflated bytes from ``raw_read`` compressed ones keep within ``ratio``
    (None: no bound) once past :data:`RATIO_FLOOR`: the one rule of every reader and engine."""
    return ratio is None or total <= max(RATIO_FLOOR, ratio * raw_read)


def inflate_refusal(limit: int, source: str, what: str = "") -> MetricsError:
    """The error for an input that inflates past ``limit`` bytes (``what``: its compression and size)."""
    return MetricsError(f"the file inflates to more than {limit:,} bytes, the limit of this server"
                        + (f" ({what})" if what else ""), source=source,
                        fix="split the run into smaller files (or give it uncompressed); the operator can raise "
                            "NDCG_LAB_INFLATE_LIMIT")


_LOCK = threading.Lock()


_IN_FLIGHT = [0]   # inflated bytes held by every read_stream of this process at this moment


def in_flight() -> int:
    """Inflated bytes that the reads in progress in this process hold now."""
    return _IN_FLIGHT[0]


def read_stream(stream, source: str, *, limit: int | None, what: str = "", settings=None, raw_read=None) -> bytes:
    """Every byte of ``stream``, read in :data:`INFLATE_CHUNK` blocks (:func:`checked_blocks`) and
    refused as soon as it is bad; all of it is held until the read ends."""
    chunks = list(checked_blocks(stream, source, limit=limit, what=what, settings=settings, hold=True,
                                 raw_read=raw_read))
    if not chunks:
        return b""
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def checked_blocks(stream, source: str, *, limit: int | None, what: str = "", settings=None, hold: bool = False,
                   size: int | None = None, raw_read=None):
    """``stream`` in blocks of ``size`` bytes (:data:`INFLATE_CHUNK`), each checked as it is read:

    - refused past ``limit`` bytes (the inflate limit of a compressed input; None for a plain file);
    - refused past the operator's ``inflate_ratio`` (``NDCG_LAB_INFLATE_RATIO``) times the
      compressed bytes read so far, ``raw_read()`` (:func:`within_ratio`): a bomb of any text
      (zeros, newlines, valid lines) stops at its second block, whatever its size on disk;
    - refused when the bytes held by all reads in progress in this process would pass the
      operator's ``inflate_budget`` (``NDCG_LAB_INFLATE_TOTAL``): N bombs at once hold at most
      that much. ``hold``: the caller keeps every block, and each stays counted until the last
      is read; else the caller keeps one at a time, and a block stops counting once the next is
      asked for. ``limit`` None counts nothing against the budget;
    - refused at a line longer than ``max_line`` (``NDCG_LAB_MAX_LINE``) in text (not JSON or
      binary), naming the line;
    - plain text (``limit`` None) refused when a block's first megabyte is degenerate (only blank
      lines, or a few lines repeated: :func:`metrics.io.lines.check_degenerate`), naming the line:
      such a file stops at its first block, as a compressed bomb stops at its second (the ratio);
    - at the first block with a NUL byte in text, reading stops after that block, and the
      caller's :func:`metrics.io.sniff.check_text` names the byte and its line, as for the whole file.

    So a bomb of zeros stops within a block and a one-line gigabyte within ``max_line``.
    Every block but the last is ``size`` bytes long.
    """
    settings = settings_module.load() if settings is None else settings
    size = INFLATE_CHUNK if size is None else size
    total = held = lines = 0
    text = None           # decided from the first block: line checks apply to text only
    open_line = 0         # bytes of the line still open at the end of the blocks read so far
    try:
        while True:
            chunk = stream.read(size if limit is None else min(size, limit + 1 - total))
            if not chunk:
                return
            if text is None:
                text = line_checks_apply(chunk)
            nul = text and b"\x00" in chunk   # refused by check_text, at the NUL: nothing after it is read
            if text and not nul:
                if limit is None:
                    check_degenerate(chunk, lines, source, open_line=open_line)
                open_line, lines = check_line_lengths(chunk, open_line, lines, settings.max_line, source)
            if raw_read is not None and not nul and not within_ratio(total + len(chunk), raw_read(),
                                                                     settings.inflate_ratio):
                raise ratio_refusal(settings.inflate_ratio, source, what)
            if limit is not None:
                if total + len(chunk) > limit and not nul:
                    raise inflate_refusal(limit, source, what)
                with _LOCK:
                    if not hold:
                        _IN_FLIGHT[0] -= held
                        held = 0
                    if _IN_FLIGHT[0] + len(chunk) > settings.inflate_budget + 1:   # + 1: the byte that finds the limit
                        raise MetricsError("the server is unpacking other large inputs right now and holds as "
                                           "much as it may", source=source,
                                           fix="try again in a minute; the operator sets NDCG_LAB_INFLATE_TOTAL")
                    _IN_FLIGHT[0] += len(chunk)
                    held += len(chunk)
            yield chunk
            if nul:
                return
            total += len(chunk)
    finally:
        if held:
            with _LOCK:
                _IN_FLIGHT[0] -= held


def count_inflated(stream, source: str, *, limit: int, what: str = "", keep_first: bool = False,
                   settings=None, raw_read=None) -> tuple[int, bytes]:
    """(blocks, first block or b"") of a stream inflated to its end (or its first NUL block) and
    dropped block by block, with every check of :func:`checked_blocks`: a bomb is refused
    holding one block. ``keep_first``: the first block is returned when it is the only one."""
    blocks, first = 0, b""
    with contextlib.closing(checked_blocks(stream, source, limit=limit, what=what, settings=settings,
                                           raw_read=raw_read)) as checked:
        for block in checked:
            blocks += 1
            first = block if blocks == 1 and keep_first else b""
    return blocks, first


def read_ahead(blocks):
    """``blocks`` (an iterator) with the next block produced on a second thread while the caller
    works on the one in hand: inflating (zlib, bz2, lzma and zstd release the GIL) overlaps
    parsing. One block waits at most; an error of the producer is raised to the caller at the
    block where it happened; closing the iterator stops the producer after its current block
    (:func:`metrics.beside.made_ahead`)."""
    return made_ahead(blocks, depth=1, name="ndcg-lab-inflate", daemon=False)


def read_path(path, source: str) -> bytes:
    """The bytes of the file at ``path``: a compressed file as it is (:func:`decompress` inflates
    it as a stream), a plain one through :func:`read_stream`, so that a one-line gigabyte is
    refused within ``NDCG_LAB_MAX_LINE`` instead of read whole. OSError as ``open`` raises it."""
    with open(path, "rb") as f:
        head = f.read(6)
        f.seek(0)
        if compression_of(head) is not None:
            return f.read()
        return read_stream(f, source, limit=None)
