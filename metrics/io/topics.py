"""Read topics (queries) in the formats collections ship them in, into one tidy frame.

Formats, sniffed from the content (``format=`` forces one):

- ``trec``: TREC SGML, ``<top> <num> Number: 301 <title> ... <desc> Description: ...
  <narr> Narrative: ... </top>``, tags unclosed as in the classic files or closed; the
  "Number:", "Topic:", "Description:", "Narrative:" (and "Summary:", "Concept(s):", ...)
  labels are dropped. Fields: title, description, narrative, and any other tag by name.
- ``trec-xml``: ``<topics><topic number="1">text</topic></topics>`` (the text becomes the
  ``query`` field) or with child elements (``<query>``, ``<question>``, ``<narrative>``, ...;
  each one a field, repeated ones joined by newlines); the number may also be an ``id``
  attribute or a ``<number>``/``<num>``/``<qid>`` child; other attributes become fields.
- ``tsv`` / ``csv``: one topic per line, with a header naming the columns (a query-id column
  such as qid, query_id, topic_id or num, and any text columns) or without one (qid, query).
  Tab-separated text is read without quoting (MS MARCO queries hold quotes); CSV honours them.
- ``text``: ``qid query text ...`` separated by blanks.
- ``jsonl`` / ``json``: records with a query id (qid, query_id, _id, id, topic_id, number)
  and text fields (query, text, title, ...); a JSON list of such records, ``{qid: text}`` or
  ``{qid: {field: text}}``.
- ``parquet``, pandas DataFrames (PyTerrier's ``qid``, ``query``) and pyarrow Tables.
- Each of them gzip, bz2, xz or zstd compressed (recognised by their magic bytes).

The result has a string column ``qid`` and one string column per field, in file order;
``frame.attrs`` holds ``source`` and ``format``. Whitespace inside SGML/XML fields is
collapsed to single spaces. Errors are :class:`MetricsError` naming the file, the line and
the problem: malformed XML (the parser's line), a topic without a number, a query id given
twice, an empty file, binary data, invalid UTF-8, a row with the wrong number of columns.
"""
from __future__ import annotations

import csv
import io as _stdio
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from ..errors import MetricsError
from .inflate import decompress
from .lending import lend
from .parquet import read_parquet_table
from .sniff import is_parquet, without_bom
from .topics_markup import read_sgml, read_xml

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_topics", "text_fields", "default_field", "query_text", "FORMATS"]

FORMATS = ("trec", "trec-xml", "tsv", "csv", "text", "jsonl", "json", "parquet")

# Names of a query-id column or key (lower case, by priority).
QID_NAMES = ("qid", "query_id", "queryid", "q_id", "topic_id", "topicid", "topic", "qno", "num", "number",
             "_id", "id")
# Fields offered as the query text first, in this order; any other field follows.
PREFERRED = ("title", "query", "text", "question", "description", "narrative")

_DELIMITER_NAMES = {"\t": "tab", ",": "comma"}

# --------------------------------------------------------------------------- public API


def read_topics(src, *, source: str | None = None, format: str | None = None) -> pd.DataFrame:
    """Parse topics from a path, bytes, a file object, a DataFrame, a pyarrow Table or a mapping.

    Returns the tidy frame described in the module docstring.
    """
    import pandas as pd
    if format is not None and format not in FORMATS:
        raise MetricsError(f"unknown topics format {format!r}", source=source, fix=f"use one of {', '.join(FORMATS)}")
    if isinstance(src, pd.DataFrame):
        return _from_frame(src, source or "<DataFrame>", "frame")
    if isinstance(src, pa.Table):
        return _from_frame(src.to_pandas(), source or "<Table>", "frame")
    if isinstance(src, Mapping):
        return _from_json_object(src, source or "<dict>", "dict")
    if isinstance(src, (str, Path)):
        path = Path(src).expanduser()
        label = source or path.name
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise MetricsError(f"no such file: {str(path)!r}", source=label, fix="check the path") from None
        except IsADirectoryError:
            raise MetricsError(f"{str(path)!r} is a folder, not a file", source=label,
                               fix="give the topics file inside it") from None
        except OSError as exc:
            raise MetricsError(f"cannot read {str(path)!r}: {exc.strerror or exc}", source=label,
                               fix="check the path and permissions") from None
        return _from_bytes(raw, label, format)
    if isinstance(src, (bytes, bytearray, memoryview)):
        return _from_bytes(bytes(src), source or "<bytes>", format)
    if hasattr(src, "read"):
        name = getattr(src, "name", None)
        label = source or (Path(name).name if isinstance(name, str) and name else "<stream>")
        raw = src.getvalue() if hasattr(src, "getvalue") else src.read()
        return _from_bytes(raw.encode("utf-8") if isinstance(raw, str) else bytes(raw), label, format)
    raise MetricsError(f"cannot read topics from a {type(src).__name__}", source=source,
                       fix="pass a path, bytes, a file object, a DataFrame or a {qid: text} mapping")


