"""The workspace: collections of qrels, runs, topics and documents in one DuckDB file.

A collection has a unique name, one qrels, optionally proxy (inferred)
judgments, topics (qid, text), document metadata (docno, title) and any number
of runs, one of which may be its baseline. Runs and qrels are stored parsed, as
columnar tables (one row per input line), and once per content digest: adding
the same run again, to the same or another collection, only links the stored
copy. An object's rows are deleted when no collection links it any more.

Every change is one DuckDB transaction, so a failed upload leaves the workspace
as it was. Everything lives in the file, so it survives a restart of the app.

Loading is a single scan fetched as Arrow (no per-row Python); file order is
kept by DuckDB's insertion-order guarantee (``preserve_insertion_order``, on by
default: a scan of one table with a WHERE keeps the order rows were inserted in),
with an explicit ``pos`` column to ORDER BY should that setting be off.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from . import io
from .errors import MetricsError

__all__ = ["Workspace", "CollectionInfo", "StoredInfo", "RunInfo", "QrelsInfo", "default_path"]

FILE_NAME = "workspace.duckdb"
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE SEQUENCE IF NOT EXISTS object_ids START 1;
CREATE SEQUENCE IF NOT EXISTS collection_ids START 1;
CREATE SEQUENCE IF NOT EXISTS link_ids START 1;
-- One row per stored run or qrels, unique per (kind, digest).
CREATE TABLE IF NOT EXISTS objects (
    id BIGINT PRIMARY KEY, kind VARCHAR NOT NULL, digest VARCHAR NOT NULL,
    n_lines BIGINT NOT NULL, n_queries BIGINT NOT NULL, findings VARCHAR NOT NULL,
    stored TIMESTAMP NOT NULL);
CREATE TABLE IF NOT EXISTS collections (
    id BIGINT PRIMARY KEY, name VARCHAR NOT NULL, baseline VARCHAR, created TIMESTAMP NOT NULL);
-- An object as a collection sees it: its role there, the name and source file it was given.
CREATE TABLE IF NOT EXISTS links (
    id BIGINT PRIMARY KEY, collection_id BIGINT NOT NULL, object_id BIGINT NOT NULL,
    role VARCHAR NOT NULL, name VARCHAR NOT NULL, source VARCHAR NOT NULL, added TIMESTAMP NOT NULL);
CREATE TABLE IF NOT EXISTS run_lines (
    object_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, docno VARCHAR NOT NULL,
    score DOUBLE NOT NULL, rank BIGINT NOT NULL, tag VARCHAR NOT NULL);
CREATE TABLE IF NOT EXISTS qrels_lines (
    object_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, docno VARCHAR NOT NULL,
    rel BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS topics (
    collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, qid VARCHAR NOT NULL, text VARCHAR);
CREATE TABLE IF NOT EXISTS docs (
    collection_id BIGINT NOT NULL, pos BIGINT NOT NULL, docno VARCHAR NOT NULL, title VARCHAR);
"""

_LINES = {"run": ("run_lines", io.RUN_SCHEMA), "qrels": ("qrels_lines", io.QRELS_SCHEMA)}
_EXTRAS = {"topics": ("qid", "text", ("text", "query", "title")), "docs": ("docno", "title", ("title",))}

# One lock per database file: writers in this process (any Workspace object on
# the file) take turns, so DuckDB never sees two write transactions collide.
_LOCKS: dict[str, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def default_path() -> Path:
    """``$NDCG_LAB_HOME/workspace.duckdb``, else the per-user data folder (XDG)."""
    home = os.environ.get("NDCG_LAB_HOME")
    if home:
        return Path(home).expanduser() / FILE_NAME
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data).expanduser() / "ndcg-lab" / FILE_NAME


@dataclass(frozen=True)
class StoredInfo:
    """A stored run or qrels as one collection sees it.

    ``id`` names the stored content (equal ids, equal rows); ``uploaded`` is
    when it was added to the collection, in UTC.
    """

    id: int
    name: str
    source: str
    digest: str
    uploaded: datetime
    n_lines: int
    n_queries: int
    findings: list = field(default_factory=list, compare=False)


