"""Open sources and sniff their bytes: the one table of compression magic bytes, decompression,
UTF-8 and NUL checks, and the line arithmetic that error messages need.

About 795 lines, one file: everything that looks at a source before a reader parses it (its
path or URL, its magic bytes, its compression, its size within the operator's upload bounds,
its encoding, its inflated blocks as they stream), so that every reader and the streaming engine
sniff and bound inflation with the same table and the same counters.
"""
from __future__ import annotations

import bz2
import contextlib
import glob as globlib
import gzip
import hashlib
import io as _stdio
import lzma
import os
import queue
import re
import threading
import zipfile
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .. import settings as settings_module
from ..errors import MetricsError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")


_SHOWN = 80  # characters of an offending line quoted in a message


def stem(file_name: str) -> str:
    """``bm25.run.gz`` -> ``bm25``: drop a compression suffix, then one more suffix."""
    base = file_name
    for suffix in _COMPRESSION_SUFFIXES:
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    stem = Path(base).stem
    return stem or base


def sha256_later(raw):
    """sha256 of ``raw`` (bytes, or a path: the file's bytes) computed on a second thread
    (hashlib releases the GIL) while we parse; call the result for the hex digest.

    The thread is not a daemon: when parsing fails, the interpreter may start to exit while the
    hash still runs in C without the GIL. A daemon thread that then asks for the GIL back is
    ended by ``pthread_exit`` in the middle of finalisation, which can abort the process
    (SIGABRT, exit 134); a normal thread is joined before finalisation begins.
    """
    if isinstance(raw, (bytes, bytearray, memoryview)) and len(raw) < (1 << 20):
        digest = hashlib.sha256(raw).hexdigest()
        return lambda: digest
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("hex", _sha256(raw)), name="ndcg-lab-sha256",
                              daemon=False)
    worker.start()

    def result() -> str:
        worker.join()
        return box["hex"]
    return result


def _sha256(raw) -> str:
    if isinstance(raw, (bytes, bytearray, memoryview)):
        return hashlib.sha256(raw).hexdigest()
    with open(raw, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


class RawInput:
    """The raw bytes of one input, a file or bytes in memory, opened as often as a reader needs:
    :meth:`text` streams its text (inflated when its magic bytes name a compression)."""

    def __init__(self, *, path=None, raw: bytes | None = None):
        self.path, self.raw = path, raw
        if raw is not None:
            self.compression, self.size = compression_of(raw[:6]), len(raw)
        else:
            with open(path, "rb") as f:
                self.compression, self.size = compression_of(f.read(6)), os.fstat(f.fileno()).st_size

    @contextlib.contextmanager
    def text(self):
        """(a binary stream of the text: the bytes as they are, or inflated; a function that
        answers how many raw bytes have been read so far, read-ahead buffers included)."""
        with contextlib.ExitStack() as stack:
            raw = stack.enter_context(open(self.path, "rb")) if self.raw is None else _stdio.BytesIO(self.raw)
            stream = open_decompressed(raw, self.compression)
            if stream is not raw:
                stack.callback(stream.close)
            yield stream, raw.tell

    def digest_later(self):
        """:func:`sha256_later` of the raw bytes (compressed bytes for a compressed input)."""
        return sha256_later(self.path if self.raw is None else self.raw)


def read_parquet_table(source, **options) -> pa.Table:
    """``pyarrow.parquet.read_table`` on the calling thread only: no decoding threads
    (``use_threads=False``) and no read-ahead on Arrow's I/O pool (``pre_buffer=False``).

    An Arrow worker that still holds a slice of a buffer owned by Python (``pa.BufferReader``
    over bytes) when the interpreter starts to finalise must take the GIL to release it;
    CPython then ends that thread with ``pthread_exit``, whose unwinding through Arrow's C++
    frames calls ``std::terminate`` (SIGABRT, "terminate called without an active exception").
    With threaded decoding a process that failed right after the read aborted 4 times in 60
    under full CPU load. Parquet here is a bucket or an uploaded file, read whole; one thread
    costs little beside parsing. The command line also ends without finalising the interpreter
    (:func:`metrics.cli.leave`).
    """
    import pyarrow.parquet as pq

    return pq.read_table(source, use_threads=False, pre_buffer=False, **options)


COMPRESSION_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
"""The first bytes of every compressed format we unpack, and its name: the one table of them."""

DECOMPRESS_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError, pa.ArrowException)


