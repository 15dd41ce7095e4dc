"""Read and validate runs and qrels: TREC text (plain, gzip, bz2, xz, zstd),
CSV/TSV with a header, parquet, ranx-style JSON, pandas DataFrames and dicts.

TREC text is parsed in bulk: the bytes go to ``pyarrow.csv`` with a one-byte
delimiter, and only when a file is not already single-space (or single-tab)
separated is it normalised first, with numpy over the whole buffer. No Python
loop runs over lines. Every row remembers the 1-based line of the original
file, so errors name it; blank and comment lines (first non-blank character
``#``) count as lines. A ``#`` inside a field (``msmarco_v2.1_doc_00_1#4_16``)
is data.

Bad input raises :class:`metrics.errors.MetricsError` naming file, line,
problem and fix. Doubtful but usable input (tied scores, a rank column that
disagrees with the scores, negative grades, dropped duplicates) is reported
as :class:`Finding` objects on the result instead.
"""

from __future__ import annotations

import bz2
import dataclasses
import gzip
import hashlib
import json
import lzma
import re
import threading
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .errors import MetricsError

__all__ = ["Finding", "Run", "Qrels", "read_run", "read_qrels", "lint",
           "RUN_SCHEMA", "QRELS_SCHEMA"]

RUN_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("score", pa.float64()),
                        ("rank", pa.int64()), ("tag", pa.string())])
QRELS_SCHEMA = pa.schema([("qid", pa.string()), ("docno", pa.string()), ("rel", pa.int64())])

RUN_FORMAT = "qid Q0 docno rank score tag"

# Column names accepted in headed tables, frames and parquet (lower case, by priority).
ALIASES = {
    "qid": ("qid", "query_id", "queryid", "q_id", "topic", "topic_id", "topicid"),
    "docno": ("docno", "doc_id", "docid", "document_id", "documentid", "did", "pid"),
    "score": ("score", "sim", "similarity"),
    "rank": ("rank",),
    "tag": ("tag", "run_id", "runid", "run", "system"),
    "rel": ("rel", "relevance", "label", "grade", "judgment", "judgement"),
}

_COMPRESSION_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")
_BLOCK_SIZE = 16 << 20
_SHOWN = 80  # characters of an offending line quoted in a message


# --------------------------------------------------------------------------- data


@dataclass
class Finding:
    """A warning as data: what is doubtful about an input, how often, examples.

    ``value`` carries a number where the finding is a measurement (Judged@k).
    """

    kind: str
    message: str
    count: int = 0
    examples: list[str] = field(default_factory=list)
    value: float | None = None


class _LineMap:
    """Original 1-based line of each row: ``offset + row`` or an explicit array."""

    def __init__(self, lines: np.ndarray | None = None, offset: int = 1):
        self.lines = lines
        self.offset = offset

    def __call__(self, rows) -> np.ndarray:
        rows = np.asarray(rows, dtype=np.int64)
        if self.lines is None:
            return rows + self.offset
        return self.lines[rows]

    def take(self, rows: np.ndarray) -> "_LineMap":
        return _LineMap(self(rows), 0)


@dataclass
class _Parsed:
    """Fields and helpers shared by Run and Qrels."""

    table: pa.Table
    name: str
    source: str
    digest: str
    findings: list[Finding] = field(default_factory=list)
    _lines: _LineMap | None = field(default=None, repr=False, compare=False)

    @property
    def df(self) -> pd.DataFrame:
        return self.table.to_pandas()

    def __len__(self) -> int:
        return self.table.num_rows

    def line_of(self, rows) -> np.ndarray | None:
        """Original 1-based line numbers of table rows, or None for in-memory input."""
        return None if self._lines is None else self._lines(rows)


@dataclass
class Run(_Parsed):
    """A parsed run: ``table`` has columns qid, docno, score, rank, tag in file order.

    ``digest`` is the sha256 of the bytes given (or of a canonical serialisation
    for in-memory input): a cache key for the content.
    """


@dataclass
class Qrels(_Parsed):
    """Parsed judgments: ``table`` has columns qid, docno, rel (int64; negative = judged non-relevant)."""


@dataclass
class _Kind:
    """What a run or a qrels file looks like, for parsing and for messages."""

    what: str            # "run" / "qrels"
    fields: tuple        # TREC columns
    required: int        # minimum number of fields on a line
    exact: bool          # qrels lines must have exactly `required` fields
    value: str           # "score" / "rel"
    other: str           # the other kind, for "this looks like ..." hints
    other_fields: tuple


RUN = _Kind("run", ("qid", "Q0", "docno", "rank", "score", "tag"), 6, False, "score",
            "qrels", ("qid", "iter", "docno", "rel"))
QRELS = _Kind("qrels", ("qid", "iter", "docno", "rel"), 4, True, "rel",
              "run", ("qid", "Q0", "docno", "rank", "score", "tag"))


@dataclass
class _Source:
    """Where rows came from: names for messages, and the text to quote lines from."""

    source: str
    lines: _LineMap | None = None     # None: rows of an in-memory table
    text: bytes | None = None         # decompressed original bytes
    trec: bool = False                # TREC columns (for hints naming column positions)
    trim: bool = False                # CSV/TSV text with blanks: trim them around values
    keys: tuple | None = None         # (qid, docno) arrays, to name rows of in-memory tables

    def error(self, row: int | None, problem: str, fix: str | None = None) -> MetricsError:
        if row is None:
            return MetricsError(problem, source=self.source, fix=fix)
        if self.lines is None:
            where = f"row {row + 1}"
            if self.keys is not None:
                where += f" (query {self.keys[0][row].as_py()!r}, document {self.keys[1][row].as_py()!r})"
            return MetricsError(f"{where}: {problem}", source=self.source, fix=fix)
        line = int(self.lines([row])[0])
        return self.line_error(line, problem, fix)

    def line_error(self, line: int, problem: str, fix: str | None = None) -> MetricsError:
        quoted = _line_text(self.text, line) if self.text is not None else None
        if quoted is not None:
            problem = f"{problem}: {quoted}"
        return MetricsError(problem, source=self.source, line=line, fix=fix)

    def line_numbers(self, rows) -> list[str]:
        if self.lines is None:
            return [f"row {int(r) + 1}" for r in rows]
        return [f"line {int(x)}" for x in self.lines(rows)]


# --------------------------------------------------------------------------- public API


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
    """Parse and validate relevance judgments (``qid iter docno rel``; same inputs as read_run)."""
    return _read(src, QRELS, name=name, source=source, on_duplicate="error")