RunInfo = StoredInfo
QrelsInfo = StoredInfo


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    qrels: StoredInfo
    proxy: StoredInfo | None
    n_runs: int
    baseline: str | None
    created: datetime
    n_topics: int = 0
    n_docs: int = 0

    @property
    def qrels_digest(self) -> str:
        return self.qrels.digest

    @property
    def proxy_digest(self) -> str | None:
        return None if self.proxy is None else self.proxy.digest


class Workspace:
    """The workspace database; safe to share between threads (Streamlit sessions).

    ``path`` is a file, a folder (which then holds ``workspace.duckdb``),
    ``":memory:"``, or None for :func:`default_path`. Each operation runs on
    its own DuckDB cursor inside one transaction; writes take a per-file lock.
    """

    def __init__(self, path: str | os.PathLike | None = None) -> None:
        path = default_path() if path is None else path
        if str(path) == ":memory:":
            self.path: Path | str = ":memory:"
            key = f":memory:{id(self)}"
        else:
            path = Path(path).expanduser()
            if path.is_dir():
                path = path / FILE_NAME
            self.path = path.resolve()
            key = str(self.path)
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MetricsError(f"cannot create the folder {str(self.path.parent)!r} ({exc.strerror or exc})",
                                   source=str(self.path), fix="pass --workspace with a writable path") from None
        with _LOCKS_GUARD:
            self._lock = _LOCKS.setdefault(key, threading.RLock())
        self._cursor_lock = threading.Lock()
        try:
            self._con: duckdb.DuckDBPyConnection | None = duckdb.connect(str(self.path))
        except duckdb.Error as exc:
            raise MetricsError(f"cannot open the workspace ({_first_line(exc)})", source=str(self.path),
                               fix="if another nDCG Lab process has it open, close that one or pass "
                                   "--workspace with another file; if the file is not a DuckDB "
                                   "database, move it away") from None
        try:
            self._create_schema()
        except BaseException:
            self.close()
            raise

    def _create_schema(self) -> None:
        with self._write() as cur:
            cur.execute(_SCHEMA)
            row = _one(cur, "SELECT value FROM meta WHERE key = 'schema_version'")
            if row is None:
                cur.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
            elif int(row[0]) > SCHEMA_VERSION:
                raise MetricsError(f"the workspace was written by a newer nDCG Lab (schema {row[0]})",
                                   source=str(self.path), fix="upgrade nDCG Lab or use another workspace file")

    # -- lifecycle ---------------------------------------------------------------------

    def close(self) -> None:
        with self._lock, self._cursor_lock:
            if self._con is not None:
                self._con.close()
                self._con = None

    def __enter__(self) -> "Workspace":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r})"

    # -- transactions ------------------------------------------------------------------

    def _cursor(self) -> duckdb.DuckDBPyConnection:
        with self._cursor_lock:
            if self._con is None:
                raise MetricsError("the workspace is closed", source=str(self.path),
                                   fix="open it again with Workspace(path)")
            return self._con.cursor()

    @contextmanager
    def _transaction(self):
        cur = self._cursor()
        try:
            cur.execute("BEGIN TRANSACTION")
            try:
                yield cur
                cur.execute("COMMIT")
            except BaseException:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    pass  # a failed COMMIT has already rolled back
                raise
        except duckdb.Error as exc:
            raise MetricsError(f"the workspace could not be read or changed ({_first_line(exc)})",
                               source=str(self.path), fix="nothing was changed; try again") from exc
        finally:
            cur.close()

    @contextmanager
    def _write(self):
        """One write transaction: all of it or nothing; writers take turns."""
        with self._lock, self._transaction() as cur:
            yield cur

    def _read(self):
        """One read transaction: a consistent snapshot, concurrent with writers."""
        return self._transaction()

    # -- collections -------------------------------------------------------------------

    def has_collection(self, name: str) -> bool:
        with self._read() as cur:
            return _collection_id(cur, name, must_exist=False) is not None

    def collections(self) -> list[CollectionInfo]:
        """Every collection, oldest first."""
        with self._read() as cur:
            rows = cur.execute("""
                SELECT c.id, c.name, c.baseline, c.created,
                       (SELECT count(*) FROM links l WHERE l.collection_id = c.id AND l.role = 'run'),
                       (SELECT count(*) FROM topics t WHERE t.collection_id = c.id),
                       (SELECT count(*) FROM docs d WHERE d.collection_id = c.id)
                FROM collections c ORDER BY c.id""").fetchall()
            judgments = {}
            for role in ("qrels", "proxy"):
                for info, cid in _infos(cur, role=role):
                    judgments[cid, role] = info
        return [CollectionInfo(name=name, qrels=judgments[cid, "qrels"], proxy=judgments.get((cid, "proxy")),
                               n_runs=n_runs, baseline=baseline, created=_utc(created), n_topics=n_topics,
                               n_docs=n_docs)
                for cid, name, baseline, created, n_runs, n_topics, n_docs in rows]

    def create_collection(self, name: str, qrels, *, proxy=None, topics: pd.DataFrame | None = None,
                          docs: pd.DataFrame | None = None) -> str:
        """Create a collection around its qrels; MetricsError if the name is taken."""
        name = _clean_name(name, "collection")
        qrels = _as_qrels(qrels)
        proxy = None if proxy is None else _as_qrels(proxy)
        topics_table = None if topics is None else _extra_table("topics", topics)
        docs_table = None if docs is None else _extra_table("docs", docs)
        with self._write() as cur:
            if _collection_id(cur, name, must_exist=False) is not None:
                raise MetricsError(f"a collection named {name!r} already exists",
                                   fix="choose another name, or delete that collection first")
            cid = _one(cur, "SELECT nextval('collection_ids')")[0]
            cur.execute("INSERT INTO collections VALUES (?, ?, NULL, ?)", [cid, name, _now()])
            self._link(cur, cid, "qrels", _store_object(cur, "qrels", qrels), qrels.name, qrels.source)
            if proxy is not None:
                self._link(cur, cid, "proxy", _store_object(cur, "qrels", proxy), proxy.name, proxy.source)
            if topics_table is not None:
                _insert_extra(cur, "topics", cid, topics_table)
            if docs_table is not None:
                _insert_extra(cur, "docs", cid, docs_table)
        return name

    def rename_collection(self, old: str, new: str) -> None:
        new = _clean_name(new, "collection")
        with self._write() as cur:
            cid = _collection_id(cur, old)
            if new != old and _collection_id(cur, new, must_exist=False) is not None:
                raise MetricsError(f"a collection named {new!r} already exists", fix="choose another name")
            cur.execute("UPDATE collections SET name = ? WHERE id = ?", [new, cid])

    def delete_collection(self, name: str) -> None:
        """Delete a collection, its topics and docs, and every run or qrels no other collection links."""
        with self._write() as cur:
            cid = _collection_id(cur, name)
            objects = [r[0] for r in cur.execute("SELECT object_id FROM links WHERE collection_id = ?",
                                                 [cid]).fetchall()]
            cur.execute("DELETE FROM links WHERE collection_id = ?", [cid])
            cur.execute("DELETE FROM topics WHERE collection_id = ?", [cid])
            cur.execute("DELETE FROM docs WHERE collection_id = ?", [cid])
            cur.execute("DELETE FROM collections WHERE id = ?", [cid])
            _collect_garbage(cur, objects)

    def set_qrels(self, collection: str, qrels) -> None:
        qrels = _as_qrels(qrels)
        with self._write() as cur:
            self._replace_judgments(cur, _collection_id(cur, collection), "qrels", qrels)

    def set_proxy(self, collection: str, proxy) -> None:
        """Set (or with None, remove) the collection's proxy judgments, used for ``inferred``."""
        proxy = None if proxy is None else _as_qrels(proxy)
        with self._write() as cur:
            self._replace_judgments(cur, _collection_id(cur, collection), "proxy", proxy)

    def set_topics(self, collection: str, topics: pd.DataFrame | None) -> None:
        """Replace the topics (columns qid and text, or PyTerrier's qid and query); None clears them."""
        self._replace_extra("topics", collection, topics)

    def set_docs(self, collection: str, docs: pd.DataFrame | None) -> None:
        """Replace the document metadata (columns docno and title); None clears it."""
        self._replace_extra("docs", collection, docs)

    def load_qrels(self, collection: str) -> io.Qrels:
        with self._read() as cur:
            return _load_judgments(cur, _collection_id(cur, collection), "qrels")

    def load_proxy(self, collection: str) -> io.Qrels | None:
        with self._read() as cur:
            return _load_judgments(cur, _collection_id(cur, collection), "proxy")

    def load_topics(self, collection: str) -> pd.DataFrame:
        """Topics in upload order: columns qid, text (empty when none were given)."""
        return self._load_extra("topics", collection)

    def load_docs(self, collection: str) -> pd.DataFrame:
        """Document metadata in upload order: columns docno, title (empty when none was given)."""
        return self._load_extra("docs", collection)

    # -- runs --------------------------------------------------------------------------

    def runs(self, collection: str) -> list[RunInfo]:
        """The collection's runs in the order they were added."""
        with self._read() as cur:
            return [info for info, _ in _infos(cur, role="run", collection_id=_collection_id(cur, collection))]

    def add_run(self, collection: str, run, name: str | None = None) -> RunInfo:
        """Store a run (a parsed Run, or anything ``metrics.io.read_run`` reads) in a collection.

        The name defaults to the run's; a name already taken gets " (2)", " (3)", ...
        A run whose content (digest) the collection already holds is not added
        again: its existing entry is returned.
        """
        run = run if isinstance(run, io.Run) else io.read_run(run)
        name = _clean_name(run.name if name is None else name, "run")
        with self._write() as cur:
            cid = _collection_id(cur, collection)
            existing = _linked(cur, cid, "run", "run", _digest(run))
            if existing is not None:
                return existing
            taken = {r[0] for r in cur.execute(
                "SELECT name FROM links WHERE collection_id = ? AND role = 'run'", [cid]).fetchall()}
            name = _unique_name(name, taken)
            self._link(cur, cid, "run", _store_object(cur, "run", run), name, run.source)
            return _infos(cur, role="run", collection_id=cid, name=name)[0][0]

    def load_run(self, collection: str, name: str) -> io.Run:
        """The stored run, rows in file order, as an Arrow-backed Run (no per-row Python)."""
        with self._read() as cur:
            cid = _collection_id(cur, collection)
            row = _one(cur, """
                SELECT l.object_id, l.name, l.source, o.digest, o.findings
                FROM links l JOIN objects o ON o.id = l.object_id
                WHERE l.collection_id = ? AND l.role = 'run' AND l.name = ?""", [cid, name])
            if row is None:
                raise _no_run(collection, name)
            object_id, name, source, digest, findings = row
            table = _fetch_lines(cur, "run", object_id)
        return io.Run(table, name, source, digest, _findings_from_json(findings))

    def rename_run(self, collection: str, old: str, new: str) -> None:
        new = _clean_name(new, "run")
        with self._write() as cur:
            cid = _collection_id(cur, collection)
            link = _run_link(cur, cid, collection, old)
            if new == old:
                return
            if _one(cur, "SELECT 1 FROM links WHERE collection_id = ? AND role = 'run' AND name = ?", [cid, new]):
                raise MetricsError(f"collection {collection!r} already has a run named {new!r}",
                                   fix="choose another name, or delete or rename that run first")
            cur.execute("UPDATE links SET name = ? WHERE id = ?", [new, link])
            cur.execute("UPDATE collections SET baseline = ? WHERE id = ? AND baseline = ?", [new, cid, old])

    def delete_run(self, collection: str, name: str) -> None:
        """Remove a run from a collection (its rows too, once no collection links them)."""
        with self._write() as cur:
            cid = _collection_id(cur, collection)
            link = _run_link(cur, cid, collection, name)
            object_id = _one(cur, "SELECT object_id FROM links WHERE id = ?", [link])[0]
            cur.execute("DELETE FROM links WHERE id = ?", [link])
            cur.execute("UPDATE collections SET baseline = NULL WHERE id = ? AND baseline = ?", [cid, name])
            _collect_garbage(cur, [object_id])

    def set_baseline(self, collection: str, name: str | None) -> None:
        """Mark one run of the collection as the baseline of its comparisons (None: no baseline)."""
        with self._write() as cur:
            cid = _collection_id(cur, collection)
            if name is not None:
                _run_link(cur, cid, collection, name)
            cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [name, cid])

    def baseline(self, collection: str) -> str | None:
        with self._read() as cur:
            cid = _collection_id(cur, collection)
            return _one(cur, "SELECT baseline FROM collections WHERE id = ?", [cid])[0]

    def stats(self) -> dict[str, int]:
        """Row counts of the stored tables (what the workspace holds, for display and tests)."""
        with self._read() as cur:
            return {t: _one(cur, f"SELECT count(*) FROM {t}")[0]
                    for t in ("collections", "links", "objects", "run_lines", "qrels_lines", "topics", "docs")}

    # -- steps inside a write transaction ----------------------------------------------

    def _link(self, cur, collection_id: int, role: str, object_id: int, name: str, source: str) -> None:
        cur.execute("INSERT INTO links VALUES (nextval('link_ids'), ?, ?, ?, ?, ?, ?)",
                    [collection_id, object_id, role, name, source or "", _now()])

    def _replace_judgments(self, cur, cid: int, role: str, qrels) -> None:
        if qrels is not None and _linked(cur, cid, role, "qrels", _digest(qrels)) is not None:
            return
        old = [r[0] for r in cur.execute("SELECT object_id FROM links WHERE collection_id = ? AND role = ?",
                                         [cid, role]).fetchall()]
        cur.execute("DELETE FROM links WHERE collection_id = ? AND role = ?", [cid, role])
        if qrels is not None:
            self._link(cur, cid, role, _store_object(cur, "qrels", qrels), qrels.name, qrels.source)
        _collect_garbage(cur, old)

    def _replace_extra(self, what: str, collection: str, frame: pd.DataFrame | None) -> None:
        table = None if frame is None else _extra_table(what, frame)
        with self._write() as cur:
            cid = _collection_id(cur, collection)
            cur.execute(f"DELETE FROM {what} WHERE collection_id = ?", [cid])
            if table is not None:
                _insert_extra(cur, what, cid, table)

    def _load_extra(self, what: str, collection: str) -> pd.DataFrame:
        key, value, _ = _EXTRAS[what]
        with self._read() as cur:
            cid = _collection_id(cur, collection)
            rel = cur.sql(f"SELECT {key}, {value} FROM {what} WHERE collection_id = $id{_order(cur)}",
                          params={"id": cid})
            return _arrow(rel).to_pandas()


