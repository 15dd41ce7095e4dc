"""TREC text (``qid Q0 docno rank score tag`` and ``qid iter docno rel``) parsed in bulk.

The bytes go to ``pyarrow.csv`` with a one-byte delimiter; only when a file is not already
single-space (or single-tab) separated is it normalised first, with numpy over the whole
buffer. No Python loop runs over lines. Every row remembers its 1-based line in the original
file, so errors name it; blank and comment lines (first non-blank character ``#``) count as
lines. A ``#`` inside a field (``msmarco_v2.1_doc_00_1#4_16``) is data.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import MetricsError
from .inflate import checked_blocks, read_ahead
from .lending import lend
from .lines import a_line_starts_with, count_newlines
from .validate import QRELS, RUN, Kind, LineMap, Origin, article, cast_grades, cast_ranks, cast_scores

BLOCK_SIZE = 16 << 20

FILE_BLOCK = 16 << 20
"""Bytes of a file read and parsed at a time by :func:`read_trec_blocks` (below glibc's largest
mmap threshold, so that each block reuses the memory of the one before)."""

_NOT_CLEAN = (b"\x00", b"\r", b"\t")
"""Bytes that send a file to the whole-file path (binary data, \\r line ends, tabs)."""

_NOT_PLAIN_START = (b" ", b"#", b"\n", b"\f", b"\v")
"""First bytes of a text that is not read in blocks: a blank, comment or blank line first."""

_NOT_CLEAN_FIRSTS = b"#\n "
"""First bytes of a line that only a text to normalise holds: a comment line, a blank line, a
line starting with a blank (one scan of the text, :func:`metrics.io.lines.a_line_starts_with`,
against a parse of all of it that the checks would refuse)."""

HEAD_BYTES = 1 << 16
"""A text longer than this has its first lines judged alone before the whole is normalised."""


def read_trec(data: bytes, kind: Kind, source: str) -> tuple[pa.Table, Origin]:
    """Parse TREC text into typed columns; see the module docstring for the strategy."""
    table = _read_clean(data, kind)
    if table is not None:
        return table, Origin(source, LineMap(), data, trec=True)
    if len(data) > HEAD_BYTES:
        check_head(data, kind, source)
    found = _read_normalised(data, kind)
    if found is not None:
        return found[0], Origin(source, found[1], data, trec=True)
    norm, lines = normalise(data)
    origin = Origin(source, lines, data, trec=True)
    if not norm:
        raise MetricsError("no data lines: every line is blank or a comment (#)", source=source,
                           fix=f"a {kind.what} file has lines like: {' '.join(kind.fields)}")
    counts = _first_line_fields(norm)
    if _fields_fit(counts, kind):
        try:
            table = _pyarrow_read(norm, kind, b" ", counts, typed=True, ignore_empty=True)
            if table.num_rows == _row_count(lines, norm):
                return table, origin
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return _diagnose(norm, kind, origin), origin


def _read_normalised(data: bytes, kind: Kind) -> tuple[pa.Table, LineMap] | None:
    """Text that must be normalised, normalised and parsed block by block (:func:`normalised_blocks`),
    with the field count of the first data line for every block: (table, rows to lines), or None
    when a block does not parse into one row per data line (the caller then diagnoses the whole
    text). Neither the whole normalised text nor its passes' temporaries are ever held: the text,
    its table and one block's work, where the whole text normalised at once took about five
    times the text."""
    tables, masks, n_fields = [], [], 0
    for norm, nonempty in normalised_blocks(data):
        masks.append(nonempty)
        rows = int(np.count_nonzero(nonempty))
        if not rows:
            continue
        if not n_fields:
            n_fields = _first_line_fields(norm)
            if not _fields_fit(n_fields, kind):
                return None
        try:
            table = _pyarrow_read(norm, kind, b" ", n_fields, typed=True, ignore_empty=True,
                                  pool=_blocks_pool(kind))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            return None
        if table.num_rows != rows:
            return None
        tables.append(table)
        del norm
    if not tables:
        return None
    pa.default_memory_pool().release_unused()   # the parser's scratch memory, back to the system
    return (tables[0] if len(tables) == 1 else pa.concat_tables(tables)), line_map(masks)


def _blocks_pool(kind: Kind) -> pa.MemoryPool | None:
    """Where the blocks' tables of :func:`_read_normalised` are made. Qrels: glibc's, whose blocks
    of a few MiB are mappings of their own, given back when freed; in pyarrow's mimalloc the
    parser's scratch and the small tables of qrels' short lines share pages that stay held (3M
    qrels lines with a blank before each: 4.61 times the text there, 4.27 in glibc's). Runs:
    the default pool (the same for a run: 3.78 there, 4.10 in glibc's)."""
    return None if kind is RUN else pa.system_memory_pool()


def read_trec_blocks(src, kind: Kind, source: str, plain_head,
                     digest=None) -> tuple[pa.Table, Origin, str | None] | None:
    """A large single-space TREC text read in blocks: (table, source, sha256 of the blocks or
    None), or None.

    ``src``: the path of a plain file (its blocks are hashed: the sha256 of the file), or an
    iterable of blocks of text (:func:`metrics.io.inflate.checked_blocks`; inflated text of a
    compressed input, bytes in memory), hashed into ``digest`` (a hashlib object) when one is
    given. The whole text is never in memory at once: each block of :data:`FILE_BLOCK` bytes is
    checked, hashed on a second thread and parsed with the options of the fast path (the field
    count of the first line for every block), and freed. None when the text is smaller than a
    block, the path cannot be opened, ``plain_head(first_block)`` is false (compressed, parquet,
    JSON, a header line, ...) or anything is not plain (NUL, \\r, tabs, non-ASCII, blank or
    comment lines, empty fields, a line that does not parse): the caller then reads the whole
    text, whose path names the line and the problem. Rows and lines agree one to one, as on the
    fast path. A MetricsError of the blocks' own checks (a line too long) is raised as it is.
    """
    if isinstance(src, (str, os.PathLike)):
        try:
            f = open(src, "rb")
        except OSError:
            return None
        if f.read(1) in _NOT_PLAIN_START:   # read whole, normalised: no 16 MiB block read only to be dropped
            f.close()
            return None
        f.seek(0)
        # the next block read and checked on a second thread while one is parsed
        with f, contextlib.closing(read_ahead(checked_blocks(f, source, limit=None, size=FILE_BLOCK))) as blocks:
            return read_trec_blocks(blocks, kind, source, plain_head, hashlib.sha256())
    blocks = iter(src)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ndcg-lab-sha256") as hashing:
        block = next(blocks, b"")
        if len(block) < FILE_BLOCK or not plain_head(block) or block[:1] in _NOT_PLAIN_START:
            return None
        end = re.search(rb"\n", block[:65536])
        n_fields = block[: end.start()].count(b" ") + 1 if end else 0
        if n_fields < kind.required or (kind.exact and n_fields != kind.required):
            return None
        tables, pending = [], b""
        while block:
            hashed = hashing.submit(digest.update, block) if digest is not None else None
            if any(byte in block for byte in _NOT_CLEAN) or not block.isascii():
                _wait(hashed)
                return None
            first_end = block.find(b"\n") + 1
            last_end = block.rfind(b"\n") + 1
            pieces: list[bytes | memoryview] = [pending + block[:first_end]] if first_end else []
            if first_end:
                pieces.append(memoryview(block)[first_end:last_end])
                pending = block[last_end:]
            else:
                pending += block
            for piece in pieces:
                if len(piece):
                    table = _parsed_block(piece, kind, n_fields)
                    if table is None:
                        _wait(hashed)
                        return None
                    tables.append(table)
            _wait(hashed)
            del pieces, block
            block = next(blocks, b"")
        if pending:
            table = _parsed_block(pending, kind, n_fields)
            if table is None:
                return None
            tables.append(table)
    pa.default_memory_pool().release_unused()   # the parser's scratch memory, back to the system
    return (pa.concat_tables(tables), Origin(source, LineMap(), None, trec=True),
            None if digest is None else digest.hexdigest())


def _wait(hashed) -> None:
    if hashed is not None:
        hashed.result()


def _parsed_block(piece, kind: Kind, n_fields: int) -> pa.Table | None:
    """Whole lines of a single-space TREC file as typed columns, or None when they are not clean."""
    try:
        table = _pyarrow_read(piece, kind, b" ", n_fields, typed=True, ignore_empty=False,
                              block_size=FILE_BLOCK // 4)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    return table if _clean_strings(table, kind) else None


def _clean_strings(table: pa.Table, kind: Kind) -> bool:
    """No empty qid, docno or tag (doubled or leading blanks), no qid starting with ``#`` (a comment)."""
    for col in ["qid", "docno"] + (["tag"] if kind is RUN else []):
        if table.num_rows and pc.min_max(pc.binary_length(table[col]))["min"].as_py() == 0:
            return False
    return not (table.num_rows and pc.any(pc.starts_with(table["qid"], "#")).as_py())


def _read_clean(data: bytes, kind: Kind) -> pa.Table | None:
    """Fast path: one space (or one tab) between fields, no comment or blank lines.

    Returns None when the file needs normalising; the checks after parsing
    catch what the delimiter alone cannot (leading blanks, doubled delimiters,
    comments, blank lines).
    """
    if data[:1] in (b" ", b"\t", b"#", b"\n", b"\r", b"\f", b"\v"):
        return None
    has_tab = b"\t" in data
    if has_tab and b" " in data:
        delimiter, padded = b"\t", True     # trec_eval's own test files: "301\tQ0\t...\t  2.13\t..."
    elif has_tab:
        delimiter, padded = b"\t", False
    else:
        delimiter, padded = b" ", False
    end = re.search(rb"[\r\n]", data[:65536])
    first = data[: end.start()] if end else data[:65536]
    n_fields = first.count(delimiter) + 1
    if n_fields < kind.required or (kind.exact and n_fields != kind.required):
        return None
    if delimiter == b" " and (b"  " in first or first.endswith(b" ")):
        return None   # doubled or trailing blanks: normalised, not parsed whole only to fail
    if a_line_starts_with(data, _NOT_CLEAN_FIRSTS):
        return None   # a comment, blank line or leading blank: a whole parse would only fail
    try:
        table = _pyarrow_read(data, kind, delimiter, n_fields, typed=not padded, ignore_empty=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    strings = ["qid", "docno"] + (["tag"] if kind is RUN else [])
    if padded:
        columns = {}
        for col in table.column_names:
            values = table[col]
            if col in strings:
                if pc.any(pc.match_substring(values, " ")).as_py():
                    values = pc.ascii_trim(values, " ")
                    if pc.any(pc.match_substring(values, " ")).as_py():
                        return None   # blanks inside a field: not one field per tab
            columns[col] = values
        numeric = {"rank": pa.int64(), "score": pa.float64()} if kind is RUN else {"rel": pa.int64()}
        for col, typ in numeric.items():
            try:
                columns[col] = pc.cast(columns[col], typ)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                try:
                    columns[col] = pc.cast(pc.ascii_trim(columns[col], " "), typ)
                except (pa.ArrowInvalid, pa.ArrowTypeError):
                    return None
        table = pa.table(columns)
    return table if _clean_strings(table, kind) else None


def _fields_fit(counts: int, kind: Kind) -> bool:
    return counts == kind.required or (counts > kind.required and not kind.exact)


def check_head(data: bytes, kind: Kind, source: str) -> None:
    """The error of a text whose first data line has the wrong number of fields, found in its
    first :data:`HEAD_BYTES` alone (``data`` may be just those). Normalising and diagnosing a
    whole file takes about five times its size in memory: a 2 GB run given where qrels were
    expected took 59 s and 10 GB to be refused at line 1. The head ends at a line end, so its
    lines and their numbers are the file's."""
    cut = data.rfind(b"\n", 0, HEAD_BYTES) + 1
    if cut == 0:
        return
    head = data[:cut]
    norm, lines = normalise(head)
    if norm and not _fields_fit(_first_line_fields(norm), kind):
        _diagnose(norm, kind, Origin(source, lines, head, trec=True))   # raises at the first line


def _pyarrow_read(data, kind: Kind, delimiter: bytes, n_fields: int, *, typed: bool,
                  ignore_empty: bool, block_size: int = BLOCK_SIZE, pool: pa.MemoryPool | None = None) -> pa.Table:
    names = [f"_{i}" for i in range(n_fields)]
    wanted = {0: "qid", 2: "docno", 3: "rank", 4: "score", 5: "tag"} if kind is RUN \
        else {0: "qid", 2: "docno", 3: "rel"}
    for i, col in wanted.items():
        names[i] = col
    types = {col: pa.string() for col in wanted.values()}
    if typed:
        types.update({"rank": pa.int64(), "score": pa.float64()} if kind is RUN else {"rel": pa.int64()})
    return lend(
        pacsv.read_csv, data,
        read_options=pacsv.ReadOptions(column_names=names, block_size=block_size),
        parse_options=pacsv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, double_quote=False,
                                          escape_char=False, ignore_empty_lines=ignore_empty),
        convert_options=pacsv.ConvertOptions(include_columns=list(wanted.values()), column_types=types,
                                             null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False),
        memory_pool=pool)


_BLANKS_TO_SPACE = bytes.maketrans(b"\t\v\f", b"   ")

NORMALISE_BLOCK = 2 << 20
"""Bytes of text normalised at a time: the passes over a block take about four times its size,
so a text of any size costs that much once, beside its normalised copy, instead of four times
itself."""


def normalise(data: bytes) -> tuple[bytes, LineMap]:
    """One space between fields, no blank at line ends, comment lines emptied; lines kept.

    Returns the normalised bytes and the map from data rows (non-empty lines)
    to original line numbers. Whitespace as in trec_eval: space, tab, \\f, \\v;
    \\r\\n, \\r and \\n end lines. Done block by block of whole lines
    (:func:`normalised_blocks`), so the passes hold a block's temporaries, not the
    whole text's.
    """
    if not data:
        return data, LineMap()
    pieces, masks = [], []
    for norm, nonempty in normalised_blocks(data):
        pieces.append(norm)
        masks.append(nonempty)
    joined = pieces[0] if len(pieces) == 1 else b"".join(pieces)
    del pieces
    return (data if joined == data else joined), line_map(masks)


def normalised_blocks(data: bytes, size: int | None = None):
    """``(normalised bytes, which of its lines hold data)`` for each block of whole lines of
    ``data`` of about ``size`` bytes (:data:`NORMALISE_BLOCK`): every line is normalised on its
    own, so the blocks' texts joined are the whole text normalised, and their masks joined say
    which lines of the whole hold data."""
    size = size or NORMALISE_BLOCK
    start = 0
    while start < len(data):
        cut = _block_end(data, start, size)
        yield _normalise_block(data[start:cut] if start or cut < len(data) else data)
        start = cut


def _block_end(data: bytes, start: int, size: int) -> int:
    """The end of a block from ``start``: after the last line end within ``size`` bytes (an
    \\r\\n kept whole), else after the first line end past them, else the end of ``data``."""
    stop = start + size
    if stop >= len(data):
        return len(data)
    cut = data.rfind(b"\n", start, stop) + 1
    if cut > start:
        return cut
    cut = data.rfind(b"\r", start, stop) + 1
    if cut == 0:
        ends = [at for at in (data.find(b"\n", stop), data.find(b"\r", stop)) if at >= 0]
        if not ends:
            return len(data)
        cut = min(ends) + 1
    return cut + 1 if data[cut:cut + 1] == b"\n" and data[cut - 1:cut] == b"\r" else cut


def line_map(masks: list[np.ndarray]) -> LineMap:
    """The rows-to-lines map of a text whose lines hold data where ``masks`` (concatenated) say."""
    nonempty = np.concatenate(masks) if len(masks) != 1 else masks[0]
    if nonempty.all():
        return LineMap()
    return LineMap(np.flatnonzero(nonempty) + 1, 0)


def _normalise_block(data: bytes) -> tuple[bytes, np.ndarray]:
    """:func:`normalise` of whole lines: the normalised bytes and which lines hold data.
    Whole-buffer passes: a translate, one compaction of doubled and trailing blanks, then per-line
    work (leading blanks, comments) on the line starts only."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if b"\t" in data or b"\v" in data or b"\f" in data:
        data = data.translate(_BLANKS_TO_SPACE)
    a = np.frombuffer(data, dtype=np.uint8)
    blank = a == 32
    drop = np.empty(len(a), dtype=bool)
    drop[:-1] = blank[:-1] & (blank[1:] | (a[1:] == 10))   # keep the last blank of a run; none before \n
    drop[-1] = blank[-1]
    del blank
    if drop.any():
        a = a[~drop]
    del drop
    newlines, starts, ends = line_bounds(a)
    present = starts < ends
    first = np.full(len(starts), 10, dtype=np.uint8)
    first[present] = a[starts[present]]
    second = np.full(len(starts), 10, dtype=np.uint8)
    longer = ends - starts > 1
    second[longer] = a[starts[longer] + 1]
    comment = (first == 35) | ((first == 32) & (second == 35))
    lead = (first == 32) & ~comment
    if comment.any() or lead.any():
        removed = np.concatenate((starts[lead], ranges(starts[comment], ends[comment])))
        removed.sort()
        a = np.delete(a, removed)
        starts = starts - np.searchsorted(removed, starts)
        ends = ends - np.searchsorted(removed, ends)
    return (data if len(a) == len(data) else a.tobytes()), ends > starts


def line_bounds(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newline positions, and start/end (exclusive, without the newline) of every line."""
    newlines = np.flatnonzero(a == 10)
    n_lines = len(newlines) + (len(a) > 0 and a[-1] != 10)
    starts = np.concatenate(([0], newlines + 1))[:n_lines]
    ends = np.concatenate((newlines, [len(a)]))[:n_lines]
    return newlines, starts, ends


def ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """All positions in the half-open ranges [starts, ends), concatenated (no Python loop)."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def _row_count(lines: LineMap, norm: bytes) -> int:
    if lines.lines is not None:
        return len(lines.lines)
    return count_newlines(norm) + (not norm.endswith(b"\n"))


def _first_line_fields(norm: bytes) -> int:
    m = re.search(rb"(?m)^[^\n]+", norm)
    return m.group(0).count(b" ") + 1 if m else 0


def _diagnose(norm: bytes, kind: Kind, origin: Origin) -> pa.Table:
    """Slow path on normalised text: locate the first bad line, or cut extra fields of a run.

    Field counts per line come from numpy over the whole buffer; type errors
    are located by bisection over pyarrow casts.
    """
    a = np.frombuffer(norm, dtype=np.uint8)
    newlines, starts, ends = line_bounds(a)
    n_lines = len(starts)
    nonempty = np.flatnonzero(ends > starts)
    spaces = np.flatnonzero(a == 32)
    line_of_space = np.searchsorted(newlines, spaces)
    fields = np.bincount(line_of_space, minlength=n_lines)[nonempty] + 1
    bad = fields != kind.required if kind.exact else fields < kind.required
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _column_error(origin, kind, row, int(fields[row]), row == 0,
                            _line_fields(norm, starts[nonempty[row]], ends[nonempty[row]]))
    if (fields > kind.required).any():
        # trec_eval reads the first six fields of a run line and ignores the rest.
        long_rows = np.flatnonzero(fields > kind.required)
        long_lines = nonempty[long_rows]
        first_space = np.searchsorted(line_of_space, long_lines)
        cut_from = spaces[first_space + kind.required - 1]
        norm = np.delete(a, ranges(cut_from, ends[long_lines])).tobytes()
    table = _pyarrow_read(norm, kind, b" ", kind.required, typed=False, ignore_empty=True)
    return _cast_text_columns(table, kind, origin)


def _line_fields(norm: bytes, start: int, end: int) -> list[str]:
    return norm[start:end].decode("utf-8", errors="replace").split(" ")


def _column_error(origin: Origin, kind: Kind, row: int, found: int, first: bool,
                  fields: list[str]) -> MetricsError:
    expected = f"{'exactly' if kind.exact else 'at least'} {kind.required} columns ({' '.join(kind.fields)})"
    problem = f"expected {expected}, found {found}"
    looks_other = (kind is RUN and found == 4) or \
        (kind is QRELS and found >= 6 and (len(fields) > 1 and fields[1].upper() == "Q0" or found == 6))
    if first and looks_other:
        fix = (f"this looks like a {kind.other} file ({' '.join(kind.other_fields)}); "
               f"load it as {article(kind.other)} (read_{kind.other})")
    elif looks_other:
        fix = (f"this line looks like a {kind.other} line ({' '.join(kind.other_fields)}); "
               f"fix or delete it")
    elif kind is RUN and found == 5:
        fix = "a run line with 5 fields usually lacks the Q0 column or the run tag; every line needs all six"
    elif kind is QRELS and found == 3:
        fix = "a qrels line with 3 fields usually lacks the iteration column; write 0 there (qid 0 docno rel)"
    elif kind is QRELS and found > 4:
        fix = "qrels lines have exactly four fields; remove the extra columns (probability files are not qrels)"
    else:
        fix = f"every line needs {' '.join(kind.fields)}; fix or delete this line"
    return origin.error(row, problem, fix)


def _cast_text_columns(table: pa.Table, kind: Kind, origin: Origin) -> pa.Table:
    columns = {col: table[col] for col in table.column_names}
    if kind is RUN:
        columns["score"] = cast_scores(columns["score"], origin)
        columns["rank"] = cast_ranks(columns["rank"], origin)
    else:
        columns["rel"] = cast_grades(columns["rel"], origin)
    return pa.table(columns)
