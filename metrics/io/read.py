"""read_run and read_qrels: one entry point for every source a run or qrels comes from.

Paths, bytes, file objects (Streamlit uploads), DataFrames, pyarrow Tables, ranx-style dicts
and ranx objects are sniffed (compression by magic bytes, parquet, JSON, a header line) and
handed to the matching reader; bad input raises :class:`metrics.errors.MetricsError` naming
file, line, problem and fix.
"""
from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path

import pyarrow as pa

from .. import settings as settings_module
from ..errors import MetricsError
from . import trec
from .inflate import DECOMPRESS_ERRORS, checked_blocks, decompress, decompress_error, read_ahead, read_path
from .interchange import unwrap
from .irds import is_irds, load_qrels
from .keys import canonical_digest
from .lines import line_of_offset
from .paths import stem
from .raw_input import RawInput, sha256_later
from .sniff import (
    FIRST_DATA_LINE,
    UTF8_BOM,
    check_text,
    compression_of,
    first_data_line,
    first_data_match,
    is_parquet,
    refuse_other_formats,
    without_bom,
)
from .tables import (
    dict_to_table,
    frame_to_table,
    from_table,
    header_columns,
    is_frame,
    read_headed,
    read_json,
    read_parquet,
)
from .trec import read_trec, read_trec_blocks
from .validate import QRELS, RUN, Kind, Origin, Qrels, Run, article, finish


def read_run(src, *, name: str | None = None, source: str | None = None,
             on_duplicate: str = "error") -> Run:
    """Parse and validate a run.

    ``src``: path (str/Path, compression detected by magic bytes), bytes, a binary
    file-like, a pandas DataFrame (PyTerrier columns qid, docno, score[, rank]),
    a pyarrow Table, a ranx-style dict ``{qid: {docno: score}}``, or a parsed
    :class:`Run` (returned as is, renamed when ``name`` is given).
    ``on_duplicate``: "error" (a docno twice in one query is refused, as
    trec_eval does) or "first" (keep the first, report a Finding).
    """
    if on_duplicate not in ("error", "first"):
        raise MetricsError(f"on_duplicate={on_duplicate!r} is not an option",
                           fix="use on_duplicate='error' or on_duplicate='first'")
    return _read(src, RUN, name=name, source=source, on_duplicate=on_duplicate)


def read_qrels(src, *, name: str | None = None, source: str | None = None) -> Qrels:
    """Parse and validate relevance judgments (``qid iter docno rel``; same inputs as read_run,
    and ``irds:ID``: the qrels of an ir_datasets dataset)."""
    if is_irds(src):
        qrels = load_qrels(src)
        return qrels if name is None else dataclasses.replace(qrels, name=name)
    return _read(src, QRELS, name=name, source=source, on_duplicate="error")


