"""Partition tasks: read one part of a run (a whole file, or a byte range of a large plain-text
file cut at line boundaries) in pieces of whole lines, parse each piece with ``metrics.io`` (same
normalisation, validation and messages; line numbers shifted to the original file) and append
each bucket's rows to its own Arrow IPC fragment ``run/b{bucket}/p{part}.arrow``. Memory is
bounded by the piece size, never by the run.

The piece reader, the three part readers (text, parquet, whole file) and the fragment writers
(:mod:`metrics.engines.fragments`) share ``PartResult`` and one rule: every line number and row
shift refers to the original file. The text reader (:func:`partition_text`) also
feeds :mod:`metrics.engines.contiguous`'s scoring sink, so that a run read in one pass is checked
and parsed by the same code.
"""
from __future__ import annotations

import dataclasses
import lzma
import re
import zlib
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from functools import partial

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import io
from ..errors import MetricsError
from ..io.inflate import (
    DECOMPRESS_ERRORS,
    decompress_error,
    open_decompressed,
    read_ahead,
)
from ..io.keys import as_array
from ..io.lines import line_of_offset
from ..io.paths import display_name, filesystem, peek
from ..io.read import layout_of
from ..io.sniff import check_text, compression_of, first_data_line, without_bom
from ..io.tables import ALIASES, pick
from ..io.trec import read_trec
from ..io.validate import (
    RUN,
    LineMap,
    Origin,
    cast_ranks,
    cast_scores,
    finite_scores,
    numeric_column,
    quoting,
    string_column,
)
from .fragments import (  # noqa: F401  (importable from here, as before the split)
    FRAGMENT_SCHEMA,
    FRAGMENT_SUFFIX,
    STOP,
    FragmentWriters,
    Stopped,
    fragment_table,
    ipc_options,
    read_ipc,
    stop_requested,
    write_ipc,
)
from .pieces import (
    PieceChecks,
    count_lines,
    last_data_line,
    last_line,
    read_pieces,
    read_pieces_seekable,
)

PIECE_BYTES = 16 << 20          # text read and parsed at a time by one partition task: small enough that the
                                # passes over a piece (NUL, ASCII, line ends, the parse) find it in the CPU cache


FIRST_PIECE_BYTES = 1 << 20     # the first piece of a compressed part: parsed before the inflate ratio can
                                # judge the stream (every input may reach RATIO_FLOOR), so a bomb's first
                                # piece costs what 1 MiB of its lines costs, not 16 MiB


RANGE_BYTES = 512 << 20         # plain text files larger than this are split into byte ranges (parts)


MIN_RANGE_BYTES = 64 << 20      # ... and on a Dask cluster into ranges of at least this, two per worker


ROW_GROUP_ROWS = 1 << 20


@dataclass
class Part:
    """One partition task: a whole file, or the lines starting in a byte range of a plain text file."""

    index: int
    file: int
    path: str
    source: str
    kind: str            # "text" | "parquet" | "whole" (headed CSV/JSON: io.read_run on the whole file)
    compression: str | None
    start: int = 0
    end: int | None = None
    size: int = 0        # bytes of input this part covers (for progress)
    quote: bool = True   # errors quote the offending line (off for server files a visitor named)