def lint(qrels, run, *, k: int = 10) -> list[Finding]:
    """Everything doubtful about evaluating ``run`` against ``qrels``.

    The run's own findings (the qrels' stay on ``qrels.findings``), queries of the run without
    judgments (ignored by evaluation), queries of the qrels the run lacks
    (scored 0), and Judged@k: the mean over queries in both of the fraction of
    the top k (canonical order: score descending, ties docno descending) that
    is judged, dividing by min(k, retrieved) as ir_measures does.
    """
    qrels = read_qrels(qrels)
    run = read_run(run)
    if int(k) < 1:
        raise MetricsError(f"k must be a whole number >= 1, got {k!r}", fix="for example k=10")
    k = int(k)
    findings = list(run.findings)
    run_q = _as_array(run.table["qid"])
    qrels_q = _as_array(qrels.table["qid"])
    run_queries = pc.unique(run_q)
    qrels_queries = pc.unique(qrels_q)
    extra = _sorted_strings(run_queries.filter(pc.invert(pc.is_in(run_queries, value_set=qrels_queries))))
    missing = _sorted_strings(qrels_queries.filter(pc.invert(pc.is_in(qrels_queries, value_set=run_queries))))
    if len(extra):
        findings.append(Finding(
            "queries_not_in_qrels",
            f"{len(extra)} of {_n(len(run_queries), 'query')} of {run.name} "
            f"{'has' if len(extra) == 1 else 'have'} no judgments; "
            "evaluation ignores them",
            len(extra), extra[:5]))
    if len(missing):
        findings.append(Finding(
            "queries_not_in_run",
            f"{len(missing)} of {_n(len(qrels_queries), 'judged query')} "
            f"{'is' if len(missing) == 1 else 'are'} missing from {run.name}; "
            "missing queries score 0 by default (trec_eval -c)",
            len(missing), missing[:5]))
    value, n = _judged_at_k(qrels, run, k, qrels_queries)
    if n:
        findings.append(Finding(
            "judged",
            f"Judged@{k} = {value:.4f} over {_n(n, 'query')} of {run.name}: "
            f"{'all' if value == 1 else 'not all'} of the top {k} documents are judged"
            + ("" if value == 1 else "; unjudged documents count as non-relevant"),
            n, [], value))
    return findings


# --------------------------------------------------------------------------- dispatch


def _read(src, kind: _Kind, *, name, source, on_duplicate):
    own, other = (Run, Qrels) if kind is RUN else (Qrels, Run)
    if isinstance(src, own):
        return src if name is None or name == src.name else dataclasses.replace(src, name=name)
    if isinstance(src, other):
        raise MetricsError(f"got parsed {kind.other} where {_a(kind.what)} was expected",
                           source=source or src.source,
                           fix=f"pass {_a(kind.what)} here (read_{kind.what})")
    if isinstance(src, pd.DataFrame):
        table = _frame_to_table(src, source or "<DataFrame>")
        return _from_table(table, kind, name or kind.what, _Source(source or "<DataFrame>"),
                           _canonical_digest, on_duplicate)
    if isinstance(src, pa.Table):
        return _from_table(src, kind, name or kind.what, _Source(source or "<Table>"),
                           _canonical_digest, on_duplicate)
    if isinstance(src, Mapping) or _is_ranx_object(src):
        mapping = src.to_dict() if _is_ranx_object(src) else src
        label = source or "<dict>"
        table = _dict_to_table(mapping, kind, label)
        return _from_table(table, kind, name or getattr(src, "name", None) or kind.what,
                           _Source(label), _canonical_digest, on_duplicate)
    if isinstance(src, (str, Path)):
        path = Path(src).expanduser()
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise MetricsError(f"no such file: {str(path)!r}", source=source or path.name,
                               fix="check the path") from None
        except IsADirectoryError:
            raise MetricsError(f"{str(path)!r} is a folder, not a file", source=source or path.name,
                               fix=f"give the {kind.what} file inside it") from None
        except OSError as exc:
            raise MetricsError(f"cannot read {str(path)!r}: {exc.strerror or exc}",
                               source=source or path.name, fix="check the path and permissions") from None
        return _from_bytes(raw, kind, name or _stem(path.name), source or path.name, on_duplicate)
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _from_bytes(bytes(src), kind, name or kind.what, source or "<bytes>", on_duplicate)
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
        return _from_bytes(bytes(raw), kind, name or (_stem(file_name) if file_name else kind.what),
                           source or file_name or "<stream>", on_duplicate)
    raise MetricsError(f"cannot read {_a(kind.what)} from a {type(src).__name__}",
                       source=source,
                       fix="pass a path, bytes, a file object, a pandas DataFrame or a {qid: {docno: value}} dict")


def _n(count: int, noun: str) -> str:
    """``_n(1, "query")`` -> "1 query", ``_n(2, "query")`` -> "2 queries"."""
    if count == 1:
        return f"1 {noun}"
    return f"{count} {noun[:-1] + 'ies' if noun.endswith('y') else noun + 's'}"


def _a(what: str) -> str:
    return "a run" if what == "run" else "qrels"


def _stem(file_name: str) -> str:
    """``bm25.run.gz`` -> ``bm25``: drop a compression suffix, then one more suffix."""
    base = file_name
    for suffix in _COMPRESSION_SUFFIXES:
        if base.lower().endswith(suffix) and len(base) > len(suffix):
            base = base[: -len(suffix)]
            break
    stem = Path(base).stem
    return stem or base


def _is_ranx_object(src) -> bool:
    return type(src).__module__.startswith("ranx") and hasattr(src, "to_dict")


# --------------------------------------------------------------------------- bytes


def _sha256_later(raw: bytes):
    """sha256 of ``raw`` computed on a second thread (hashlib releases the GIL) while we parse."""
    if len(raw) < (1 << 20):
        digest = hashlib.sha256(raw).hexdigest()
        return lambda: digest
    box: dict = {}
    worker = threading.Thread(target=lambda: box.setdefault("hex", hashlib.sha256(raw).hexdigest()),
                              daemon=True)
    worker.start()

    def result() -> str:
        worker.join()
        return box["hex"]
    return result


def _from_bytes(raw: bytes, kind: _Kind, name: str, source: str, on_duplicate: str):
    data = _decompress(raw, source)
    if data[:4] == b"PAR1":
        digest_of = _sha256_later(raw)
        table = _read_parquet(data, source)
        return _from_table(table, kind, name, _Source(source), lambda t, k: digest_of(), on_duplicate)
    if data[:3] == b"\xef\xbb\xbf":
        data = data[3:]
    _check_text(data, kind, source)
    first = re.search(rb"(?m)(?:^|(?<=\r))[ \t\f\v]*([^#\s][^\r\n]*)", data)
    if first is None:
        n_lines = len(re.findall(rb"\r\n|\r|\n", data)) + (not data.endswith((b"\n", b"\r")))
        raise MetricsError(f"no data lines: all {n_lines} lines are blank or comments (#)",
                           source=source, line=n_lines,
                           fix=f"a {kind.what} file has one line per {'document' if kind is RUN else 'judgment'}: "
                               f"{' '.join(kind.fields)}")
    first_line = first.group(1).rstrip()
    if first_line[:1] in (b"{", b"[") or _header(first_line) is not None:
        digest_of = _sha256_later(raw)
    if first_line[:1] in (b"{", b"["):
        table, ctx = _read_json(data, kind, source)
        return _from_table(table, kind, name, ctx, lambda t, k: digest_of(), on_duplicate)
    header = _header(first_line)
    if header is not None:
        header_line = _line_of_offset(data, first.start(1))
        table, ctx = _read_headed(data, first.end(1), header, header_line, kind, source)
        return _from_table(table, kind, name, ctx, lambda t, k: digest_of(), on_duplicate)
    table, ctx = _read_trec(data, kind, source)
    # Hash on a second core while the single-threaded checks run.
    digest_of = _sha256_later(raw)
    return _finish(table, kind, name, ctx, digest_of, on_duplicate, rank_given=True)


def _decompress(raw: bytes, source: str) -> bytes:
    try:
        if raw[:2] == b"\x1f\x8b":
            return gzip.decompress(raw)
        if raw[:3] == b"BZh":
            return bz2.decompress(raw)
        if raw[:6] == b"\xfd7zXZ\x00":
            return lzma.decompress(raw)
        if raw[:4] == b"\x28\xb5\x2f\xfd":
            return pa.input_stream(pa.py_buffer(raw), compression="zstd").read()
    except (OSError, EOFError, zlib.error, lzma.LZMAError, ValueError, pa.ArrowException) as exc:
        raise MetricsError(f"cannot decompress the file ({exc})", source=source,
                           fix="the file may be truncated or damaged; download or compress it again") from None
    return raw