def _read(src, kind: Kind, *, name, source, on_duplicate):
    own, other = (Run, Qrels) if kind is RUN else (Qrels, Run)
    src = unwrap(src)
    if isinstance(src, own):
        return src if name is None or name == src.name else dataclasses.replace(src, name=name)
    if isinstance(src, other):
        raise MetricsError(f"got parsed {kind.other} where {article(kind.what)} was expected",
                           source=source or src.source,
                           fix=f"pass {article(kind.what)} here (read_{kind.what})")
    if is_frame(src):
        table = frame_to_table(src, source or "<DataFrame>")
        return from_table(table, kind, name or kind.what, Origin(source or "<DataFrame>"),
                           canonical_digest, on_duplicate)
    if isinstance(src, pa.Table):
        return from_table(src, kind, name or kind.what, Origin(source or "<Table>"),
                           canonical_digest, on_duplicate)
    if isinstance(src, Mapping) or _is_ranx_object(src):
        mapping = src.to_dict() if _is_ranx_object(src) else src
        label = source or "<dict>"
        table = dict_to_table(mapping, kind, label)
        return from_table(table, kind, name or getattr(src, "name", None) or kind.what,
                           Origin(label), canonical_digest, on_duplicate)
    if isinstance(src, (str, Path)):
        path = Path(src).expanduser()
        counted: bool | bytes = False
        if kind is QRELS:
            _check_head(path, kind, source or path.name)
        try:
            run, counted = _from_blocks(RawInput(path=path), kind, name or stem(path.name),
                                        source or path.name, on_duplicate)
        except OSError:
            run = None   # the whole-file path below names the problem
        if run is not None:
            return run
        try:
            raw = read_path(path, source or path.name)
        except FileNotFoundError:
            raise MetricsError(f"no such file: {str(path)!r}", source=source or path.name,
                               fix="check the path") from None
        except IsADirectoryError:
            raise MetricsError(f"{str(path)!r} is a folder, not a file", source=source or path.name,
                               fix=f"give the {kind.what} file inside it") from None
        except OSError as exc:
            raise MetricsError(f"cannot read {str(path)!r}: {exc.strerror or exc}",
                               source=source or path.name, fix="check the path and permissions") from None
        return _from_bytes(raw, kind, name or stem(path.name), source or path.name, on_duplicate, counted)
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _from_memory(bytes(src), kind, name or kind.what, source or "<bytes>", on_duplicate)
    if hasattr(src, "read"):
        file_name = getattr(src, "name", None)
        file_name = Path(file_name).name if isinstance(file_name, str) and file_name else None
        if hasattr(src, "getvalue"):  # BytesIO, Streamlit UploadedFile: all bytes whatever the position
            raw = src.getvalue()
        else:
            if hasattr(src, "seekable") and src.seekable():
                src.seek(0)
            raw = src.read()
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        return _from_memory(bytes(raw), kind, name or (stem(file_name) if file_name else kind.what),
                            source or file_name or "<stream>", on_duplicate)
    raise MetricsError(f"cannot read {article(kind.what)} from a {type(src).__name__}",
                       source=source,
                       fix="pass a path, bytes, a file object, a pandas DataFrame or a {qid: {docno: value}} dict")


def _valid_text(table: pa.Table, source: str) -> pa.Table:
    """``table`` if its column names and strings are valid UTF-8 (parquet does not promise it)."""
    try:
        _ = table.schema.names   # decoding the names raises on invalid UTF-8
        table.validate(full=True)
    except (UnicodeDecodeError, pa.ArrowInvalid) as exc:
        raise MetricsError(f"the parquet file holds text that is not valid UTF-8 ({exc})", source=source,
                           fix="write the file again from data with UTF-8 strings") from None
    return table


def _is_ranx_object(src) -> bool:
    return type(src).__module__.startswith("ranx") and hasattr(src, "to_dict")


def layout_of(text: bytes) -> str:
    """How a file whose first (decompressed) bytes are ``text`` is read: ``"parquet"``, ``"whole"``
    (JSON, JSONL or a header line: parsed in one piece) or ``"text"`` (TREC lines, which the
    streaming engine may split anywhere between lines). The one sniff of the input formats that
    :func:`read_run` and the streaming engine (:mod:`metrics.engines.parts`) share: a new format
    that is not TREC text must answer ``"whole"`` here."""
    if is_parquet(text):
        return "parquet"
    first = first_data_line(without_bom(text))
    whole = first is not None and (first[:1] in (b"{", b"[") or header_columns(first) is not None)
    return "whole" if whole else "text"


def _plain_trec_head(head: bytes) -> bool:
    """The first bytes of an uncompressed TREC text file: no magic bytes, BOM, JSON or header line.
    Judged on the first 64 KiB (a data line at byte 0 is all it asks): the regular expression of
    the first data line takes seconds over a block of 16 MiB of blank lines."""
    head = head[:1 << 16]
    if compression_of(head[:6]) is not None or head[:3] == UTF8_BOM or layout_of(head) != "text":
        return False
    try:
        refuse_other_formats(head, "")
    except MetricsError:
        return False
    first = FIRST_DATA_LINE.search(head)
    return first is not None and first.start(1) == 0