def plan(files: list[str], range_bytes: int) -> list[Part]:
    """Split the inputs into partition tasks: byte ranges of large plain text files, whole files otherwise."""
    parts: list[Part] = []
    for file_index, path in enumerate(files):
        fs, inner = filesystem(path)
        source = display_name(path)
        head, size = peek(fs, inner, source)
        compression = compression_of(head)
        text = head
        if compression is not None:
            try:
                with fs.open_input_file(inner) as raw:
                    text = open_decompressed(raw, compression).read(65536)
            except DECOMPRESS_ERRORS as exc:
                raise decompress_error(exc, source) from None
        kind = layout_of(text)
        if kind == "text" and compression is None and size > range_bytes and b"\n" in head:
            n_ranges = -(-size // range_bytes)
            bounds = [size * i // n_ranges for i in range(n_ranges + 1)]
            for start, end in zip(bounds[:-1], bounds[1:]):
                parts.append(Part(len(parts), file_index, path, source, kind, None, start, end, end - start))
        else:
            parts.append(Part(len(parts), file_index, path, source, kind, compression, 0, None, size))
    return parts


def _shifted(exc: MetricsError, lines: int) -> MetricsError:
    """The same error with its line moved by ``lines`` (a piece's offset in its file)."""
    line = None if exc.line is None else exc.line + lines
    return MetricsError(exc.problem, source=exc.source, line=line, fix=exc.fix)


@dataclass
class PartResult:
    part: int
    lines: int = 0                    # lines (text) or rows (parquet) the part read
    rows: int = 0
    bucket_rows: dict = field(default_factory=dict)   # bucket -> rows written
    has_rank: bool = True
    error: tuple | None = None        # (problem, source, line, fix): a MetricsError, line relative to the part
    stopped: bool = False             # ended early because the driver asked (another part failed)


def partition_part(part: Part, out: str, n_buckets: int, piece_bytes: int, row_group_rows: int,
                    on_duplicate: str, on_bytes: Callable[[int], None] | None = None) -> PartResult:
    """Partition task: read one part, validate it with metrics.io, append its rows to the bucket fragments.

    Errors come back as data (``PartResult.error``) with the line relative to the part, since only
    the driver knows how many lines the parts before this one hold.
    """
    result = PartResult(part.index)
    writers = FragmentWriters(out, part.index, n_buckets, row_group_rows)
    if stop_requested(writers.fs, writers.root):
        result.stopped = True
        return result
    try:
        with quoting(part.quote):
            fs, inner = filesystem(part.path)
            if part.kind == "parquet":
                _partition_parquet(part, fs, inner, writers, result, on_bytes)
            elif part.kind == "whole":
                _partition_whole(part, fs, inner, writers, result, on_duplicate)
            else:
                partition_text(part, fs, inner, writers, result, piece_bytes, on_bytes)
    except MetricsError as exc:
        result.error = (exc.problem, exc.source, exc.line, exc.fix)
    except Stopped:
        result.stopped = True
    finally:
        writers.close()
    result.bucket_rows = writers.rows
    return result


def partition_text(part: Part, fs, inner: str, writers, result: PartResult, piece_bytes: int,
                   on_bytes) -> None:
    """Read a text part piece by piece: each piece checked, parsed and handed to ``writers.write``
    (the fragment writers, or :mod:`metrics.engines.contiguous`'s scoring sink; either has
    ``fs`` and ``root``, the folder where the driver asks for a stop)."""
    with fs.open_input_file(inner) as raw:
        start = part.start
        if start > 0:
            # A range owns the lines that start inside it: skip the one crossing its start.
            raw.seek(start - 1)
            while True:
                block = raw.read(1 << 16)
                cut = block.find(b"\n")
                if cut >= 0:
                    start += cut
                    break
                if not block:
                    return
                start += len(block)
            # only a bad first piece asks for it: before a part of a file of comment lines lie
            # all the lines before it, which the blocks' checks may refuse first
            prefix: bytes | Callable[[], bytes | None] | None = partial(_previous_data_line, raw, start)
            raw.seek(start)
            if part.end is not None and start >= part.end:
                return
        else:
            prefix = None
        stream = open_decompressed(raw, part.compression)
        limit = None if part.end is None else part.end - start
        before = 0            # lines of this part before the current piece
        last_pos = raw.tell() if part.compression else start
        first = part.start == 0
        try:
            checks = PieceChecks(part.source, part.compression is not None, raw.tell)
            # a compressed part is inflated on a second thread while the piece before is parsed
            pieces = read_ahead(read_pieces(stream, piece_bytes, limit, checks, FIRST_PIECE_BYTES)) \
                if part.compression else read_pieces_seekable(raw, piece_bytes, limit, checks)
            with closing(pieces):
                for piece in pieces:
                    if stop_requested(writers.fs, writers.root):   # the driver stopped (an error, a SIGTERM)
                        raise Stopped
                    if first:
                        piece = without_bom(piece)
                    first = False
                    table, lines = _parse_piece(piece, prefix, part.source, before)
                    # A clean piece (one data line per line) needs no count: pyarrow gave one row per line.
                    clean = table is not None and lines[-1] - before == table.num_rows and \
                        last_data_line(piece) == last_line(piece) and b"\r" not in piece
                    n_lines = table.num_rows if clean else count_lines(piece)
                    if table is not None:
                        writers.write(fragment_table(table, part.index, lines))
                        result.rows += table.num_rows
                        prefix = last_data_line(piece)
                    before += n_lines
                    if on_bytes is not None:
                        pos = raw.tell()
                        on_bytes(pos - last_pos)
                        last_pos = pos
        except (OSError, EOFError, zlib.error, lzma.LZMAError, pa.ArrowException) as exc:
            if part.compression is None:
                raise MetricsError(f"cannot read the file ({exc})", source=part.source,
                                   fix="check the path and permissions") from None
            raise decompress_error(exc, part.source) from None
    result.lines = before
    if part.start == 0 and part.end is None and result.rows == 0:
        _no_data(part.source, before)


def _previous_data_line(raw, start: int) -> bytes | None:
    """The last data line before byte ``start`` (read backwards in small blocks)."""
    end = start
    while end > 0:
        begin = max(0, end - (1 << 16))
        raw.seek(begin)
        block = raw.read(end - begin)
        line = last_data_line(block[block.find(b"\n") + 1:] if begin > 0 else block)
        if line is not None:
            return line
        end = begin + max(block.find(b"\n"), 0) if begin > 0 else 0
    return None


def _no_data(source: str, n_lines: int) -> None:
    if n_lines == 0:
        raise MetricsError("the file is empty", source=source, line=1,
                           fix=f"upload the run file itself ({' '.join(RUN.fields)} on each line)")
    raise MetricsError(f"no data lines: all {n_lines} lines are blank or comments (#)", source=source,
                       line=n_lines, fix=f"a run file has one line per document: {' '.join(RUN.fields)}")


def _parse_piece(piece: bytes, prefix: bytes | Callable[[], bytes | None] | None, source: str, before: int):
    """Parse one piece of whole lines with metrics.io; rows and their original line numbers.

    ``prefix`` is the previous data line of the file (or what finds it, called only when asked). A
    bad piece is parsed again behind it, so that the message judges the piece's first line as a line
    inside the file (metrics.io words a bad first line of a file differently), exactly as reading
    the whole file would.
    """
    nul = piece.find(b"\x00")
    if nul >= 0:
        raise MetricsError("binary data (a NUL byte); this is not a text run file", source=source,
                           line=before + line_of_offset(piece, nul),
                           fix="give a plain-text TREC file (gzip, bz2, xz and zstd are unpacked automatically), "
                               "CSV/TSV, parquet or JSON")
    if not piece.isascii():
        try:
            check_text(piece, RUN, source)
        except MetricsError as exc:
            raise _shifted(exc, before) from None
    if first_data_line(piece) is None:
        return None, None
    try:
        table, lines = _parse_lines(piece, source)
    except MetricsError as exc:
        if callable(prefix):
            prefix = prefix()
        if prefix is None:
            raise _shifted(exc, before) from None
        try:
            _parse_lines(prefix + b"\n" + piece, source)
        except MetricsError as exact:
            raise _shifted(exact, before - 1) from None
        raise _shifted(exc, before) from None    # pragma: no cover - the prefix is a good line
    return table, lines + before


def _parse_lines(data: bytes, source: str) -> tuple[pa.Table, np.ndarray]:
    """metrics.io's TREC parsing and checks on ``data``: the table and each row's 1-based line."""
    table, origin = read_trec(data, RUN, source)
    finite_scores(table, origin)
    mapping = origin.lines if origin.lines is not None else LineMap()   # None: rows 1..n
    lines = np.arange(mapping.offset, mapping.offset + table.num_rows, dtype=np.int64) if mapping.lines is None \
        else mapping(np.arange(table.num_rows))
    return table, lines


def _partition_parquet(part: Part, fs, inner: str, writers: FragmentWriters, result: PartResult, on_bytes) -> None:
    with fs.open_input_file(inner) as raw:
        try:
            reader = pq.ParquetFile(raw)
        except (pa.ArrowException, OSError) as exc:
            raise MetricsError(f"cannot read the parquet file ({exc})", source=part.source,
                               fix="the file may be truncated; write it again") from None
        names = reader.schema_arrow.names
        picked = {role: pick(names, role) for role in ("qid", "docno", "score")}
        lacking = [role for role, col in picked.items() if col is None]
        if lacking:
            options = "; ".join(f"{role}: {' / '.join(ALIASES[role])}" for role in lacking)
            raise MetricsError(f"no {' or '.join(lacking)} column among {', '.join(map(str, names))}",
                               source=part.source, fix=f"name the columns ({options})")
        rank_col = pick(names, "rank")
        result.has_rank = rank_col is not None
        columns = [c for c in (picked["qid"], picked["docno"], picked["score"], rank_col) if c is not None]
        done = 0
        groups = max(reader.metadata.num_row_groups, 1)
        batches = reader.iter_batches(batch_size=1 << 20, columns=columns, use_threads=False)
        for i, batch in enumerate(_parquet_batches(batches, part.source)):
            table = pa.Table.from_batches([batch])
            try:
                table = _validate_rows(table, picked, rank_col, part.source)
            except MetricsError as exc:
                raise _shift_rows(exc, done) from None
            writers.write(fragment_table(table, part.index, np.arange(done + 1, done + table.num_rows + 1)))
            done += table.num_rows
            if on_bytes is not None:
                on_bytes(part.size * min(i + 1, groups) // groups - part.size * min(i, groups) // groups)
        result.rows = result.lines = done
        if done == 0:
            raise MetricsError("no documents in the run", source=part.source,
                               fix=f"give lines like: {' '.join(RUN.fields)}")


def _parquet_batches(batches, source: str):
    """``batches``, with a damaged page (which the file's footer does not reveal) a MetricsError."""
    try:
        yield from batches
    except (pa.ArrowException, OSError) as exc:
        raise MetricsError(f"cannot read the parquet file ({exc})", source=source,
                           fix="the file may be truncated or damaged; write it again") from None


def _validate_rows(table: pa.Table, picked: dict, rank_col: str | None, source: str) -> pa.Table:
    """Columns of an in-memory batch mapped and checked as metrics.io does for parquet and frames."""
    origin = Origin(source)
    qid = string_column(table[picked["qid"]], "qid", origin)
    docno = string_column(table[picked["docno"]], "docno", origin)
    origin = dataclasses.replace(origin, keys=(as_array(qid), as_array(docno)))
    score = numeric_column(table[picked["score"]], "score", origin, cast_scores)
    finite_scores(score, origin)
    if rank_col is not None:
        rank = numeric_column(table[rank_col], "rank", origin, cast_ranks)
    else:
        rank = pa.array(np.zeros(table.num_rows, dtype=np.int64))
    return pa.table({"qid": qid, "docno": docno, "score": pc.cast(score, pa.float64()),
                     "rank": pc.cast(rank, pa.int64())})


def _shift_rows(exc: MetricsError, rows: int) -> MetricsError:
    """Row numbers in a batch's message ("row 3 (query ...)") moved to the file's numbering."""
    problem = re.sub(r"^row (\d+)", lambda m: f"row {int(m.group(1)) + rows}", exc.problem)
    return MetricsError(problem, source=exc.source, line=exc.line, fix=exc.fix)


def _partition_whole(part: Part, fs, inner: str, writers: FragmentWriters, result: PartResult,
                     on_duplicate: str) -> None:
    """Headed CSV/TSV or JSON text: parsed whole by metrics.io (these formats are not streamed)."""
    with fs.open_input_file(inner) as raw:
        data = raw.read()
    run = io.read_run(data, source=part.source, on_duplicate=on_duplicate)
    rows = np.arange(len(run))
    lines = run.line_of(rows)
    writers.write(fragment_table(run.table, part.index, rows + 1 if lines is None else lines))
    result.rows = result.lines = len(run)