def text_fields(topics: pd.DataFrame) -> list[str]:
    """The text fields of a topics frame, those usually meant as the query first (title, query, text, ...)."""
    fields = [c for c in topics.columns if c != "qid"]
    return [f for f in PREFERRED if f in fields] + [f for f in fields if f not in PREFERRED]


def default_field(topics: pd.DataFrame) -> str:
    """The field used as query text when none is chosen: the first of :func:`text_fields` with any text."""
    fields = text_fields(topics)
    for f in fields:
        if topics[f].fillna("").astype(str).str.strip().ne("").any():
            return f
    if not fields:
        raise MetricsError("the topics have no text field", source=topics.attrs.get("source"),
                           fix="give a column or tag with the query text")
    return fields[0]


def query_text(topics: pd.DataFrame, field: str | None = None) -> pd.DataFrame:
    """``qid, text`` from the chosen field (default: :func:`default_field`); a topic lacking it gets ""."""
    import pandas as pd
    if "qid" not in topics.columns:
        raise MetricsError("the topics frame has no qid column", source=topics.attrs.get("source"),
                           fix="read it with metrics.io.topics.read_topics")
    field = default_field(topics) if field is None else field
    if field not in topics.columns or field == "qid":
        raise MetricsError(f"the topics have no field {field!r}", source=topics.attrs.get("source"),
                           fix=f"choose one of {', '.join(text_fields(topics)) or '(none)'}")
    return pd.DataFrame({"qid": topics["qid"].astype("string"),
                         "text": topics[field].astype("string").fillna("")}).reset_index(drop=True)


# --------------------------------------------------------------------------- bytes -> text


def _from_bytes(raw: bytes, source: str, format: str | None) -> pd.DataFrame:
    data = decompress(raw, source)
    if is_parquet(data) or format == "parquet":
        try:
            table = read_parquet_table(pa.BufferReader(data))
        except (pa.ArrowException, OSError) as exc:
            raise MetricsError(f"cannot read the parquet file ({exc})", source=source,
                               fix="the file may be truncated; write it again") from None
        return _from_frame(table.to_pandas(), source, "parquet")
    data = without_bom(data)
    if not data.strip():
        raise MetricsError("the file is empty" if not data else "the file holds only blank lines", source=source,
                           line=1, fix="give topics: TREC <top> or XML <topic> elements, qid<TAB>query lines, or JSONL")
    nul = data.find(b"\x00")
    if nul >= 0:
        raise MetricsError(f"binary data (a NUL byte) at byte {nul}; this is not a text topics file", source=source,
                           line=data.count(b"\n", 0, nul) + 1,
                           fix="give a text file (gzip, bz2, xz and zstd are unpacked automatically) or parquet")
    try:
        text = data.decode(_declared_encoding(data) or "utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise MetricsError(f"invalid UTF-8 (byte 0x{data[exc.start]:02x} at column {exc.start - start + 1})",
                           source=source, line=data.count(b"\n", 0, exc.start) + 1,
                           fix="save the file as UTF-8 (for example: iconv -f latin1 -t utf-8)") from None
    format = format or _sniff(text)
    if format == "trec":
        return _finish(read_sgml(text, source), source, format)
    if format == "trec-xml":
        return _finish(read_xml(text, source), source, format)
    bulk = _bulk_delimited(text, format) if format in ("tsv", "csv") else _bulk_jsonl(data) if format == "jsonl" \
        else None
    if bulk is not None:
        bulk.attrs.update(source=source, format=format)
        return bulk
    if format in ("jsonl", "json"):
        return _read_json_text(text, source, format)
    return _finish(_read_delimited(text, source, format), source, format)