# -- helpers (module level so that tests can force a failure at any step) ---------------


def _store_object(cur, kind: str, obj) -> int:
    """Id of the stored copy of a run or qrels (``kind``), inserting its rows if new."""
    digest = _digest(obj)
    row = _one(cur, "SELECT id FROM objects WHERE kind = ? AND digest = ?", [kind, digest])
    if row is not None:
        return row[0]
    lines, schema = _LINES[kind]
    table = _conform(obj.table, schema, obj.source)
    object_id = _one(cur, "SELECT nextval('object_ids')")[0]
    n = table.num_rows
    incoming = table.append_column("pos", pa.array(np.arange(n, dtype=np.int64)))
    view = f"incoming_{kind}"
    cur.register(view, incoming)
    try:
        columns = ", ".join(schema.names)
        cur.execute(f"INSERT INTO {lines} SELECT $id, pos, {columns} FROM {view}", {"id": object_id})
    finally:
        cur.unregister(view)
    n_queries = pc.count_distinct(table.column("qid")).as_py()
    cur.execute("INSERT INTO objects VALUES (?, ?, ?, ?, ?, ?, ?)",
                [object_id, kind, digest, n, n_queries, _findings_to_json(obj.findings), _now()])
    return object_id


def _one(cur, sql: str, params=None) -> tuple | None:
    """The first row of a query, or None; the result is read to the end (DuckDB >= 2 refuses
    other work on a cursor while a result is pending)."""
    rows = cur.execute(sql, params).fetchall()
    return rows[0] if rows else None