def _check_text(data: bytes, kind: _Kind, source: str) -> None:
    if not data or data.isspace():
        raise MetricsError("the file is empty" if not data else "the file holds only blank lines",
                           source=source, line=1,
                           fix=f"upload the {kind.what} file itself ({' '.join(kind.fields)} on each line)")
    nul = data.find(b"\x00")
    if nul >= 0:
        line = _line_of_offset(data, nul)
        raise MetricsError(f"binary data (a NUL byte) at byte {nul}; this is not a text {kind.what} file",
                           source=source, line=line,
                           fix="give a plain-text TREC file (gzip, bz2, xz and zstd are unpacked automatically), "
                               "CSV/TSV, parquet or JSON")
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
                        source=source, line=_line_of_offset(data, bad),
                        fix="save the file as UTF-8 (for example: iconv -f latin1 -t utf-8)") from None
            start = end


def _line_ends(data: bytes) -> np.ndarray:
    """Position of the byte ending each line: \\n, a lone \\r, or the \\r of \\r\\n (as pyarrow reads)."""
    a = np.frombuffer(data, dtype=np.uint8)
    if b"\r" not in data:
        return np.flatnonzero(a == 10)
    ends = np.flatnonzero((a == 10) | (a == 13))
    after_cr = np.zeros(len(ends), dtype=bool)
    after_cr[1:] = (a[ends[:-1]] == 13) & (a[ends[1:]] == 10) & (ends[1:] == ends[:-1] + 1)
    return ends[~after_cr]


def _line_of_offset(data: bytes, offset: int) -> int:
    """1-based line holding byte ``offset``."""
    head = data[:offset]
    if b"\r" not in head:
        return head.count(b"\n") + 1
    return len(_line_ends(head)) + 1


def _line_text(data: bytes, line: int) -> str | None:
    """The original text of 1-based ``line``, quoted and shortened for a message."""
    ends = _line_ends(data)
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


# --------------------------------------------------------------------------- TREC text


def _read_trec(data: bytes, kind: _Kind, source: str) -> tuple[pa.Table, _Source]:
    """Parse TREC text into typed columns; see the module docstring for the strategy."""
    table = _read_clean(data, kind)
    if table is not None:
        return table, _Source(source, _LineMap(), data, trec=True)
    norm, lines = _normalise(data)
    ctx = _Source(source, lines, data, trec=True)
    if not norm:
        raise MetricsError("no data lines: every line is blank or a comment (#)", source=source,
                           fix=f"a {kind.what} file has lines like: {' '.join(kind.fields)}")
    counts = _first_line_fields(norm)
    if counts == kind.required or (counts > kind.required and not kind.exact):
        try:
            table = _pyarrow_read(norm, kind, b" ", counts, typed=True, ignore_empty=True)
            if table.num_rows == _row_count(lines, norm):
                return table, ctx
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
    return _diagnose(norm, kind, ctx), ctx


def _read_clean(data: bytes, kind: _Kind) -> pa.Table | None:
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
    for col in strings:
        lengths = pc.min_max(pc.binary_length(table[col]))
        if table.num_rows and lengths["min"].as_py() == 0:
            return None
    if table.num_rows and pc.any(pc.starts_with(table["qid"], "#")).as_py():
        return None
    return table


def _pyarrow_read(data: bytes, kind: _Kind, delimiter: bytes, n_fields: int, *, typed: bool,
                  ignore_empty: bool) -> pa.Table:
    names = [f"_{i}" for i in range(n_fields)]
    wanted = {0: "qid", 2: "docno", 3: "rank", 4: "score", 5: "tag"} if kind is RUN \
        else {0: "qid", 2: "docno", 3: "rel"}
    for i, col in wanted.items():
        names[i] = col
    types = {col: pa.string() for col in wanted.values()}
    if typed:
        types.update({"rank": pa.int64(), "score": pa.float64()} if kind is RUN else {"rel": pa.int64()})
    table = pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
        parse_options=pacsv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, double_quote=False,
                                          escape_char=False, ignore_empty_lines=ignore_empty),
        convert_options=pacsv.ConvertOptions(include_columns=list(wanted.values()), column_types=types,
                                             null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False))
    return table


_BLANKS_TO_SPACE = bytes.maketrans(b"\t\v\f", b"   ")


def _normalise(data: bytes) -> tuple[bytes, _LineMap]:
    """One space between fields, no blank at line ends, comment lines emptied; lines kept.

    Returns the normalised bytes and the map from data rows (non-empty lines)
    to original line numbers. Whitespace as in trec_eval: space, tab, \\f, \\v;
    \\r\\n, \\r and \\n end lines. Whole-buffer passes: a translate, one
    compaction of doubled and trailing blanks, then per-line work (leading
    blanks, comments) on the line starts only.
    """
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
    newlines, starts, ends = _line_bounds(a)
    present = starts < ends
    first = np.full(len(starts), 10, dtype=np.uint8)
    first[present] = a[starts[present]]
    second = np.full(len(starts), 10, dtype=np.uint8)
    longer = ends - starts > 1
    second[longer] = a[starts[longer] + 1]
    comment = (first == 35) | ((first == 32) & (second == 35))
    lead = (first == 32) & ~comment
    if comment.any() or lead.any():
        removed = np.concatenate((starts[lead], _ranges(starts[comment], ends[comment])))
        removed.sort()
        a = np.delete(a, removed)
        shift = np.searchsorted(removed, newlines)
        newlines = newlines - shift
        starts = starts - np.searchsorted(removed, starts)
        ends = ends - np.searchsorted(removed, ends)
    norm = data if len(a) == len(data) else a.tobytes()
    nonempty = ends > starts
    if nonempty.all():
        return norm, _LineMap()
    return norm, _LineMap(np.flatnonzero(nonempty) + 1, 0)