def _check_head(path: Path, kind: Kind, source: str) -> None:
    """A TREC text file whose first data line has the wrong number of fields (a run given as
    qrels) refused from its first bytes, before the file is read whole. Only plain ASCII text is
    judged so; the first problem in the file is the one named (a bad byte further on, which
    reading the file whole would name first, is not looked for)."""
    try:
        with open(path, "rb") as f:
            head = without_bom(f.read(trec.HEAD_BYTES + 1))
    except OSError:
        return   # the whole-file path names the problem
    if len(head) > trec.HEAD_BYTES and head.isascii() and b"\x00" not in head \
            and compression_of(head[:6]) is None and layout_of(head) == "text":
        trec.check_head(head, kind, source)


PLAIN_RATIO = 16
"""A compressed run is parsed as it is inflated, in one pass, while the text read stays within
this many times the compressed bytes read. Real runs inflate 3-6 times (gzip, bzip2, xz, zstd on
the samples and the TREC-DL-like bench run); a bomb inflates hundreds of times, so it is known
for one at its first block, before anything of it is parsed."""


def _from_blocks(src: RawInput, kind: Kind, name: str, source: str,
                 on_duplicate: str) -> tuple[Run | None, bool | bytes]:
    """A large TREC run or qrels read in blocks (:func:`metrics.io.trec.read_trec_blocks`), plain
    or inflated as a stream: (the run or qrels or None, ``counted``). The text is never whole in
    memory: a 59 MiB qrels read whole held 4.7 times its text, in blocks 3.3 times. ``counted``: True when the input was
    inflated whole within the limit, or its whole inflated text when that is one block (small).

    A compressed input is inflated once, straight into the block parser, the next block inflated
    on a second thread while one is parsed (:func:`metrics.io.inflate.read_ahead`), and never held
    whole. Past :data:`PLAIN_RATIO` times the raw bytes read it may be a bomb: the blocks parsed
    so far are dropped, the rest is counted block by block and dropped
    (:func:`metrics.io.inflate.checked_blocks`), so that a bomb is refused at the inflate limit
    holding one block, and only an input within the limit is inflated again into the parser.
    The digest is the sha256 of the raw bytes (compressed bytes for a compressed input), hashed
    on a second thread. Bad input is never reported from here, except by the checks of the
    blocks as they stream (the inflate limit and budget, a line too long, a damaged stream),
    whose messages are those of the whole-file path: any other problem sends the input to the
    whole-file path (None), which names the line and quotes it.
    """
    if src.compression is None:
        if src.raw is None:
            found = read_trec_blocks(src.path, kind, source, _plain_trec_head)
            digest = None if found is None else found[2]
        else:
            digest_of = src.digest_later()
            with src.text() as (stream, _), \
                    closing(checked_blocks(stream, source, limit=None, size=trec.FILE_BLOCK)) as blocks:
                found = read_trec_blocks(blocks, kind, source, _plain_trec_head)
            digest = None if found is None else digest_of()
        return _finished(found, digest, kind, name, on_duplicate), False
    limit = settings_module.load().inflate_limit
    what = f"{src.compression} of {src.size:,} bytes"
    try:
        with src.text() as (stream, consumed), closing(checked_blocks(stream, source, limit=limit, what=what,
                                                                      size=trec.FILE_BLOCK,
                                                                      raw_read=consumed)) as blocks:
            first = next(blocks, b"")
            if len(first) < trec.FILE_BLOCK:
                return None, first   # small: the whole text is this block
            if not _plain_trec_head(first):
                return None, False   # not TREC text: read whole
            digest_of = src.digest_later()
            amplified: list[bool] = []
            with closing(read_ahead(_within(first, blocks, consumed, amplified))) as ahead:
                del first
                found = read_trec_blocks(ahead, kind, source, _plain_trec_head)
            once = not amplified
            if amplified:
                found = None   # what was parsed of it goes
                for _ in blocks:   # count the rest, hold nothing: a bomb is refused here
                    pass
        if not once:
            with src.text() as (stream, consumed), closing(checked_blocks(stream, source, limit=limit, what=what,
                                                                          size=trec.FILE_BLOCK,
                                                                          raw_read=consumed)) as blocks, \
                    closing(read_ahead(blocks)) as ahead:
                found = read_trec_blocks(ahead, kind, source, _plain_trec_head)
    except DECOMPRESS_ERRORS as exc:
        if isinstance(exc, MetricsError):
            raise
        raise decompress_error(exc, source) from None
    if found is None:
        # not plain: the whole-file path reads it again, and counts it first unless it was read to its end
        return None, not once
    return _finished(found, digest_of(), kind, name, on_duplicate), True