def _collect_garbage(cur, object_ids) -> None:
    """Delete the rows of those objects that no collection links any more."""
    if not object_ids:
        return
    ids = sorted(set(int(i) for i in object_ids))
    marks = ", ".join("?" * len(ids))
    orphans = [r[0] for r in cur.execute(
        f"SELECT id FROM objects WHERE id IN ({marks}) AND id NOT IN (SELECT object_id FROM links)",
        ids).fetchall()]
    if not orphans:
        return
    marks = ", ".join("?" * len(orphans))
    for table in ("run_lines", "qrels_lines", "objects"):
        column = "id" if table == "objects" else "object_id"
        cur.execute(f"DELETE FROM {table} WHERE {column} IN ({marks})", orphans)


def _fetch_lines(cur, kind: str, object_id: int) -> pa.Table:
    lines, schema = _LINES[kind]
    rel = cur.sql(f"SELECT {', '.join(schema.names)} FROM {lines} WHERE object_id = $id{_order(cur)}",
                  params={"id": object_id})
    table = _arrow(rel)
    return table if table.schema.equals(schema) else table.cast(schema)


def _order(cur) -> str:
    """Rows come back in insertion order unless DuckDB was told it need not keep it."""
    keep = _one(cur, "SELECT current_setting('preserve_insertion_order')")[0]
    return "" if keep in (True, "true") else " ORDER BY pos"