def _line_bounds(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Newline positions, and start/end (exclusive, without the newline) of every line."""
    newlines = np.flatnonzero(a == 10)
    n_lines = len(newlines) + (len(a) > 0 and a[-1] != 10)
    starts = np.concatenate(([0], newlines + 1))[:n_lines]
    ends = np.concatenate((newlines, [len(a)]))[:n_lines]
    return newlines, starts, ends


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """All positions in the half-open ranges [starts, ends), concatenated (no Python loop)."""
    lengths = ends - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.cumsum(lengths) - lengths
    return np.repeat(starts - offsets, lengths) + np.arange(total)


def _row_count(lines: _LineMap, norm: bytes) -> int:
    if lines.lines is not None:
        return len(lines.lines)
    return norm.count(b"\n") + (not norm.endswith(b"\n"))


def _first_line_fields(norm: bytes) -> int:
    m = re.search(rb"(?m)^[^\n]+", norm)
    return m.group(0).count(b" ") + 1 if m else 0


def _diagnose(norm: bytes, kind: _Kind, ctx: _Source) -> pa.Table:
    """Slow path on normalised text: locate the first bad line, or cut extra fields of a run.

    Field counts per line come from numpy over the whole buffer; type errors
    are located by bisection over pyarrow casts.
    """
    a = np.frombuffer(norm, dtype=np.uint8)
    newlines, starts, ends = _line_bounds(a)
    n_lines = len(starts)
    nonempty = np.flatnonzero(ends > starts)
    spaces = np.flatnonzero(a == 32)
    line_of_space = np.searchsorted(newlines, spaces)
    fields = np.bincount(line_of_space, minlength=n_lines)[nonempty] + 1
    bad = fields != kind.required if kind.exact else fields < kind.required
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise _column_error(ctx, kind, row, int(fields[row]), row == 0,
                            _line_fields(norm, starts[nonempty[row]], ends[nonempty[row]]))
    if (fields > kind.required).any():
        # trec_eval reads the first six fields of a run line and ignores the rest.
        long_rows = np.flatnonzero(fields > kind.required)
        long_lines = nonempty[long_rows]
        first_space = np.searchsorted(line_of_space, long_lines)
        cut_from = spaces[first_space + kind.required - 1]
        norm = np.delete(a, _ranges(cut_from, ends[long_lines])).tobytes()
    table = _pyarrow_read(norm, kind, b" ", kind.required, typed=False, ignore_empty=True)
    return _cast_text_columns(table, kind, ctx)


def _line_fields(norm: bytes, start: int, end: int) -> list[str]:
    return norm[start:end].decode("utf-8", errors="replace").split(" ")


def _column_error(ctx: _Source, kind: _Kind, row: int, found: int, first: bool,
                  fields: list[str]) -> MetricsError:
    expected = f"{'exactly' if kind.exact else 'at least'} {kind.required} columns ({' '.join(kind.fields)})"
    problem = f"expected {expected}, found {found}"
    looks_other = (kind is RUN and found == 4) or \
        (kind is QRELS and found >= 6 and (len(fields) > 1 and fields[1].upper() == "Q0" or found == 6))
    if first and looks_other:
        fix = (f"this looks like a {kind.other} file ({' '.join(kind.other_fields)}); "
               f"load it as {_a(kind.other)} (read_{kind.other})")
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
    return ctx.error(row, problem, fix)


def _cast_text_columns(table: pa.Table, kind: _Kind, ctx: _Source) -> pa.Table:
    columns = {col: table[col] for col in table.column_names}
    if kind is RUN:
        columns["score"] = _cast_scores(columns["score"], ctx)
        columns["rank"] = _cast_ranks(columns["rank"], ctx)
    else:
        columns["rel"] = _cast_grades(columns["rel"], ctx)
    return pa.table(columns)


def _first_failing(col, typ) -> int:
    """Row of the first value that does not cast to ``typ`` (bisection, O(n) casting)."""
    lo, hi = 0, len(col)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            pc.cast(col.slice(lo, mid - lo), typ)
            lo = mid
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
            hi = mid
    return lo


def _cast_scores(col, ctx: _Source):
    try:
        scores = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        row = _first_failing(col, pa.float64())
        raise ctx.error(row, f"score {col[row].as_py()!r} is not a number",
                        "the score (5th column of a TREC run) must be a number such as 12.5 or -3e-2; "
                        f"check the column order ({RUN_FORMAT})" if ctx.trec
                        else "scores must be numbers such as 12.5 or -3e-2") from None
    return scores


def _cast_ranks(col, ctx: _Source):
    """Ranks should be integers; trec_eval ignores them, so we only insist on numbers."""
    try:
        return pc.cast(col, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    try:
        as_float = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        row = _first_failing(col, pa.float64())
        raise ctx.error(row, f"rank {col[row].as_py()!r} is not a number",
                        f"the rank (4th column) must be a whole number such as 1; check the column order ({RUN_FORMAT})"
                        if ctx.trec else "ranks must be whole numbers such as 1") from None
    values = as_float.to_numpy(zero_copy_only=False) if isinstance(as_float, pa.Array) \
        else as_float.to_numpy()
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ctx.error(row, f"rank {col[row].as_py()!r} is not a whole number",
                        "ranks must be whole numbers such as 1 (trec_eval ignores them, but they must still be "
                        "numbers)")
    return pa.chunked_array([pa.array(values.astype(np.int64))])


def _cast_grades(col, ctx: _Source):
    fix = ("grades must be whole numbers (0, 1, 2, ...; negative means judged non-relevant); "
           "map labels such as 'high' or 1.5 to integers")
    try:
        return pc.cast(col, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        pass
    limit = len(col)
    try:
        as_float = pc.cast(col, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        limit = _first_failing(col, pa.float64())
        as_float = pc.cast(col.slice(0, limit), pa.float64())
    values = np.asarray(as_float.to_numpy() if hasattr(as_float, "to_numpy") else as_float, dtype=np.float64)
    bad = ~np.isfinite(values) | (values != np.round(values))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ctx.error(row, f"grade {col[row].as_py()!r} is not a whole number", fix)
    if limit < len(col):
        raise ctx.error(limit, f"grade {col[limit].as_py()!r} is not a number", fix)
    return pa.chunked_array([pa.array(values.astype(np.int64))])


# --------------------------------------------------------------------------- headed tables, JSON, parquet


def _header(line: bytes) -> list[str] | None:
    """Column names if ``line`` is a header naming a query and a document column."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        return None
    delimiter = "," if "," in text else "\t" if "\t" in text else None
    names = [n.strip().strip('"').strip() for n in (text.split(delimiter) if delimiter else text.split())]
    lowered = {n.lower() for n in names}
    if lowered & set(ALIASES["qid"]) and lowered & set(ALIASES["docno"]):
        return names
    return None


def _read_headed(data: bytes, body_start: int, header: list[str], header_line: int, kind: _Kind,
                 source: str) -> tuple[pa.Table, _Source]:
    """CSV (comma, with quotes), TSV (tab) or space-separated text under a header line."""
    header_text = data[:body_start].rsplit(b"\n", 1)[-1]
    delimiter = "," if b"," in header_text else "\t" if b"\t" in header_text else " "
    quote = '"' if delimiter == "," else False
    body = data[body_start:]
    if body[:2] == b"\r\n":
        body = body[2:]
    elif body[:1] in (b"\n", b"\r"):
        body = body[1:]
    names = [n if n else f"_{i}" for i, n in enumerate(header)]
    if len(set(names)) != len(names):
        raise _Source(source, text=data).line_error(header_line, "the header repeats a column name",
                                                    "give every column its own name")
    blanks = b" " in body or (delimiter == "," and b"\t" in body)
    if delimiter != " ":
        # Fast path: no blank or comment lines, numbers in a form pyarrow converts itself.
        numeric = {col: typ for role, typ in (("score", pa.float64()), ("rank", pa.int64()), ("rel", pa.int64()))
                   if (col := _pick(names, role)) is not None}
        try:
            table = _read_table_text(body, names, delimiter, quote, numeric, ignore_empty=False)
            if not (table.num_rows and pc.any(pc.starts_with(table[names[0]], "#")).as_py()):
                return table, _Source(source, _LineMap(None, header_line + 1), data, trim=blanks)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        body, lines = _blank_comments(body)
    else:
        body, lines = _normalise(body)
    lines = _LineMap(None if lines.lines is None else lines.lines + header_line,
                     header_line + 1 if lines.lines is None else 0)
    ctx = _Source(source, lines, data, trim=blanks)
    try:
        return _read_table_text(body, names, delimiter, quote, {}, ignore_empty=True), ctx
    except pa.ArrowInvalid:
        pass
    invalid = []

    def on_invalid(row):
        invalid.append(row)
        return "error"

    try:
        pacsv.read_csv(
            pa.py_buffer(body),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote, ignore_empty_lines=True,
                                             invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}))
    except pa.ArrowInvalid:
        pass
    if invalid and invalid[0].number is not None:
        row = invalid[0]
        raise ctx.error(row.number - 1,
                        f"expected {row.expected_columns} columns like the header ({', '.join(header)}), "
                        f"found {row.actual_columns}",
                        "give every line a value for each header column") from None
    raise ctx.line_error(header_line, "cannot read the table under this header",
                         "check the delimiter and the quoting") from None