def _declared_encoding(data: bytes) -> str | None:
    """The encoding an XML declaration names (``<?xml ... encoding="ISO-8859-1"?>``), if Python knows it."""
    import codecs

    m = re.match(rb"\s*<\?xml[^>]*encoding=[\"']([A-Za-z0-9._-]+)[\"']", data)
    if m is None:
        return None
    try:
        return codecs.lookup(m.group(1).decode("ascii")).name
    except LookupError:
        return None


def _sniff(text: str) -> str:
    head = text.lstrip()[:4096]
    if head.startswith("<"):
        return "trec" if re.search(r"</?top\s*>", text, re.IGNORECASE) else "trec-xml"
    if head.startswith("["):
        return "json"
    if head.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError:
            return "jsonl"
        return "jsonl" if _is_record(obj) else "json"   # a one-line JSONL file is a JSON document too
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    return "tsv" if "\t" in first else "csv" if "," in first else "text"


# --------------------------------------------------------------------------- bulk paths

# Clean TSV/CSV and JSONL files (most of them) are read in bulk by pyarrow. The line-by-line
# readers below run when a bulk check fails, and they name the line of the problem; both give
# the same frame for the same file (tests/metrics/io/test_topics.py reads every fixture both ways).


def _bulk_delimited(text: str, format: str) -> pd.DataFrame | None:
    """TSV/CSV through pyarrow's reader; None when the file needs the line-by-line reader."""
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    delimiter = "\t" if format == "tsv" else ","
    start = len(text) - len(text.lstrip())
    start = text.rfind("\n", 0, start) + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    first = text[start:end].rstrip("\r")
    if first.lstrip().startswith("#") or '"' in first and format == "csv":
        return None
    cells = [c.strip() for c in first.split(delimiter)]
    header = _header(cells)
    names = header or ["qid", "query"] + [f"column_{i + 1}" for i in range(2, len(cells))]
    if len(cells) < 2 or len(set(names)) != len(names):
        return None
    body = text[end + 1:] if header is not None else text[start:]
    if format == "csv" and body.count('"') % 2:
        return None                           # an unclosed quote: let the csv module say where
    try:
        table = lend(
            pacsv.read_csv, body.encode("utf-8"),
            read_options=pacsv.ReadOptions(column_names=names, block_size=16 << 20),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False if format == "tsv" else '"',
                                             ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, null_values=[],
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    if table.num_rows == 0:
        return None
    columns = {n: pc.utf8_trim_whitespace(table[n]) for n in names}
    qid = columns["qid"]
    if pc.any(pc.equal(pc.binary_length(qid), 0)).as_py() or pc.any(pc.starts_with(qid, "#")).as_py():
        return None
    return _bulk_frame(columns)


def _bulk_jsonl(data: bytes) -> pd.DataFrame | None:
    """JSON lines through pyarrow's reader; None when the file needs the line-by-line reader."""
    import pyarrow.compute as pc
    import pyarrow.json as pajson

    try:
        table = lend(pajson.read_json, data)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return None
    lowered = [c.lower() for c in table.column_names]
    if len(set(lowered)) != len(lowered) or table.num_rows == 0:
        return None
    id_name = next((n for n in QID_NAMES if n in lowered), None)
    if id_name is None:
        return None
    columns: dict[str, Any] = {}
    for name, col in zip(lowered, table.columns):
        typ = col.type
        if name == id_name:
            if not (pa.types.is_string(typ) or pa.types.is_integer(typ)) or col.null_count:
                return None
            qid = pc.utf8_trim_whitespace(col.cast(pa.string()))
            if pc.any(pc.equal(pc.binary_length(qid), 0)).as_py():
                return None
            columns = {"qid": qid, **columns}
        elif pa.types.is_string(typ) or pa.types.is_integer(typ):
            columns[name] = col.cast(pa.string())
        elif pa.types.is_floating(typ):
            return None                       # str() of Python floats and pyarrow's casts differ
    return _bulk_frame(columns)


def _bulk_frame(columns: dict) -> pd.DataFrame | None:
    import pandas as pd
    frame = pd.DataFrame({n: col.to_pandas().astype("string") for n, col in columns.items()})
    return None if frame["qid"].duplicated().any() else frame


# --------------------------------------------------------------------------- delimited text


def _read_delimited(text: str, source: str, format: str) -> list:
    delimiter = {"tsv": "\t", "csv": ","}.get(format)
    lines = text.splitlines()
    numbered = [(i + 1, ln) for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")]
    if not numbered:
        raise MetricsError("no topics: every line is blank or a comment (#)", source=source, line=len(lines),
                           fix="give one topic per line: qid, then the query text")
    if delimiter is None:   # blanks: the first word is the id, the rest the query
        out = []
        for n, line in numbered:
            parts = line.strip().split(None, 1)
            if len(parts) < 2:
                raise MetricsError("expected a query id and its text, found one word", source=source, line=n,
                                   fix="write the query id, a tab (or a blank), then the query text")
            out.append(_row_topic(parts, ["qid", "query"], n, source))
        return out
    reader = csv.reader(_stdio.StringIO(text), delimiter=delimiter,
                        quoting=csv.QUOTE_NONE if delimiter == "\t" else csv.QUOTE_MINIMAL, strict=True)
    rows = []
    try:
        for row in reader:
            if row and any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#"):
                rows.append((reader.line_num, [cell.strip() for cell in row]))
    except csv.Error as exc:
        raise MetricsError(f"cannot read the CSV ({exc})", source=source, line=reader.line_num,
                           fix="check the quotes on this line") from None
    if not rows:
        raise MetricsError("no topics: every line is blank or a comment (#)", source=source, line=len(lines),
                           fix="give one topic per line: qid, then the query text")
    header = _header(rows[0][1])
    if header is None:
        width = len(rows[0][1])
        if width < 2:
            raise MetricsError("expected two columns (qid and query text), found 1", source=source, line=rows[0][0],
                               fix=f"separate the query id from its text with a {_DELIMITER_NAMES[delimiter]}")
        header = ["qid", "query"] + [f"column_{i + 1}" for i in range(2, width)]
    else:
        rows = rows[1:]
    out = []
    for n, row in rows:
        if len(row) != len(header):
            raise MetricsError(f"expected {len(header)} columns ({', '.join(header)}), found {len(row)}",
                               source=source, line=n, fix="give every line one value per column"
                               + (" (a tab inside the query text splits it)" if delimiter == "\t" else ""))
        out.append(_row_topic(row, header, n, source))
    return out


def _header(cells: list) -> list | None:
    """Column names if ``cells`` is a header (naming a query-id column), with that column called qid."""
    lowered = [c.strip().strip('"').lower() for c in cells]
    id_col = next((name for name in QID_NAMES if name in lowered), None)
    if id_col is None:
        return None
    names = ["qid" if c == id_col else c or f"column_{i + 1}" for i, c in enumerate(lowered)]
    return names


def _row_topic(row: list, header: list, line: int, source: str) -> tuple:
    values = dict(zip(header, row))
    qid = values.pop("qid").strip()
    if not qid:
        raise MetricsError("the query id is empty", source=source, line=line, fix="every line starts with its query id")
    return qid, values, line


# --------------------------------------------------------------------------- JSON, frames


def _read_json_text(text: str, source: str, format: str) -> pd.DataFrame:
    if format == "json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MetricsError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=source, line=exc.lineno,
                               fix="give JSON lines (one object per line) or one JSON document") from None
        return _from_json_object(obj, source, "json")
    topics = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MetricsError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=source, line=n,
                               fix='each line is one object, e.g. {"qid": "1", "query": "..."}') from None
        topics.append(_record_topic(record, f"line {n}", source, n))
    return _finish(topics, source, "jsonl")