PARQUET_MAGIC = b"PAR1"
"""The first bytes of a parquet file."""

UTF8_BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some editors write first; every reader skips it."""


def is_parquet(head: bytes) -> bool:
    """Whether a file's first (decompressed) bytes are parquet's."""
    return head[:4] == PARQUET_MAGIC


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark."""
    return data[3:] if data[:3] == UTF8_BOM else data


def compression_of(head: bytes) -> str | None:
    """``"gzip"``, ``"bz2"``, ``"xz"`` or ``"zstd"`` from a file's first bytes; None for anything else."""
    return next((name for magic, name in COMPRESSION_MAGIC.items() if head.startswith(magic)), None)


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


def inflate(raw: bytes, compression: str, source: str, limit: int, *, counted: bool = False) -> bytes:
    """The unpacked bytes of ``raw``, refused once they pass ``limit``.

    An input that inflates to more than one block is inflated twice: first counted block by
    block and dropped (:func:`count_inflated`), so that a bomb is refused holding one block,
    then read whole (:func:`read_stream`) only once it is known to fit within the limit.
    """
    what = f"{compression} of {len(raw):,} bytes"
    try:
        if not counted:
            blocks, first = count_inflated(open_decompressed(_raw_stream(raw, compression), compression),
                                           source, limit=limit, what=what, keep_first=True)
            if blocks <= 1:
                return first
        stream = open_decompressed(_raw_stream(raw, compression), compression)
        return read_stream(stream, source, limit=limit, what=what)
    except DECOMPRESS_ERRORS as exc:
        if isinstance(exc, MetricsError):
            raise
        raise decompress_error(exc, source) from None


def _raw_stream(raw: bytes, compression: str):
    return _stdio.BytesIO(raw) if compression != "zstd" else pa.py_buffer(raw)


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


