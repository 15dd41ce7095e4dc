"""The workspace's values outside the database: names, topics and docs as Arrow tables, content
digests, tables conformed to a schema, findings as JSON, and times as DuckDB stores them.

Nothing here touches a cursor; the steps that read and write the tables are in
:mod:`metrics.store.tables`, which calls these through the module (``values.findings_to_json``), so
that a test can make one of them fail inside a step. Names are at most :data:`MAX_NAME` characters,
without control characters or bidirectional overrides.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from .. import io
from ..errors import MetricsError
from ..io.tables import is_frame

if TYPE_CHECKING:  # pandas is imported where a frame is read or made
    import pandas as pd

EXTRAS = {"topics": ("qid", "text", ("text", "query", "title")), "docs": ("docno", "title", ("title",))}
"""Topics and docs: (key column, text column, the text column's accepted names)."""
MAX_NAME = 200
# C0/C1 controls, line separators, and the bidirectional overrides that make a name read
# otherwise than it is stored ("Trojan Source").
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


# -- names -----------------------------------------------------------------------------


def no_run(collection: str, name: str) -> MetricsError:
    return MetricsError(f"collection {collection!r} has no run named {name!r}",
                        fix="pick one of the collection's runs (Workspace.runs lists them)")


def unique_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"


def clean_name(name, what: str) -> str:
    """The name without surrounding blanks; MetricsError if empty, too long or with a control character."""
    text = "" if name is None else str(name).strip()
    if not text:
        raise MetricsError(f"the {what} name is empty", fix=f"give the {what} a name")
    if len(text) > MAX_NAME:
        raise MetricsError(f"the {what} name is {len(text):,} characters long", fix=f"keep it to {MAX_NAME}")
    bad = _CONTROL.search(text)
    if bad:
        raise MetricsError(f"the {what} name holds a control character (U+{ord(bad.group()):04X})",
                           fix="use printable characters only")
    return text


# -- topics and docs -------------------------------------------------------------------


def extra_table(what: str, frame: pd.DataFrame) -> pa.Table:
    """Topics or docs as a two-column Arrow table of strings (the key column may not be empty)."""
    key, value, value_aliases = EXTRAS[what]
    if not is_frame(frame):
        raise MetricsError(f"{what} must be a pandas DataFrame, not {type(frame).__name__}",
                           fix=f"give a DataFrame with columns {key} and {value}")
    lowered = {str(c).lower(): c for c in reversed(list(frame.columns))}
    key_col = next((lowered[a] for a in io.ALIASES[key] if a in lowered), None)
    value_col = next((lowered[a] for a in value_aliases if a in lowered), None)
    if key_col is None or value_col is None:
        raise MetricsError(f"the {what} table needs columns {key} and {value}; found "
                           f"{', '.join(map(str, frame.columns)) or 'none'}",
                           fix=f"name the columns {key} and {value}")
    columns = {}
    for out, col in ((key, key_col), (value, value_col)):
        columns[out] = _text_column(frame[col], what, col)
    if columns[key].null_count:
        row = int(np.flatnonzero(columns[key].is_null().to_numpy(zero_copy_only=False))[0])
        raise MetricsError(f"row {row + 1} of the {what} table has no {key}", fix=f"every row needs a {key}")
    return pa.table(columns)


def _text_column(series: pd.Series, what: str, col) -> pa.Array:
    errors = (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, TypeError)
    try:
        return pa.array(series, from_pandas=True).cast(pa.string())
    except errors:
        pass
    # Mixed Python objects (ints and strings): as text, keeping missing values missing.
    import pandas as pd

    series = series.map(lambda v: None if v is None or v is pd.NA or v != v else str(v))
    try:
        return pa.array(series, from_pandas=True, type=pa.string())
    except errors as exc:
        raise MetricsError(f"the {what} column {col!r} cannot be read as text ({exc})",
                           fix="give plain text or integer values") from None


# -- values ----------------------------------------------------------------------------


def as_qrels(qrels):
    return qrels if isinstance(qrels, io.Qrels) else io.read_qrels(qrels)


def as_run(run):
    return run if isinstance(run, io.Run) else io.read_run(run)


def digest(obj) -> str:
    """The object's content digest; in-memory objects built without one get sha256 of their Arrow bytes."""
    if obj.digest:
        return obj.digest
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, obj.table.schema) as writer:
        writer.write_table(obj.table)
    return hashlib.sha256(sink.getvalue()).hexdigest()


def conform(table: pa.Table, schema: pa.Schema, source: str) -> pa.Table:
    missing = [n for n in schema.names if n not in table.column_names]
    if missing:
        raise MetricsError(f"the table has no {', '.join(missing)} column", source=source or None,
                           fix="parse the file with metrics.io.read_run / read_qrels before storing it")
    table = table.select(schema.names)
    if table.schema.equals(schema):
        return table
    try:
        return table.cast(schema)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise MetricsError(f"the table does not fit the schema {schema} ({exc})", source=source or None,
                           fix="parse the file with metrics.io.read_run / read_qrels before storing it") from None


def findings_to_json(findings) -> str:
    items = [dataclasses.asdict(f) if dataclasses.is_dataclass(f) and not isinstance(f, type) else dict(f)
             for f in findings or []]
    return json.dumps(items, default=_json_value)


def _json_value(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, tuple, np.ndarray)):
        return list(value)
    return str(value)


def findings_from_json(text: str) -> list:
    known = {f.name for f in dataclasses.fields(io.Finding)}
    return [io.Finding(**{k: v for k, v in item.items() if k in known}) for item in json.loads(text or "[]")]


def now() -> datetime:
    """Now in UTC, naive (DuckDB TIMESTAMP); :func:`utc` marks it UTC again on the way out."""
    return datetime.now(UTC).replace(tzinfo=None)


def utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def naive(value: datetime) -> datetime:
    """A UTC datetime as DuckDB's naive TIMESTAMP."""
    return utc(value).replace(tzinfo=None)