def _within(first: bytes, blocks, consumed, amplified: list):
    """``first`` then ``blocks``, ending early, with True appended to ``amplified``, at the
    first block after which the text read passes :data:`PLAIN_RATIO` times the raw bytes read
    (``consumed()``); ``blocks`` is then left open, at the block after that one. So the text
    parsed before a bomb is recognised is at most that factor of the raw bytes, plus one block."""
    total = len(first)
    if total > PLAIN_RATIO * consumed():
        amplified.append(True)
        return
    yield first
    del first
    for block in blocks:
        total += len(block)
        if total > PLAIN_RATIO * consumed():
            amplified.append(True)
            return
        yield block
        del block


def _finished(found, digest: str | None, kind: Kind, name: str, on_duplicate: str) -> Run | None:
    """The run of :func:`read_trec_blocks`' columns, or None when its checks fail (the
    whole-file path then names the line and quotes it)."""
    if found is None:
        return None
    table, origin, _ = found
    del found
    try:
        return finish(table, kind, name, origin, lambda: digest, on_duplicate, rank_given=True)
    except MetricsError:
        return None


def _from_memory(raw: bytes, kind: Kind, name: str, source: str, on_duplicate: str):
    """A run or qrels from bytes in memory (an upload): a large TREC text in blocks, else whole."""
    counted: bool | bytes = False
    if len(raw) >= trec.FILE_BLOCK or compression_of(raw[:6]) is not None:
        run, counted = _from_blocks(RawInput(raw=raw), kind, name, source, on_duplicate)
        if run is not None:
            return run
    return _from_bytes(raw, kind, name, source, on_duplicate, counted)


def _from_bytes(raw: bytes, kind: Kind, name: str, source: str, on_duplicate: str, counted=False):
    data = decompress(raw, source, counted=counted)
    if is_parquet(data):
        digest_of = sha256_later(raw)
        table = _valid_text(read_parquet(data, source), source)
        return from_table(table, kind, name, Origin(source), lambda t, k: digest_of(), on_duplicate)
    data = without_bom(data)
    check_text(data, kind, source)
    first = first_data_match(data)
    if first is None:
        n_lines = len(re.findall(rb"\r\n|\r|\n", data)) + (not data.endswith((b"\n", b"\r")))
        raise MetricsError(f"no data lines: all {n_lines} lines are blank or comments (#)",
                           source=source, line=n_lines,
                           fix=f"a {kind.what} file has one line per {'document' if kind is RUN else 'judgment'}: "
                               f"{' '.join(kind.fields)}")
    first_line = first.group(1).rstrip()
    if layout_of(data) == "whole":
        digest_of = sha256_later(raw)
    if first_line[:1] in (b"{", b"["):
        table, origin = read_json(data, kind, source)
        return from_table(table, kind, name, origin, lambda t, k: digest_of(), on_duplicate)
    header = header_columns(first_line)
    if header is not None:
        header_line = line_of_offset(data, first.start(1))
        table, origin = read_headed(data, first.end(1), header, header_line, kind, source)
        return from_table(table, kind, name, origin, lambda t, k: digest_of(), on_duplicate)
    table, origin = read_trec(data, kind, source)
    # Hash on a second core while the single-threaded checks run.
    digest_of = sha256_later(raw)
    return finish(table, kind, name, origin, digest_of, on_duplicate, rank_given=True)