def read_stream(stream, source: str, *, limit: int | None, what: str = "", settings=None) -> bytes:
    """Every byte of ``stream``, read in :data:`INFLATE_CHUNK` blocks (:func:`checked_blocks`) and
    refused as soon as it is bad; all of it is held until the read ends."""
    chunks = list(checked_blocks(stream, source, limit=limit, what=what, settings=settings, hold=True))
    if not chunks:
        return b""
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def checked_blocks(stream, source: str, *, limit: int | None, what: str = "", settings=None, hold: bool = False,
                   size: int | None = None):
    """``stream`` in blocks of ``size`` bytes (:data:`INFLATE_CHUNK`), each checked as it is read:

    - refused past ``limit`` bytes (the inflate limit of a compressed input; None for a plain file);
    - refused when the bytes held by all reads in progress in this process would pass the
      operator's ``inflate_budget`` (``NDCG_LAB_INFLATE_TOTAL``): N bombs at once hold at most
      that much. ``hold``: the caller keeps every block, and each stays counted until the last
      is read; else the caller keeps one at a time, and a block stops counting once the next is
      asked for. ``limit`` None counts nothing against the budget;
    - refused at a line longer than ``max_line`` (``NDCG_LAB_MAX_LINE``) in text (not JSON or
      binary), naming the line;
    - at the first block with a NUL byte in text, reading stops after that block, and the
      caller's :func:`check_text` names the byte and its line, as for the whole file.

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
                text = _is_text(chunk)
            nul = text and b"\x00" in chunk   # refused by check_text, at the NUL: nothing after it is read
            if text and not nul:
                open_line, lines = check_line_lengths(chunk, open_line, lines, settings.max_line, source)
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
                   settings=None) -> tuple[int, bytes]:
    """(blocks, first block or b"") of a stream inflated to its end (or its first NUL block) and
    dropped block by block, with every check of :func:`checked_blocks`: a bomb is refused
    holding one block. ``keep_first``: the first block is returned when it is the only one."""
    blocks, first = 0, b""
    with contextlib.closing(checked_blocks(stream, source, limit=limit, what=what, settings=settings)) as checked:
        for block in checked:
            blocks += 1
            first = block if blocks == 1 and keep_first else b""
    return blocks, first


def read_ahead(blocks):
    """``blocks`` (an iterator) with the next block produced on a second thread while the caller
    works on the one in hand: inflating (zlib, bz2, lzma and zstd release the GIL) overlaps
    parsing. One block waits at most; an error of the producer is raised to the caller at the
    block where it happened; closing the iterator stops the producer after its current block."""
    handoff: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                handoff.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for block in blocks:
                if not put((True, block)):
                    return
            put((True, None))
        except BaseException as exc:   # handed to the caller's thread, raised there
            put((False, exc))

    worker = threading.Thread(target=produce, name="ndcg-lab-inflate", daemon=False)
    worker.start()
    try:
        while True:
            ok, item = handoff.get()
            if not ok:
                raise item
            if item is None:
                return
            yield item
    finally:
        stop.set()
        worker.join()


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


def _is_text(head: bytes) -> bool:
    """Whether line checks apply: not JSON (one line may hold it all), parquet or a known binary."""
    if head[:4] in (b"PAR1", b"PK\x03\x04", b"PK\x05\x06") or compression_of(head[:6]) is not None:
        return False
    first = FIRST_DATA_LINE.search(head[3:65536] if head[:3] == b"\xef\xbb\xbf" else head[:65536])
    return first is None or first.group(1)[:1] not in (b"{", b"[")


def check_lines(data: bytes, source: str, settings=None) -> None:
    """MetricsError naming the first line of text ``data`` longer than ``max_line`` bytes."""
    settings = settings_module.load() if settings is None else settings
    if len(data) > settings.max_line and _is_text(data[:65536]):
        check_line_lengths(data, 0, 0, settings.max_line, source, count=False)


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


_SAVE_AS_TEXT = ("give a plain-text TREC file (gzip, bz2, xz and zstd are unpacked automatically), CSV/TSV, "
                 "parquet or JSON")

_OTHER_FORMATS = ((b"\x89PNG", "a PNG image"), (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"),
                  (b"%PDF", "a PDF document"), (b"\xd0\xcf\x11\xe0", "an old Office document (.xls/.doc)"),
                  (b"7z\xbc\xaf", "a 7-Zip archive"), (b"Rar!", "a RAR archive"),
                  (b"SQLite format 3\x00", "an SQLite database"), (b"\x7fELF", "a program (ELF)"),
                  (b"ARROW1", "an Arrow IPC file"))
"""Magic bytes of common files that are not runs, qrels or topics, and what to call them."""


def refuse_other_formats(data: bytes, source: str) -> None:
    """MetricsError saying what ``data`` is when it is a known non-text file (zip, Excel, UTF-16, ...)."""
    head = data[:4096]
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        kind = _zip_kind(data)
        if kind == "xlsx":
            raise MetricsError("this is an Excel workbook (.xlsx), not text", source=source,
                               fix="in Excel, save or export the sheet as tab-separated text (.tsv or .txt) "
                                   "and upload that")
        what = "an OpenDocument file" if kind == "odf" else "a Word document" if kind == "docx" else "a zip archive"
        raise MetricsError(f"this is {what}, not text", source=source,
                           fix="unpack it and upload the file inside (gzip, bz2, xz and zstd are unpacked "
                               "automatically, zip is not)")
    if len(data) > 262 and data[257:262] == b"ustar":
        raise MetricsError("this is a tar archive, not text", source=source,
                           fix="unpack it (tar -xf) and upload the file inside")
    encoding = utf16_encoding(head)
    if encoding is not None:
        raise MetricsError(f"this is {encoding} text; only UTF-8 is read", source=source,
                           fix=f"save the file as UTF-8 (for example: iconv -f {encoding.replace(' ', '')} "
                               "-t utf-8, or 'UTF-8' in the editor's Save As)")
    for magic, what in _OTHER_FORMATS:
        if head.startswith(magic):
            raise MetricsError(f"this is {what}, not text", source=source, fix=_SAVE_AS_TEXT)


def _zip_kind(data: bytes) -> str:
    """``xlsx``, ``docx``, ``odf`` or ``zip`` from the names in a zip's directory (nothing is inflated)."""
    try:
        names = zipfile.ZipFile(_stdio.BytesIO(data)).namelist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError):
        return "zip"
    if any(n.startswith("xl/") for n in names):
        return "xlsx"
    if any(n.startswith("word/") for n in names):
        return "docx"
    return "odf" if "mimetype" in names and "content.xml" in names else "zip"