def _read_table_text(body: bytes, names: list[str], delimiter: str, quote, numeric: dict, *,
                     ignore_empty: bool) -> pa.Table:
    types = {n: numeric.get(n, pa.string()) for n in names}
    return pacsv.read_csv(
        pa.py_buffer(body),
        read_options=pacsv.ReadOptions(column_names=names, block_size=_BLOCK_SIZE),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote, ignore_empty_lines=ignore_empty),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False))


def _blank_comments(body: bytes) -> tuple[bytes, _LineMap]:
    """Empty the comment lines of a CSV/TSV body, keeping every line; map rows to lines."""
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not (body.startswith((b"#", b"\n")) or b"\n#" in body or b"\n\n" in body):
        return body, _LineMap()
    a = np.frombuffer(body, dtype=np.uint8)
    _, starts, ends = _line_bounds(a)
    present = ends > starts
    is_comment = present.copy()
    is_comment[present] = a[starts[present]] == 35
    if is_comment.any():
        body = np.delete(a, _ranges(starts[is_comment], ends[is_comment])).tobytes()
    return body, _LineMap(np.flatnonzero(present & ~is_comment) + 1, 0)


def _read_json(data: bytes, kind: _Kind, source: str) -> tuple[pa.Table, _Source]:
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MetricsError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=source, line=exc.lineno,
                           fix=f"a JSON {kind.what} is {{qid: {{docno: {kind.value}}}}} or a list of records") \
            from None
    ctx = _Source(source)
    if isinstance(obj, dict):
        if len(obj) == 1 and kind.what in obj and isinstance(obj[kind.what], dict):
            obj = obj[kind.what]
        return _dict_to_table(obj, kind, source), ctx
    if isinstance(obj, list):
        if not all(isinstance(r, dict) for r in obj[:1]):
            raise MetricsError("a JSON list must hold records like {\"qid\": ..., \"docno\": ...}",
                               source=source, fix=f"or give {{qid: {{docno: {kind.value}}}}}")
        try:
            frame = pd.DataFrame.from_records(obj)
        except (TypeError, ValueError) as exc:
            raise MetricsError(f"cannot read the JSON records ({exc})", source=source,
                               fix="give one flat object per row") from None
        return _frame_to_table(frame, source), ctx
    raise MetricsError(f"JSON holds a {type(obj).__name__}, not {_a(kind.what)}", source=source,
                       fix=f"give {{qid: {{docno: {kind.value}}}}}")


def _read_parquet(data: bytes, source: str) -> pa.Table:
    import pyarrow.parquet as pq
    try:
        return pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise MetricsError(f"cannot read the parquet file ({exc})", source=source,
                           fix="the file may be truncated; write it again") from None


def _frame_to_table(frame: pd.DataFrame, source: str) -> pa.Table:
    frame = frame.reset_index(drop=True) if not isinstance(frame.index, pd.RangeIndex) else frame
    try:
        return pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowException, TypeError, ValueError):
        # Mixed Python objects in a column (ints and strings): read them as text.
        fixed = frame.copy()
        for col in fixed.columns:
            if fixed[col].dtype == object:
                fixed[col] = fixed[col].map(lambda v: None if v is None else str(v))
        try:
            return pa.Table.from_pandas(fixed, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError) as exc:
            raise MetricsError(f"cannot convert the DataFrame ({exc})", source=source,
                               fix="give plain columns qid, docno and score (or label)") from None


