"""Tables: CSV/TSV with a header, ranx-style JSON, parquet, pandas DataFrames and dicts.

Columns are found by name (:data:`ALIASES`) and mapped onto the run or qrels schema.
"""
from __future__ import annotations

import csv
import dataclasses
import io as stdio
import json
import re
import sys
from collections.abc import Mapping
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import MetricsError
from .keys import as_array
from .lending import lend
from .parquet import read_parquet_table
from .trec import BLOCK_SIZE, line_bounds, normalise, ranges
from .validate import (
    QRELS,
    RUN,
    Kind,
    LineMap,
    Origin,
    article,
    cast_grades,
    cast_ranks,
    cast_scores,
    finish,
    numeric_column,
    string_column,
)

if TYPE_CHECKING:
    import pandas as pd

# Column names accepted in headed tables, frames and parquet (lower case, by priority).
ALIASES = {
    "qid": ("qid", "query_id", "queryid", "q_id", "topic", "topic_id", "topicid", "query"),
    "docno": ("docno", "doc_id", "docid", "document_id", "documentid", "did", "pid"),
    "score": ("score", "sim", "similarity"),
    "rank": ("rank",),
    "tag": ("tag", "run_id", "runid", "run", "system"),
    "rel": ("rel", "relevance", "label", "grade", "judgment", "judgement"),
}


def header_columns(line: bytes) -> list[str] | None:
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


def read_headed(data: bytes, body_start: int, header: list[str], header_line: int, kind: Kind,
                 source: str) -> tuple[pa.Table, Origin]:
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
        raise Origin(source, text=data).line_error(header_line, "the header repeats a column name",
                                                    "give every column its own name")
    blanks = b" " in body or (delimiter == "," and b"\t" in body)
    if delimiter != " ":
        # Fast path: no blank or comment lines, numbers in a form pyarrow converts itself.
        numeric = {col: typ for role, typ in (("score", pa.float64()), ("rank", pa.int64()), ("rel", pa.int64()))
                   if (col := pick(names, role)) is not None}
        try:
            table = _read_table_text(body, names, delimiter, quote, numeric, ignore_empty=False)
            if not (table.num_rows and pc.any(pc.starts_with(table[names[0]], "#")).as_py()):
                return table, Origin(source, LineMap(None, header_line + 1), data, trim=blanks)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            pass
        body, lines = _blank_comments(body)
    else:
        body, lines = normalise(body)
    lines = LineMap(None if lines.lines is None else lines.lines + header_line,
                     header_line + 1 if lines.lines is None else 0)
    origin = Origin(source, lines, data, trim=blanks)
    try:
        return _read_table_text(body, names, delimiter, quote, {}, ignore_empty=True), origin
    except pa.ArrowInvalid:
        pass
    invalid = []

    def on_invalid(row):
        invalid.append(row)
        return "error"

    try:
        lend(
            pacsv.read_csv, body,
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote, ignore_empty_lines=True,
                                             invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}))
    except pa.ArrowInvalid:
        pass
    if invalid and invalid[0].number is not None:
        row = invalid[0]
        raise origin.error(row.number - 1,
                        f"expected {row.expected_columns} columns like the header ({', '.join(header)}), "
                        f"found {row.actual_columns}",
                        "give every line a value for each header column") from None
    raise origin.line_error(header_line, "cannot read the table under this header",
                         "check the delimiter and the quoting") from None


def _read_table_text(body: bytes, names: list[str], delimiter: str, quote, numeric: dict, *,
                     ignore_empty: bool) -> pa.Table:
    types = {n: numeric.get(n, pa.string()) for n in names}
    return lend(
        pacsv.read_csv, body,
        read_options=pacsv.ReadOptions(column_names=names, block_size=BLOCK_SIZE),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=quote, ignore_empty_lines=ignore_empty),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=[], strings_can_be_null=False,
                                             quoted_strings_can_be_null=False))