def utf16_encoding(head: bytes) -> str | None:
    """``"UTF-16"`` (with a byte-order mark), ``"UTF-16 LE"``/``"UTF-16 BE"`` (without one: NUL
    in every other byte), or None."""
    if head[:2] in (b"\xff\xfe", b"\xfe\xff") and head[:4] != b"\xff\xfe\x00\x00":
        return "UTF-16"
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / len(odd)
    if odd_nul > 0.3 and even_nul < 0.05:
        return "UTF-16 LE"
    if even_nul > 0.3 and odd_nul < 0.05:
        return "UTF-16 BE"
    return None


def decompress_error(exc: BaseException, source: str) -> MetricsError:
    return MetricsError(f"cannot decompress the file ({exc})", source=source,
                        fix="the file may be truncated or damaged; download or compress it again")


FIRST_DATA_LINE = re.compile(rb"(?m)(?:^|(?<=\r))[ \t\f\v]*([^#\s][^\r\n]*)")
"""The first line that is neither blank nor a comment (group 1: the line from its first non-blank)."""


_TEXT_BYTES = bytes(range(32, 127)) + b"\t\n\r\f\v" + bytes(range(128, 256))
"""Bytes of text; a file whose first 4 kB are more than a tenth other bytes is binary as a whole."""


def check_text(data: bytes, kind, source: str) -> None:
    if not data or data.isspace():
        raise MetricsError("the file is empty" if not data else "the file holds only blank lines",
                           source=source, line=1,
                           fix=f"upload the {kind.what} file itself ({' '.join(kind.fields)} on each line)")
    nul = data.find(b"\x00")
    if nul >= 0:
        head = data[:4096]
        if len(head.translate(None, _TEXT_BYTES)) > len(head) // 10:
            raise MetricsError(f"this is binary data, not a text {kind.what} file", source=source, fix=_SAVE_AS_TEXT)
        raise MetricsError(f"binary data (a NUL byte) at byte {nul}; this is not a text {kind.what} file",
                           source=source, line=line_of_offset(data, nul), fix=_SAVE_AS_TEXT)
    if not data.isascii():
        # Decode in blocks cut at newlines (never inside a UTF-8 sequence): bounded memory.
        start = 0
        while start < len(data):
            end = data.rfind(b"\n", start, start + (16 << 20)) + 1 if start + (16 << 20) < len(data) else len(data)
            end = end if end > start else min(len(data), start + (16 << 20))
            block = data[start:end]
            if not block.isascii():
                try:
                    block.decode("utf-8")
                except UnicodeDecodeError as exc:
                    bad = start + exc.start
                    line_start = data.rfind(b"\n", 0, bad) + 1
                    raise MetricsError(
                        f"invalid UTF-8 (byte 0x{data[bad]:02x} at column {bad - line_start + 1})",
                        source=source, line=line_of_offset(data, bad),
                        fix="save the file as UTF-8 (for example: iconv -f latin1 -t utf-8)") from None
            start = end


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


# --------------------------------------------------------------------------- files and URLs


_GLOB_CHARS = re.compile(r"[*?\[]")


def is_url(path: str) -> bool:
    return "://" in path and not path.startswith("file://")