def _arrow(rel) -> pa.Table:
    fetch = getattr(rel, "to_arrow_table", None) or rel.fetch_arrow_table  # duckdb >= 1.4 / older
    return fetch()


def _load_judgments(cur, cid: int, role: str) -> io.Qrels | None:
    row = _one(cur, """
        SELECT l.object_id, l.name, l.source, o.digest, o.findings
        FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = ?""", [cid, role])
    if row is None:
        return None
    object_id, name, source, digest, findings = row
    return io.Qrels(_fetch_lines(cur, "qrels", object_id), name, source, digest, _findings_from_json(findings))


def _infos(cur, *, role: str, collection_id: int | None = None,
           name: str | None = None) -> list[tuple[StoredInfo, int]]:
    """(info, collection id) of the links in ``role``, optionally of one collection / one name."""
    where, params = ["l.role = ?"], [role]
    if collection_id is not None:
        where.append("l.collection_id = ?")
        params.append(collection_id)
    if name is not None:
        where.append("l.name = ?")
        params.append(name)
    rows = cur.execute(f"""
        SELECT o.id, l.name, l.source, o.digest, l.added, o.n_lines, o.n_queries, o.findings, l.collection_id
        FROM links l JOIN objects o ON o.id = l.object_id
        WHERE {' AND '.join(where)} ORDER BY l.id""", params).fetchall()
    return [(StoredInfo(id=oid, name=n, source=src, digest=dg, uploaded=_utc(added), n_lines=lines,
                        n_queries=queries, findings=_findings_from_json(findings)), cid)
            for oid, n, src, dg, added, lines, queries, findings, cid in rows]


