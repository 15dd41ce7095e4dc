"""What a source's first bytes say it is: the one table of compression magic bytes, parquet's,
the UTF-8 byte order mark, the first data line, and the formats that are not text (zip, Excel,
UTF-16, images, PDF, ...) refused with what they are; and the check that a text file is UTF-8
without NUL bytes."""
from __future__ import annotations

import io as _stdio
import re
import zipfile

import numpy as np

from ..errors import MetricsError
from .lines import line_of_offset

COMPRESSION_MAGIC = {b"\x1f\x8b": "gzip", b"BZh": "bz2", b"\xfd7zXZ\x00": "xz", b"\x28\xb5\x2f\xfd": "zstd"}
"""The first bytes of every compressed format we unpack, and its name: the one table of them."""


PARQUET_MAGIC = b"PAR1"
"""The first bytes of a parquet file."""


UTF8_BOM = b"\xef\xbb\xbf"
"""The UTF-8 byte order mark some editors write first; every reader skips it."""


FIRST_DATA_LINE = re.compile(rb"(?m)(?:^|(?<=\r))[ \t\f\v]*([^#\s][^\r\n]*)")
"""The first line that is neither blank nor a comment (group 1: the line from its first non-blank)."""


def compression_of(head: bytes) -> str | None:
    """``"gzip"``, ``"bz2"``, ``"xz"`` or ``"zstd"`` from a file's first bytes; None for anything else."""
    return next((name for magic, name in COMPRESSION_MAGIC.items() if head.startswith(magic)), None)


def is_parquet(head: bytes) -> bool:
    """Whether a file's first (decompressed) bytes are parquet's."""
    return head[:4] == PARQUET_MAGIC


def without_bom(data: bytes) -> bytes:
    """``data`` without a leading UTF-8 byte order mark."""
    return data[3:] if data[:3] == UTF8_BOM else data


def first_data_line(head: bytes) -> bytes | None:
    """The first line of ``head`` that is neither blank nor a comment, from its first non-blank."""
    m = first_data_match(head)
    return None if m is None else m.group(1).rstrip()


def first_data_match(text: bytes) -> re.Match[bytes] | None:
    """:data:`FIRST_DATA_LINE`'s match in ``text``, the expression tried at one line only: that
    line is found by :func:`_first_data_start` (numpy, slice by slice), since the expression tries
    every byte of a block of comment lines (two seconds over 16 MiB of them, where the slices take
    a few tens of milliseconds)."""
    at = _first_data_start(text, _first_ink_line(text))
    if at is None:
        return None
    return FIRST_DATA_LINE.search(text, max(text.rfind(b"\n", 0, at), text.rfind(b"\r", 0, at)) + 1)


def _first_ink_line(text: bytes) -> int:
    """Where the line of ``text``'s first non-blank byte starts (``len(text)`` when all is blank):
    the blank lines before it are skipped by ``bytes.lstrip`` (tens of milliseconds over 16 MiB)
    rather than tried by :data:`FIRST_DATA_LINE` at every line start (seconds), a slice of
    :data:`_INK_SLICE` bytes at a time: ``lstrip`` copies what it keeps, and a text that starts
    with a blank would be copied whole."""
    ink = 0
    while ink < len(text):
        piece = text[ink:ink + _INK_SLICE]
        kept = len(piece.lstrip())
        ink += len(piece) - kept
        if kept:
            break
    return max(text.rfind(b"\n", 0, ink), text.rfind(b"\r", 0, ink)) + 1


_INK_SLICE = 1 << 20


def _first_data_start(text: bytes, at: int) -> int | None:
    """Where the first data line's first non-blank byte is, from ``at`` (a line start), or None.
    Slices of whole lines, the first one small, so a file whose data starts at once costs little."""
    size = 1 << 16
    while at < len(text):
        stop = max(text.rfind(b"\n", at, at + size), text.rfind(b"\r", at, at + size)) + 1
        if stop <= at:          # one line longer than the slice
            ends = [end for end in (text.find(b"\n", at + size), text.find(b"\r", at + size)) if end >= 0]
            stop = min(ends) + 1 if ends else len(text)
        found = _data_in_lines(np.frombuffer(text, dtype=np.uint8, count=stop - at, offset=at))
        if found is not None:
            return at + found
        at, size = stop, 1 << 20
    return None


def _data_in_lines(a: np.ndarray) -> int | None:
    """The first data line's first non-blank byte in ``a`` (whole lines), or None."""
    starts = data_starts(a)
    return int(starts[0]) if len(starts) else None


def data_starts(a: np.ndarray) -> np.ndarray:
    """The first non-blank byte of every data line (neither blank nor a comment) of ``a``, text
    that starts at a line start. Each line's first byte is looked at; only where a line starts
    with a blank (space, tab, \v, \f) is every byte: the first that is neither blank nor a line
    end, after a line end, and not ``#``."""
    if not len(a):
        return np.empty(0, dtype=np.int64)
    ends = (a == 10) | (a == 13)
    starts = np.flatnonzero(ends) + 1
    starts = np.concatenate(([0], starts[starts < len(a)]))
    first = a[starts]
    if not ((first == 32) | (first == 9) | (first == 11) | (first == 12)).any():
        return starts[(first != 35) & (first != 10) & (first != 13)]
    marks = np.flatnonzero((a != 32) & (a != 9) & (a != 11) & (a != 12))
    if not len(marks):
        return marks
    marked_ends = ends[marks]
    after = np.empty(len(marks), dtype=bool)
    after[0] = True
    after[1:] = marked_ends[:-1]
    firsts = marks[after & ~marked_ends]
    return firsts[a[firsts] != 35]


def line_checks_apply(head: bytes) -> bool:
    """Whether line checks apply: not JSON (one line may hold it all), parquet or a known binary."""
    if head[:4] in (b"PAR1", b"PK\x03\x04", b"PK\x05\x06") or compression_of(head[:6]) is not None:
        return False
    first = FIRST_DATA_LINE.search(head[3:65536] if head[:3] == b"\xef\xbb\xbf" else head[:65536])
    return first is None or first.group(1)[:1] not in (b"{", b"[")


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