def filesystem(path: str) -> tuple[pafs.FileSystem, str]:
    """A pyarrow filesystem and the path on it: local paths directly, URLs through fsspec.

    pyarrow.fs is imported here, not with the module: it brings the S3, GCS, Azure and HDFS
    bindings and ssl (about 23 ms), which a command on local files never needs."""
    import pyarrow.fs as pafs

    path = str(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    if not is_url(path):
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


def join_path(base: str, *names: str) -> str:
    return "/".join([base.rstrip("/"), *names])


def display_name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def expand(src, *, allowed: settings_module.Settings | None = None) -> list[str]:
    """Input files of one run: a path or fsspec URL, a glob of them, or a list/tuple of those; sorted per glob.

    ``allowed``: None when the caller is the local user (the CLI, a Python program): every path
    its account can read is fine. Settings when the paths come from a visitor of the app: each
    pattern and every file it expands to must pass :func:`metrics.settings.check_server_source`
    (under a data root once symlinks are resolved, or a listed URL scheme); the resolved
    paths are returned.
    """
    if isinstance(src, (str, Path)):
        items = [str(src)]
    elif isinstance(src, (list, tuple)) and src and all(isinstance(x, (str, Path)) for x in src):
        items = [str(x) for x in src]
    else:
        raise MetricsError(f"cannot read run files from a {type(src).__name__}",
                           fix="give a path, a glob such as 'runs/part-*.txt', or a list of paths")
    if allowed is not None:
        items = [settings_module.check_server_source(item, allowed) for item in items]
    files: list[str] = []
    for item in items:
        if _GLOB_CHARS.search(item) and not (not is_url(item) and os.path.exists(os.path.expanduser(item))):
            if is_url(item):
                import fsspec
                fs, inner = fsspec.core.url_to_fs(item)
                found = sorted(fs.unstrip_protocol(p) for p in fs.glob(inner))
            else:
                found = sorted(globlib.glob(os.path.expanduser(item)))
            found = [f for f in found if not os.path.isdir(f)] if not is_url(item) else found
            if not found:
                raise MetricsError(f"no file matches {item!r}" if allowed is None else "no file matches the pattern",
                                   source=display_name(item),
                                   fix="check the pattern (a glob such as runs/part-*.txt)")
            files += found
        elif _is_directory(item):
            files += _directory_files(item)
        else:
            files.append(item if is_url(item) else os.path.abspath(os.path.expanduser(item)))
    if allowed is not None:
        files = [settings_module.check_server_source(f, allowed) for f in files]
    return files


def upload_refusals(files, settings: settings_module.Settings | None = None) -> list[MetricsError | None]:
    """For each file of one upload, in order: None when the operator's bounds keep it, else the
    MetricsError that says why not (``upload_files`` files and ``upload_bytes`` bytes in all, of
    :func:`metrics.settings.load`). Files are kept in order while both bounds hold; a file that
    would pass one is refused and the later ones still tried (a smaller one may fit).

    ``files``: the uploaded files, each with ``size`` (Streamlit's ``UploadedFile``) or bytes,
    or (name, bytes or size) pairs.
    """
    settings = settings_module.load() if settings is None else settings
    refusals, kept, total = [], 0, 0
    for item in files:
        size = _upload_size(item)
        if kept >= settings.upload_files:
            problem = f"more than {settings.upload_files} files in one upload"
            fix = "upload the rest in another batch (NDCG_LAB_UPLOAD_FILES sets the bound)"
        elif total + size > settings.upload_bytes:
            problem = f"the upload would exceed {settings_module.human_bytes(settings.upload_bytes)}"
            fix = ("compress the files (gzip, bz2, xz, zstd) or upload fewer or smaller ones at once "
                   "(NDCG_LAB_UPLOAD_BYTES sets the bound)")
        else:
            refusals.append(None)
            kept, total = kept + 1, total + size
            continue
        refusals.append(MetricsError(f"not read: {problem}", source=_upload_name(item), fix=fix))
    return refusals


def check_upload(files, settings: settings_module.Settings | None = None) -> None:
    """MetricsError, the first of :func:`upload_refusals`, when the bounds refuse a file of the upload."""
    refused = next((r for r in upload_refusals(files, settings) if r is not None), None)
    if refused is not None:
        raise refused


def _upload_name(item) -> str | None:
    if isinstance(item, tuple) and len(item) == 2:
        return str(item[0])
    return getattr(item, "name", None)


def _upload_size(item) -> int:
    if isinstance(item, tuple) and len(item) == 2:
        item = item[1]
    if isinstance(item, int):
        return item
    if isinstance(item, (bytes, bytearray, memoryview)):
        return len(item)
    size = getattr(item, "size", None)
    if isinstance(size, int):
        return size
    return len(item.getvalue())


def _is_directory(item: str) -> bool:
    if not is_url(item):
        return os.path.isdir(os.path.expanduser(item))
    fs, inner = filesystem(item)
    return fs.get_file_info(inner).type == _file_type().Directory


def _directory_files(item: str) -> list[str]:
    """The data files of a folder (as Spark or Dask write them), without _SUCCESS, .crc and other hidden files."""
    fs, inner = filesystem(item)
    import pyarrow.fs as pafs

    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True))
    found = sorted(i.path for i in infos if i.type == pafs.FileType.File
                   and not any(p.startswith(("_", ".")) for p in i.path[len(inner):].split("/") if p))
    if not found:
        raise MetricsError(f"the folder {item!r} holds no run files", source=display_name(item),
                           fix="give the folder of the run's files, or a glob such as folder/part-*")
    if is_url(item):
        prefix = item.split("://", 1)[0] + "://"
        return [prefix + p.lstrip("/") if not p.startswith(prefix) else p for p in found]
    return found