def _linked(cur, cid: int, role: str, kind: str, digest: str) -> StoredInfo | None:
    """The collection's entry in ``role`` holding content ``digest``, if any."""
    row = _one(cur, """
        SELECT l.name FROM links l JOIN objects o ON o.id = l.object_id
        WHERE l.collection_id = ? AND l.role = ? AND o.kind = ? AND o.digest = ?""", [cid, role, kind, digest])
    if row is None:
        return None
    return _infos(cur, role=role, collection_id=cid, name=row[0])[0][0]


def _collection_id(cur, name: str, *, must_exist: bool = True) -> int | None:
    row = _one(cur, "SELECT id FROM collections WHERE name = ?", [name])
    if row is None and must_exist:
        known = [r[0] for r in cur.execute("SELECT name FROM collections ORDER BY id").fetchall()]
        raise MetricsError(f"no collection named {name!r}",
                           fix=f"known collections: {', '.join(map(repr, known))}" if known
                           else "the workspace is empty; create a collection first")
    return None if row is None else row[0]


def _run_link(cur, cid: int, collection: str, name: str) -> int:
    row = _one(cur, "SELECT id FROM links WHERE collection_id = ? AND role = 'run' AND name = ?", [cid, name])
    if row is None:
        raise _no_run(collection, name)
    return row[0]