def _dict_to_table(mapping: Mapping, kind: _Kind, source: str) -> pa.Table:
    """``{qid: {docno: value}}`` -> columns (flattened with C-level iterators, no per-row Python code)."""
    if not mapping:
        raise MetricsError(f"the {kind.what} dict is empty", source=source,
                           fix=f"give {{qid: {{docno: {kind.value}}}}} with at least one entry")
    qids = list(mapping.keys())
    inner = list(mapping.values())
    for q, docs in zip(qids, inner):  # one check per query, not per document
        if not isinstance(docs, Mapping):
            raise MetricsError(f"query {str(q)!r}: expected a mapping {{docno: {kind.value}}}, "
                               f"got {type(docs).__name__}", source=source,
                               fix=f"give {{qid: {{docno: {kind.value}}}}}")
    lengths = np.fromiter(map(len, inner), dtype=np.int64, count=len(inner))
    qid_col = pa.array(np.repeat(np.array(list(map(str, qids)), dtype=object), lengths), pa.string())
    docnos = list(map(str, chain.from_iterable(inner)))
    values = list(chain.from_iterable(d.values() for d in inner))
    try:
        value_col = pa.array(values, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        numeric = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(numeric) & ~pd.isna(pd.Series(values, dtype=object)).to_numpy()
        if not bad.any():
            bad = pd.isna(pd.Series(values, dtype=object)).to_numpy()
        i = int(np.flatnonzero(bad)[0])
        q = str(qid_col[i])
        raise MetricsError(f"query {q!r}, document {docnos[i]!r}: {kind.value} {values[i]!r} is not a number",
                           source=source,
                           fix="scores must be numbers" if kind is RUN
                           else "grades must be whole numbers (0, 1, 2, ...)") from None
    return pa.table({"qid": qid_col, "docno": pa.array(docnos, pa.string()), kind.value: value_col})


# --------------------------------------------------------------------------- tables -> Run/Qrels


def _pick(names: list[str], role: str) -> str | None:
    lowered = {n.lower(): n for n in reversed(names)}
    for alias in ALIASES[role]:
        if alias in lowered:
            return lowered[alias]
    return None


def _from_table(table: pa.Table, kind: _Kind, name: str, ctx: _Source, digest_of, on_duplicate: str):
    """Map aliased columns of a headed table / frame / parquet file onto the schema, then validate."""
    names = table.column_names
    picked = {role: _pick(names, role) for role in ("qid", "docno", kind.value)}
    lacking = [role for role, col in picked.items() if col is None]
    if lacking:
        options = "; ".join(f"{role}: {' / '.join(ALIASES[role])}" for role in lacking)
        looks_other = kind is RUN and _pick(names, "rel") and not _pick(names, "score") or \
            kind is QRELS and _pick(names, "score") and not _pick(names, "rel")
        fix = (f"this looks like {_a(kind.other)} (it has a {kind.other == 'run' and 'score' or 'grade'} column); "
               f"load it with read_{kind.other}" if looks_other else f"name the columns ({options})")
        raise MetricsError(f"no {' or '.join(lacking)} column among {', '.join(map(str, names))}",
                           source=ctx.source, fix=fix)
    columns = {"qid": _string_column(table[picked["qid"]], "qid", ctx),
               "docno": _string_column(table[picked["docno"]], "docno", ctx)}
    if ctx.lines is None:
        ctx = dataclasses.replace(ctx, keys=(_as_array(columns["qid"]), _as_array(columns["docno"])))
    value = table[picked[kind.value]]
    rank_given = False
    if kind is RUN:
        columns["score"] = _numeric_column(value, "score", ctx, _cast_scores)
        rank_col = _pick(names, "rank")
        if rank_col is not None:
            columns["rank"] = _numeric_column(table[rank_col], "rank", ctx, _cast_ranks)
            rank_given = True
        tag_col = _pick(names, "tag")
        if tag_col is not None:
            columns["tag"] = _string_column(table[tag_col], "tag", ctx)
    else:
        columns["rel"] = _numeric_column(value, "rel", ctx, _cast_grades)
    out = pa.table(columns)
    return _finish(out, kind, name, ctx, lambda: digest_of(out, kind), on_duplicate, rank_given=rank_given)


def _string_column(col, role: str, ctx: _Source):
    typ = col.type
    if pa.types.is_dictionary(typ):
        col = col.cast(typ.value_type)
        typ = col.type
    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise ctx.error(row, f"{role} is missing", f"every row needs a {role}")
    if pa.types.is_floating(typ):
        values = col.to_numpy()
        if np.all(np.isfinite(values) & (values == np.round(values))):
            col = pc.cast(col, pa.int64())
    try:
        col = col.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        raise ctx.error(None, f"the {role} column ({typ}) cannot be read as text",
                        f"give {role} as strings or integers") from None
    if ctx.trim:   # CSV/TSV text: blanks around a value are layout, not data
        col = pc.utf8_trim_whitespace(col)
    if role != "tag" and len(col):
        empty = pc.equal(pc.binary_length(col), 0)
        if pc.any(empty).as_py():
            row = int(np.flatnonzero(empty.to_numpy(zero_copy_only=False))[0])
            raise ctx.error(row, f"the {role} is empty", f"every row needs a {role}")
    return col


def _numeric_column(col, role: str, ctx: _Source, cast):
    typ = col.type
    if pa.types.is_dictionary(typ):
        col = col.cast(typ.value_type)
        typ = col.type
    if col.null_count:
        row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
        raise ctx.error(row, f"{role} is missing", f"every row needs a {role}")
    if pa.types.is_boolean(typ):
        col = pc.cast(col, pa.int64())
    elif pa.types.is_string(typ) or pa.types.is_large_string(typ) or pa.types.is_string_view(typ):
        col = pc.utf8_trim_whitespace(col.cast(pa.string()))
    elif not (pa.types.is_integer(typ) or pa.types.is_floating(typ) or pa.types.is_decimal(typ)):
        raise ctx.error(None, f"the {role} column has type {typ}, not numbers", f"give {role} as numbers")
    if pa.types.is_integer(col.type) or pa.types.is_boolean(col.type):
        return pc.cast(col, pa.float64() if role == "score" else pa.int64())
    return cast(col, ctx)


def _finish(table: pa.Table, kind: _Kind, name: str, ctx: _Source, digest, on_duplicate: str,
            rank_given: bool):
    """Validate parsed columns; build the Run/Qrels with its findings (``digest()`` gives the digest)."""
    n = table.num_rows
    if n == 0:
        raise MetricsError(f"no {'documents' if kind is RUN else 'judgments'} in the {kind.what}",
                           source=ctx.source,
                           fix=f"give lines like: {' '.join(kind.fields)}")
    qid, docno = table["qid"], table["docno"]   # chunked: no copy on the fast path
    if ctx.lines is None:
        ctx = dataclasses.replace(ctx, keys=(qid, docno))
    qcode, queries = _encode(qid)
    findings: list[Finding] = []
    if kind is RUN:
        score = finite_scores(table, ctx)
        keep = _run_duplicates(qid, docno, qcode, kind, ctx, on_duplicate, findings)
        if keep is not None:
            table, qcode, score = table.filter(pa.array(keep)), qcode[keep], score[keep]
            qid, docno = table["qid"], table["docno"]
            ctx = dataclasses.replace(ctx, keys=(qid, docno) if ctx.lines is None else None,
                                      lines=None if ctx.lines is None else ctx.lines.take(np.flatnonzero(keep)))
        if rank_given:
            rank = table["rank"].to_numpy()
        else:
            rank = _canonical_ranks(qcode, score, docno)
        if "tag" not in table.column_names:
            table = table.append_column("tag", pa.chunked_array([pa.repeat(name, len(rank)).cast(pa.string())]))
        table = pa.table({"qid": table["qid"], "docno": table["docno"], "score": table["score"],
                          "rank": pa.chunked_array([pa.array(rank, pa.int64())]) if not rank_given
                          else table["rank"], "tag": table["tag"]}).cast(RUN_SCHEMA)
        findings += _order_findings(qcode, score, rank if rank_given else None, queries)
        return Run(table, name, ctx.source, digest(), findings, ctx.lines)
    rel = table["rel"].to_numpy()
    keep = _qrels_duplicates(qid, docno, qcode, rel, ctx, findings)
    if keep is not None:
        table, rel = table.filter(pa.array(keep)), rel[keep]
        qid, docno = table["qid"], table["docno"]
        ctx = dataclasses.replace(ctx, keys=(qid, docno) if ctx.lines is None else None,
                                  lines=None if ctx.lines is None else ctx.lines.take(np.flatnonzero(keep)))
    negative = rel < 0
    if negative.any():
        count = int(negative.sum())
        findings.append(Finding(
            "negative_grades",
            f"{_n(count, 'judgment')} {'has' if count == 1 else 'have'} a negative grade; "
            "they count as judged non-relevant (as in trec_eval)",
            count, [f"query {qid[int(r)].as_py()} document {docno[int(r)].as_py()} (grade {int(rel[r])})"
                    for r in np.flatnonzero(negative)[:5]]))
    table = pa.table({"qid": table["qid"], "docno": table["docno"], "rel": table["rel"]}).cast(QRELS_SCHEMA)
    return Qrels(table, name, ctx.source, digest(), findings, ctx.lines)


def finite_scores(score, ctx: "_Source") -> np.ndarray:
    """Scores (a table with a score column, or the column) as numpy, or an error naming the
    first NaN or infinite score's line."""
    if isinstance(score, pa.Table):
        score = score["score"]
    score = score.to_numpy() if isinstance(score, (pa.ChunkedArray, pa.Array)) else np.asarray(score)
    finite = np.isfinite(score)
    if not finite.all():
        row = int(np.flatnonzero(~finite)[0])
        raise ctx.error(row, f"score {float(score[row])} is not a finite number",
                        "replace NaN and infinite scores with numbers (or drop those documents)")
    return score


def _encode(values) -> tuple[np.ndarray, pa.Array]:
    """Integer code of every value (first-appearance order) and the distinct values."""
    encoded = pc.dictionary_encode(values)
    if isinstance(encoded, pa.ChunkedArray):
        chunks = encoded.chunks
        codes = np.concatenate([c.indices.to_numpy() for c in chunks])
        return codes, chunks[-1].dictionary   # pyarrow shares one growing dictionary across chunks
    return encoded.indices.to_numpy(), encoded.dictionary


def _as_array(col) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


# --------------------------------------------------------------------------- duplicates, ties


def _string_hash(arr: pa.Array) -> np.ndarray:
    """64-bit hash of every string of ``arr``: its bytes zero-padded to whole 8-byte
    words, folded word by word (xor, multiply). Equal strings hash equal; callers
    compare colliding strings exactly.
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64)
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    lengths = pc.binary_length(arr).to_numpy(zero_copy_only=False).astype(np.uint64)
    width = (int(lengths.max()) + 7) // 8 * 8 or 8
    if width > 256:
        # Very long ids (URLs): hash the first and last 128 bytes and the length.
        raw = arr.view(pa.binary())
        head = _string_hash(pc.binary_slice(raw, 0, 128).view(pa.string()))   # no UTF-8 check on the cut
        tail = _string_hash(pc.binary_slice(raw, -128).view(pa.string()))
        with np.errstate(over="ignore"):
            return _mix(head * np.uint64(0x9E3779B97F4A7C15) ^ tail) ^ lengths
    padded = pc.ascii_rpad(arr, width, "\x00")   # pads by bytes, for any UTF-8
    offsets = np.frombuffer(padded.buffers()[1], dtype=np.int32, count=padded.offset + n + 1)[padded.offset:]
    first = int(offsets[0])
    words = np.frombuffer(padded.buffers()[2], dtype="<u8", count=n * width // 8,
                          offset=first).reshape(n, width // 8)
    h = lengths  # hashed in place: at 7M rows every 56 MB temporary raises the parse's peak memory
    with np.errstate(over="ignore"):
        h *= np.uint64(0xBF58476D1CE4E5B9)
        for j in range(width // 8):
            np.bitwise_xor(h, words[:, j], out=h)
            np.multiply(h, np.uint64(0x94D049BB133111EB), out=h)
    return h


def _mix(x: np.ndarray, *, inplace: bool = False) -> np.ndarray:
    """splitmix64 finaliser (on a copy of ``x`` unless ``inplace``)."""
    if not inplace:
        x = x.copy()
    with np.errstate(over="ignore"):
        x ^= x >> np.uint64(30)
        x *= np.uint64(0xBF58476D1CE4E5B9)
        x ^= x >> np.uint64(27)
        x *= np.uint64(0x94D049BB133111EB)
        x ^= x >> np.uint64(31)
    return x


def _pair_keys(qcode: np.ndarray, docno) -> np.ndarray:
    if isinstance(docno, pa.ChunkedArray):
        chunks = [c for c in docno.chunks if len(c)]
        if len(chunks) > 1:
            # numpy and pyarrow kernels release the GIL: hash chunks on two threads.
            from concurrent.futures import ThreadPoolExecutor
            with ThreadPoolExecutor(max_workers=2) as pool:
                h = np.concatenate(list(pool.map(_string_hash, chunks)))
        else:
            h = _string_hash(chunks[0] if chunks else pa.array([], pa.string()))
    else:
        h = _string_hash(docno)
    with np.errstate(over="ignore"):
        query = qcode.astype(np.uint64)
        query *= np.uint64(0x9E3779B97F4A7C15)
        h += query
    del query
    return _mix(h, inplace=True)


def _exact_duplicates(qid: pa.Array, docno: pa.Array, qcode: np.ndarray):
    """Rows repeating an earlier (qid, docno), with the row of that earlier occurrence.

    Hash and sort the pairs (fast path: no two hashes equal); only rows whose
    hash collides are compared exactly.
    """
    keys = _pair_keys(qcode, docno)
    ordered = np.sort(keys)
    equal = ordered[1:] == ordered[:-1]
    if not equal.any():
        return None
    candidates = np.flatnonzero(np.isin(keys, np.unique(ordered[1:][equal])))
    sub = pd.DataFrame({"q": qcode[candidates],
                        "d": docno.take(pa.array(candidates)).to_numpy(zero_copy_only=False)})
    dup = sub.duplicated(keep="first").to_numpy()
    if not dup.any():
        return None
    sub["row"] = candidates
    first = sub.groupby(["q", "d"], sort=False)["row"].transform("min").to_numpy()
    return candidates[dup], first[dup]


def _run_duplicates(qid, docno, qcode, kind, ctx: _Source, on_duplicate, findings) -> np.ndarray | None:
    found = _exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    r, f = int(rows[0]), int(firsts[0])
    where = ctx.line_numbers([f, r])
    if on_duplicate == "error":
        raise ctx.error(r, f"document {docno[r].as_py()!r} appears twice for query {qid[r].as_py()!r} "
                           f"({where[0]} and {where[1]})",
                        "trec_eval refuses duplicate documents too; remove one, or pass "
                        "on_duplicate='first' to keep the first")
    keep = np.ones(len(qcode), dtype=bool)
    keep[rows] = False
    examples = [f"query {qid[int(a)].as_py()} document {docno[int(a)].as_py()} ({w1} and {w2})"
                for a, w1, w2 in zip(rows[:5], ctx.line_numbers(firsts[:5]), ctx.line_numbers(rows[:5]))]
    queries = len(np.unique(qcode[rows]))
    findings.append(Finding(
        "duplicates",
        f"{_n(len(rows), 'duplicate document')} in {_n(queries, 'query')} dropped (the first of each kept)",
        len(rows), examples))
    return keep


def _qrels_duplicates(qid, docno, qcode, rel, ctx: _Source, findings) -> np.ndarray | None:
    found = _exact_duplicates(qid, docno, qcode)
    if found is None:
        return None
    rows, firsts = found
    conflict = rel[rows] != rel[firsts]
    if conflict.any():
        i = int(np.flatnonzero(conflict)[0])
        r, f = int(rows[i]), int(firsts[i])
        where = ctx.line_numbers([f, r])
        raise ctx.error(r, f"query {qid[r].as_py()!r} judges document {docno[r].as_py()!r} twice with different "
                           f"grades ({rel[f]} on {where[0]}, {rel[r]} on {where[1]})",
                        "keep one judgment per document and query")
    keep = np.ones(len(qcode), dtype=bool)
    keep[rows] = False
    examples = [f"query {qid[int(a)].as_py()} document {docno[int(a)].as_py()} ({w1} and {w2})"
                for a, w1, w2 in zip(rows[:5], ctx.line_numbers(firsts[:5]), ctx.line_numbers(rows[:5]))]
    findings.append(Finding(
        "duplicate_judgments",
        f"{_n(len(rows), 'repeated judgment')} (same query, document and grade) collapsed into one",
        len(rows), examples))
    return keep


def _canonical_order(qcode: np.ndarray, score: np.ndarray, docno: pa.Array) -> np.ndarray:
    """Rows by query code, score descending, docno descending (trec_eval's order).

    A numeric sort first; docno strings are compared only inside groups of tied scores.
    """
    order = np.lexsort((-score, qcode))
    q, s = qcode[order], score[order]
    same = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if not same.any():
        return order
    in_tie = np.zeros(len(order), dtype=bool)
    in_tie[1:] |= same
    in_tie[:-1] |= same
    tie_rows = np.flatnonzero(in_tie)
    starts = np.ones(len(tie_rows), dtype=bool)
    starts[1:] = ~same[tie_rows[1:] - 1]
    group = np.cumsum(starts)
    ties = pa.table({"g": group, "d": docno.take(pa.array(order[tie_rows]))})
    inner = pc.sort_indices(ties, sort_keys=[("g", "ascending"), ("d", "descending")]).to_numpy()
    order[tie_rows] = order[tie_rows][inner]
    return order


def _positions(sorted_qcode: np.ndarray) -> np.ndarray:
    """0-based position of every row within its query, rows sorted by query code."""
    n = len(sorted_qcode)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    new = np.ones(n, dtype=bool)
    new[1:] = sorted_qcode[1:] != sorted_qcode[:-1]
    starts = np.flatnonzero(new)
    return np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, n)))


def _canonical_ranks(qcode: np.ndarray, score: np.ndarray, docno: pa.Array) -> np.ndarray:
    order = _canonical_order(qcode, score, docno)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = _positions(qcode[order]) + 1
    return rank


def _order_findings(qcode: np.ndarray, score: np.ndarray, rank: np.ndarray | None,
                    queries: pa.Array) -> list[Finding]:
    """Rank column against score order, and tied scores, per query (vectorised)."""
    n = len(qcode)
    findings = []
    if n < 2:
        return findings
    by_score = None  # (query codes, scores) in an order where scores never rise within a query
    if rank is not None:
        boundary = qcode[1:] != qcode[:-1]
        in_rank_order = int(boundary.sum()) + 1 == len(queries) and bool(np.all(boundary | (rank[1:] > rank[:-1])))
        order = None if in_rank_order else np.lexsort((rank, qcode))
        q = qcode if order is None else qcode[order]
        s = score if order is None else score[order]
        rising = (q[1:] == q[:-1]) & (s[1:] > s[:-1])
        if rising.any():
            bad = np.unique(q[1:][rising])
            findings.append(Finding(
                "rank_order",
                f"in {_n(len(bad), 'query')} the rank column disagrees with the scores; scores decide the "
                "order (trec_eval ignores the rank column)",
                len(bad), [f"query {x}" for x in queries.take(pa.array(bad[:5])).to_pylist()]))
        else:
            by_score = (q, s)
    if by_score is None:
        order = np.lexsort((-score, qcode))
        by_score = (qcode[order], score[order])
    q, s = by_score
    tie = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    if tie.any():
        tied = np.zeros(n, dtype=bool)
        tied[1:] |= tie
        tied[:-1] |= tie
        per_query = np.bincount(q[tied], minlength=len(queries))
        tied_queries = np.flatnonzero(per_query)
        count = int(tied.sum())
        top = tied_queries[np.argsort(-per_query[tied_queries], kind="stable")[:5]]
        findings.append(Finding(
            "ties",
            f"{_n(count, 'document')} in {_n(len(tied_queries), 'query')} share their score with another document of "
            "the same query; ties are broken by docno descending (trec_eval's rule)",
            count, [f"query {x}: {int(per_query[c])} tied documents"
                    for c, x in zip(top, queries.take(pa.array(top)).to_pylist())]))
    return findings


# --------------------------------------------------------------------------- lint helpers, digests


def _sorted_strings(arr: pa.Array) -> list[str]:
    return arr.take(pc.sort_indices(arr)).to_pylist()


def _judged_at_k(qrels: Qrels, run: Run, k: int, qrels_queries: pa.Array) -> tuple[float, int]:
    """Mean over judged queries of the run of (judged among the canonical top k) / min(k, retrieved)."""
    qid, docno = run.table["qid"], run.table["docno"]
    in_qrels = pc.is_in(qid, value_set=qrels_queries).to_numpy()
    if not in_qrels.any():
        return 0.0, 0
    if in_qrels.all():
        qid, docno, score = _as_array(qid), _as_array(docno), run.table["score"].to_numpy()
    else:
        take = pa.array(np.flatnonzero(in_qrels))
        qid, docno = _as_array(qid.take(take)), _as_array(docno.take(take))
        score = run.table["score"].to_numpy()[in_qrels]
    qcode, queries = _encode(qid)
    top = _top_k(qcode, score, docno, k)
    judged = _judged_pairs(qcode[top], docno.take(pa.array(top)), queries, qrels)
    n_q = len(queries)
    judged_count = np.bincount(qcode[top], weights=judged, minlength=n_q)
    depth = np.minimum(np.bincount(qcode, minlength=n_q), k)
    return float((judged_count / depth).mean()), n_q


def _judged_pairs(qcode: np.ndarray, docno: pa.Array, queries: pa.Array, qrels: Qrels) -> np.ndarray:
    """Whether each (query code, docno) is judged: hashed pair keys, hits confirmed exactly."""
    judged = np.zeros(len(qcode), dtype=bool)
    qrels_qid, qrels_docno = qrels.table["qid"], qrels.table["docno"]
    if len(qcode) < qrels.table.num_rows // 4:
        # Few documents to look up: first keep the judgments of those docnos (a small hash set).
        near = pc.is_in(qrels_docno, value_set=pc.unique(docno))
        qrels_qid, qrels_docno = qrels_qid.filter(near), qrels_docno.filter(near)
    q_code = pc.index_in(qrels_qid, value_set=queries)
    valid = pc.is_valid(q_code).to_numpy(zero_copy_only=False)
    if not valid.any() or not len(qcode):
        return judged
    q_rows = np.flatnonzero(valid)
    q_docno = _as_array(qrels_docno).take(pa.array(q_rows))
    q_keys = _pair_keys(q_code.to_numpy(zero_copy_only=False)[q_rows].astype(np.int64), q_docno)
    by_key = np.argsort(q_keys)
    sorted_keys = q_keys[by_key]
    keys = _pair_keys(qcode, docno)
    by_needle = np.argsort(keys)        # sorted needles keep the binary searches cache-friendly
    at = np.empty(len(keys), dtype=np.int64)
    at[by_needle] = np.minimum(np.searchsorted(sorted_keys, keys[by_needle]), len(sorted_keys) - 1)
    hit = np.flatnonzero(sorted_keys[at] == keys)
    if len(hit):
        match = by_key[at[hit]]
        same = pc.equal(docno.take(pa.array(hit)), q_docno.take(pa.array(match))).to_numpy(zero_copy_only=False)
        same &= q_code.to_numpy(zero_copy_only=False)[q_rows[match]].astype(np.int64) == qcode[hit]
        judged[hit[same]] = True
    return judged


def _top_k(qcode: np.ndarray, score: np.ndarray, docno: pa.Array, k: int) -> np.ndarray:
    """Rows (ascending) of the first k documents of every query in canonical order (score desc, docno desc).

    Only documents scoring at least a query's k-th best score can make its top k,
    so the string comparison for ties runs on those few rows, not on the run.
    """
    boundary = qcode[1:] != qcode[:-1]
    n_queries = int(qcode.max()) + 1 if len(qcode) else 0
    if int(boundary.sum()) + 1 == n_queries and bool(np.all(boundary | (score[1:] <= score[:-1]))):
        order = None                       # the usual layout: one block per query, scores descending
        sorted_q, sorted_s = qcode, score
    else:
        order = np.lexsort((-score, qcode))
        sorted_q, sorted_s = qcode[order], score[order]
    position = _positions(sorted_q)
    kth = np.full(n_queries, np.inf)
    last = (position == k - 1) | np.append(sorted_q[1:] != sorted_q[:-1], True) & (position < k - 1)
    kth[sorted_q[last]] = sorted_s[last]
    candidates = np.flatnonzero(score >= kth[qcode])
    crowded = np.bincount(qcode[candidates], minlength=n_queries)[qcode[candidates]] > k
    if not crowded.any():
        return candidates
    # Ties at the k-th score: docno descending decides who is in.
    tied = candidates[crowded]
    chosen = tied[_canonical_order(qcode[tied], score[tied], docno.take(pa.array(tied)))]
    return np.sort(np.concatenate((candidates[~crowded], chosen[_positions(qcode[chosen]) < k])))


def _canonical_digest(table: pa.Table, kind: _Kind) -> str:
    """sha256 of the columns in schema order: string lengths and bytes, numbers as little-endian."""
    h = hashlib.sha256(f"nDCG-Lab {kind.what} v1\n".encode())
    for col_name in table.column_names:
        col = _as_array(table[col_name])
        h.update(col_name.encode() + b"\x00")
        if pa.types.is_string(col.type):
            offsets = np.frombuffer(col.buffers()[1], dtype=np.int32,
                                    count=col.offset + len(col) + 1)[col.offset:]
            h.update(np.diff(offsets).astype("<i8").tobytes())
            if col.buffers()[2] is not None:
                h.update(memoryview(col.buffers()[2])[int(offsets[0]):int(offsets[-1])])
        elif pa.types.is_floating(col.type):
            h.update(col.to_numpy(zero_copy_only=False).astype("<f8").tobytes())
        else:
            h.update(col.to_numpy(zero_copy_only=False).astype("<i8").tobytes())
    return h.hexdigest()