def _blank_comments(body: bytes) -> tuple[bytes, LineMap]:
    """Empty the comment lines of a CSV/TSV body, keeping every line; map rows to lines."""
    if b"\r" in body:
        body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    if not (body.startswith((b"#", b"\n")) or b"\n#" in body or b"\n\n" in body):
        return body, LineMap()
    a = np.frombuffer(body, dtype=np.uint8)
    _, starts, ends = line_bounds(a)
    present = ends > starts
    is_comment = present.copy()
    is_comment[present] = a[starts[present]] == 35
    if is_comment.any():
        body = np.delete(a, ranges(starts[is_comment], ends[is_comment])).tobytes()
    return body, LineMap(np.flatnonzero(present & ~is_comment) + 1, 0)


def read_json(data: bytes, kind: Kind, source: str) -> tuple[pa.Table, Origin]:
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise MetricsError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=source, line=exc.lineno,
                           fix=f"a JSON {kind.what} is {{qid: {{docno: {kind.value}}}}} or a list of records") \
            from None
    origin = Origin(source)
    if isinstance(obj, dict):
        if len(obj) == 1 and kind.what in obj and isinstance(obj[kind.what], dict):
            obj = obj[kind.what]
        return dict_to_table(obj, kind, source), origin
    if isinstance(obj, list):
        if not all(isinstance(r, dict) for r in obj[:1]):
            raise MetricsError("a JSON list must hold records like {\"qid\": ..., \"docno\": ...}",
                               source=source, fix=f"or give {{qid: {{docno: {kind.value}}}}}")
        import pandas as pd

        try:
            frame = pd.DataFrame.from_records(obj)
        except (TypeError, ValueError) as exc:
            raise MetricsError(f"cannot read the JSON records ({exc})", source=source,
                               fix="give one flat object per row") from None
        return frame_to_table(frame, source), origin
    raise MetricsError(f"JSON holds a {type(obj).__name__}, not {article(kind.what)}", source=source,
                       fix=f"give {{qid: {{docno: {kind.value}}}}}")


def read_parquet(data: bytes, source: str) -> pa.Table:
    try:
        return read_parquet_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as exc:
        raise MetricsError(f"cannot read the parquet file ({exc})", source=source,
                           fix="the file may be truncated; write it again") from None