def _no_run(collection: str, name: str) -> MetricsError:
    return MetricsError(f"collection {collection!r} has no run named {name!r}",
                        fix="pick one of the collection's runs (Workspace.runs lists them)")


def _unique_name(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    i = 2
    while f"{name} ({i})" in taken:
        i += 1
    return f"{name} ({i})"


def _clean_name(name, what: str) -> str:
    text = "" if name is None else str(name).strip()
    if not text:
        raise MetricsError(f"the {what} name is empty", fix=f"give the {what} a name")
    return text


def _as_qrels(qrels):
    return qrels if isinstance(qrels, io.Qrels) else io.read_qrels(qrels)


def _digest(obj) -> str:
    """The object's content digest; in-memory objects built without one get sha256 of their Arrow bytes."""
    if obj.digest:
        return obj.digest
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, obj.table.schema) as writer:
        writer.write_table(obj.table)
    return hashlib.sha256(sink.getvalue()).hexdigest()


def _conform(table: pa.Table, schema: pa.Schema, source: str) -> pa.Table:
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


def _extra_table(what: str, frame: pd.DataFrame) -> pa.Table:
    """Topics or docs as a two-column Arrow table of strings (the key column may not be empty)."""
    key, value, value_aliases = _EXTRAS[what]
    if not isinstance(frame, pd.DataFrame):
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
    series = series.map(lambda v: None if v is None or v is pd.NA or v != v else str(v))
    try:
        return pa.array(series, from_pandas=True, type=pa.string())
    except errors as exc:
        raise MetricsError(f"the {what} column {col!r} cannot be read as text ({exc})",
                           fix="give plain text or integer values") from None


def _insert_extra(cur, what: str, cid: int, table: pa.Table) -> None:
    key, value, _ = _EXTRAS[what]
    incoming = table.append_column("pos", pa.array(np.arange(table.num_rows, dtype=np.int64)))
    view = f"incoming_{what}"
    cur.register(view, incoming)
    try:
        cur.execute(f"INSERT INTO {what} SELECT $id, pos, {key}, {value} FROM {view}", {"id": cid})
    finally:
        cur.unregister(view)


def _findings_to_json(findings) -> str:
    items = [dataclasses.asdict(f) if dataclasses.is_dataclass(f) else dict(f) for f in findings or []]
    return json.dumps(items, default=_json_value)


def _json_value(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, tuple, np.ndarray)):
        return list(value)
    return str(value)


def _findings_from_json(text: str) -> list:
    known = {f.name for f in dataclasses.fields(io.Finding)}
    return [io.Finding(**{k: v for k, v in item.items() if k in known}) for item in json.loads(text or "[]")]


def _now() -> datetime:
    """Now in UTC, naive (DuckDB TIMESTAMP); :func:`_utc` marks it UTC again on the way out."""
    return datetime.now(timezone.utc).replace(tzinfo=None)


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=timezone.utc) if value.tzinfo is None else value.astimezone(timezone.utc)


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