def _from_json_object(obj, source: str, format: str) -> pd.DataFrame:
    if isinstance(obj, Mapping):
        for key in ("topics", "queries"):
            if len(obj) == 1 and isinstance(obj.get(key), list):
                obj = obj[key]
                break
    if isinstance(obj, list):
        return _finish([_record_topic(r, f"record {i + 1}", source, None) for i, r in enumerate(obj)], source, format)
    if isinstance(obj, Mapping):
        if not obj:
            raise MetricsError("no topics in the mapping", source=source, fix="give {qid: query text}")
        topics = []
        for qid, value in obj.items():
            if isinstance(value, Mapping):
                topics.append((str(qid), _text_values(value), None))
            elif isinstance(value, str):
                topics.append((str(qid), {"query": value}, None))
            else:
                raise MetricsError(f"query {str(qid)!r}: expected text or {{field: text}}, got {type(value).__name__}",
                                   source=source, fix="give {qid: query text} or {qid: {field: text}}")
        return _finish(topics, source, format)
    raise MetricsError(f"JSON holds a {type(obj).__name__}, not topics", source=source,
                       fix='give records like {"qid": "1", "query": "..."}')


def _is_record(obj) -> bool:
    """An object naming a query id with a scalar value: one topic, not a {qid: text} mapping."""
    return isinstance(obj, Mapping) and any(
        str(k).lower() in QID_NAMES and isinstance(v, (str, int)) for k, v in obj.items())