def is_frame(value) -> bool:
    """A pandas DataFrame, told without importing pandas: a process that has not imported it holds none."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def frame_to_table(frame: pd.DataFrame, source: str) -> pa.Table:
    import pandas as pd
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


def dict_to_table(mapping: Mapping, kind: Kind, source: str) -> pa.Table:
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
        import pandas as pd

        numeric = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(numeric) & ~pd.isna(pd.Series(values, dtype=object)).to_numpy()
        if not bad.any():
            bad = pd.isna(pd.Series(values, dtype=object)).to_numpy()
        if not bad.any():   # integers beyond int64: the grade or rank checks name them
            return pa.table({"qid": qid_col, "docno": pa.array(docnos, pa.string()), kind.value: pa.array(numeric)})
        i = int(np.flatnonzero(bad)[0])
        q = str(qid_col[i])
        raise MetricsError(f"query {q!r}, document {docnos[i]!r}: {kind.value} {values[i]!r} is not a number",
                           source=source,
                           fix="scores must be numbers" if kind is RUN
                           else "grades must be whole numbers (0, 1, 2, ...)") from None
    return pa.table({"qid": qid_col, "docno": pa.array(docnos, pa.string()), kind.value: value_col})


def pick(names: list[str], role: str) -> str | None:
    lowered = {n.lower(): n for n in reversed(names)}
    for alias in ALIASES[role]:
        if alias in lowered:
            return lowered[alias]
    return None


def from_table(table: pa.Table, kind: Kind, name: str, origin: Origin, digest_of, on_duplicate: str):
    """Map aliased columns of a headed table / frame / parquet file onto the schema, then validate."""
    names = table.column_names
    picked = {role: pick(names, role) for role in ("qid", "docno", kind.value)}
    lacking = [role for role, col in picked.items() if col is None]
    if lacking:
        options = "; ".join(f"{role}: {' / '.join(ALIASES[role])}" for role in lacking)
        looks_other = kind is RUN and pick(names, "rel") and not pick(names, "score") or \
            kind is QRELS and pick(names, "score") and not pick(names, "rel")
        fix = (f"this looks like {article(kind.other)} (it has a {kind.other == 'run' and 'score' or 'grade'} column); "
               f"load it with read_{kind.other}" if looks_other else f"name the columns ({options})")
        raise MetricsError(f"no {' or '.join(lacking)} column among {', '.join(map(str, names))}",
                           source=origin.source, fix=fix)
    columns = {"qid": string_column(table[picked["qid"]], "qid", origin),
               "docno": string_column(table[picked["docno"]], "docno", origin)}
    if origin.lines is None:
        origin = dataclasses.replace(origin, keys=(as_array(columns["qid"]), as_array(columns["docno"])))
    value = table[picked[kind.value]]
    rank_given = False
    if kind is RUN:
        columns["score"] = numeric_column(value, "score", origin, cast_scores)
        rank_col = pick(names, "rank")
        if rank_col is not None:
            columns["rank"] = numeric_column(table[rank_col], "rank", origin, cast_ranks)
            rank_given = True
        tag_col = pick(names, "tag")
        if tag_col is not None:
            columns["tag"] = string_column(table[tag_col], "tag", origin)
    else:
        columns["rel"] = numeric_column(value, "rel", origin, cast_grades)
    out = pa.table(columns)
    return finish(out, kind, name, origin, lambda: digest_of(out, kind), on_duplicate, rank_given=rank_given)


def read_two_columns(src, columns: tuple[str, str], *, source: str | None = None) -> pd.DataFrame:
    """Topics (qid, text) or document metadata (docno, title): TSV/CSV with a header, or two
    columns without one. Every value is read as text.

    ``src``: a path, bytes or a file object (Streamlit upload). Every problem is a MetricsError
    naming the file (and the line where one is known).
    """
    import pandas as pd
    if isinstance(src, (str, Path)):
        name = source or Path(src).name
        try:
            data = Path(src).expanduser().read_bytes()
        except OSError as exc:
            raise MetricsError(f"cannot read {str(src)!r}: {exc.strerror or exc}", source=name,
                               fix="check the path") from None
    elif isinstance(src, (bytes, bytearray, memoryview)):
        name, data = source or "<bytes>", bytes(src)
    else:
        name = source or getattr(src, "name", None) or "<upload>"
        data = src.getvalue() if hasattr(src, "getvalue") else src.read()
    try:
        raw = data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise MetricsError(f"invalid UTF-8 (byte 0x{data[exc.start]:02x})", source=name, line=line,
                           fix="save the file as UTF-8 (for example: iconv -f latin1 -t utf-8)") from None
    lines = raw.splitlines()
    first = next((i for i, text in enumerate(lines) if text.strip()), None)
    if first is None:
        raise MetricsError("the file is empty", source=name, line=1,
                           fix=f"upload a table with columns {columns[0]} and {columns[1]}")
    sep = "\t" if "\t" in lines[first] else ","

    def parse(header):
        try:
            return pd.read_csv(stdio.StringIO(raw), sep=sep, dtype=str, keep_default_na=False, header=header,
                               quoting=csv.QUOTE_NONE if sep == "\t" else csv.QUOTE_MINIMAL,
                               skip_blank_lines=True)
        except (pd.errors.ParserError, csv.Error, ValueError) as exc:
            found = re.search(r"line (\d+)", str(exc))
            raise MetricsError(f"cannot read the table ({str(exc).strip().splitlines()[0]})", source=name,
                               line=int(found.group(1)) if found else None,
                               fix=f"give one row per line: {columns[0]}<TAB>{columns[1]}") from None

    frame = parse(0)
    lowered = [str(c).strip().lower() for c in frame.columns]
    if not set(columns) <= set(lowered) and "query" not in lowered:
        frame = parse(None)
        if frame.shape[1] < 2:
            raise MetricsError(f"expected two columns ({columns[0]}, {columns[1]})", source=name, line=first + 1,
                               fix=f"write a header line '{columns[0]}<TAB>{columns[1]}'")
        frame = frame.iloc[:, :2]
        frame.columns = list(columns)
    else:
        frame.columns = lowered
    return frame