def is_shards(value) -> bool:
    """A run given as files to combine: a glob, a URL, or a list/tuple of paths (as one run)."""
    if isinstance(value, (str, Path)):
        text = str(value)
        local = os.path.expanduser(text)
        return is_url(text) or os.path.isdir(local) or (bool(_GLOB_CHARS.search(text)) and not os.path.exists(local))
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(x, (str, Path)) for x in value)


def shard_name(value) -> str:
    """System name of a run given as files: the file's stem, or the glob's without its wildcards
    (``runs/bm25-*.txt`` -> ``bm25``; ``runs/bm25/*.txt`` -> ``bm25``)."""
    first = str(value[0]) if isinstance(value, (list, tuple)) else str(value)
    base = display_name(first)
    if not _GLOB_CHARS.search(base) and not isinstance(value, (list, tuple)):
        return stem(base) or "run"
    base = re.sub(r"\[[^\]]*\]", "", base)
    base = re.sub(r"[-_.]*[*?]+", "", base)
    found = stem(base).strip("-_.") if base and not base.startswith(".") else ""
    if not found or isinstance(value, (list, tuple)) and len(value) > 1 and not _GLOB_CHARS.search(first):
        parent = display_name(first.rstrip("/").rsplit("/", 1)[0]) if "/" in first else ""
        found = found or parent
    return found or "run"


def _file_type():
    """pyarrow.fs.FileType, imported when a filesystem is in use (see :func:`filesystem`)."""
    import pyarrow.fs as pafs

    return pafs.FileType


def peek(fs: pafs.FileSystem, path: str, source: str) -> tuple[bytes, int]:
    try:
        info = fs.get_file_info(path)
    except (OSError, pa.ArrowException) as exc:
        raise MetricsError(f"cannot read {source!r}: {exc}", source=source, fix="check the path") from None
    if info.type == _file_type().NotFound:
        raise MetricsError(f"no such file: {path!r}", source=source, fix="check the path")
    if info.type == _file_type().Directory:
        raise MetricsError(f"{path!r} is a folder, not a file", source=source,
                           fix="give the run files inside it (a glob such as folder/*.txt)")
    with fs.open_input_file(path) as f:
        return f.read(65536), int(info.size)


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


def first_data_line(head: bytes) -> bytes | None:
    m = FIRST_DATA_LINE.search(head)
    return None if m is None else m.group(1).rstrip()