def _record_topic(record, where: str, source: str, line: int | None) -> tuple:
    problem_at = f"{where}: " if line is None else ""
    if not isinstance(record, Mapping):
        raise MetricsError(f"{problem_at}expected an object, got {type(record).__name__}", source=source, line=line,
                           fix='each record is an object such as {"qid": "1", "query": "..."}')
    lowered = {str(k).lower(): v for k, v in record.items()}
    key = next((name for name in QID_NAMES if lowered.get(name) not in (None, "")), None)
    if key is None:
        raise MetricsError(f"{problem_at}the record has no query id", source=source, line=line,
                           fix=f"name it with one of {', '.join(QID_NAMES)}")
    qid = lowered.pop(key)
    return str(qid).strip(), _text_values(lowered), line


def _text_values(record: Mapping) -> dict:
    """Text fields of a record: strings as they are, numbers as text; nested values are left out."""
    out = {}
    for k, v in record.items():
        if isinstance(v, str):
            out[str(k).lower()] = v
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            out[str(k).lower()] = str(v)
    return out


def _from_frame(frame: pd.DataFrame, source: str, format: str) -> pd.DataFrame:
    import pandas as pd
    lowered = {str(c).lower(): c for c in reversed(list(frame.columns))}
    id_col = next((lowered[n] for n in QID_NAMES if n in lowered), None)
    if id_col is None:
        raise MetricsError(f"no query-id column among {', '.join(map(str, frame.columns))}", source=source,
                           fix=f"name it with one of {', '.join(QID_NAMES[:6])}")
    qid = frame[id_col]
    if qid.isna().any():
        row = int(qid.isna().to_numpy().nonzero()[0][0])
        raise MetricsError(f"row {row + 1}: the query id is missing", source=source, fix="every topic needs an id")
    fields = {str(c).lower(): frame[c] for c in frame.columns if c != id_col}
    out = pd.DataFrame({"qid": qid.astype(str).str.strip().astype("string"),
                        **{k: v.astype("string") for k, v in fields.items()}}).reset_index(drop=True)
    _check_unique(out["qid"].tolist(), None, source)
    out.attrs.update(source=source, format=format)
    return out


# --------------------------------------------------------------------------- the frame


def _finish(topics: list, source: str, format: str) -> pd.DataFrame:
    """``[(qid, {field: text}, line)]`` -> the tidy frame, after checking the ids."""
    import pandas as pd
    if not topics:
        raise MetricsError("no topics found", source=source, fix="give at least one topic")
    _check_unique([t[0] for t in topics], [t[2] for t in topics], source)
    columns = list(dict.fromkeys(f for _, values, _ in topics for f in values))
    data = {"qid": pd.array([t[0] for t in topics], dtype="string")}
    for col in columns:
        data[col] = pd.array([values.get(col) for _, values, _ in topics], dtype="string")
    out = pd.DataFrame(data)
    out.attrs.update(source=source, format=format)
    return out


def _check_unique(qids: list, lines: list | None, source: str) -> None:
    seen: dict = {}
    for i, qid in enumerate(qids):
        if not qid:
            raise MetricsError("the query id is empty", source=source, line=None if lines is None else lines[i],
                               fix="give every topic an id")
        if qid in seen:
            j = seen[qid]
            if lines is None or lines[i] is None:
                raise MetricsError(f"query id {qid!r} is given twice (rows {j + 1} and {i + 1})", source=source,
                                   fix="give every topic its own id")
            raise MetricsError(f"query id {qid!r} is given twice (lines {lines[j]} and {lines[i]})", source=source,
                               line=lines[i], fix="give every topic its own id")
        seen[qid] = i
