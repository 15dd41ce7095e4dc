"""One task file: its locks, transactions, creation and reads (:class:`Task`).

Every operation is one transaction. DuckDB lets one process hold a file at a time, so a process
keeps a task file open only between its transactions until it is idle or another process asks
for it (:mod:`~metrics.tasks.opened`): a command (``ndcg-lab task submit``) and a running server
share the file. Transactions take turns: in a process on the per-file lock of
:mod:`metrics.store.connection`, between processes on ``<file>.lock`` (flock), waiting up to
:data:`LOCK_WAIT` seconds before :class:`~metrics.store.WorkspaceLocked`.

The submission path (:mod:`~metrics.tasks.submissions`) and the instructor's changes
(:mod:`~metrics.tasks.instructor`) run their transactions on a :class:`Task`.
"""
from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import numpy as np
import pandas as pd

from .. import io
from ..errors import MetricsError
from ..settings import Settings
from ..store import WorkspaceLocked
from ..store.connection import file_lock, open_error
from . import opened
from .definition import TaskDefinition
from .links import TaskNotFound
from .snapshot import Meta, Snapshot, cached_snapshot, forget_snapshot, keep_snapshot, read_meta, read_snapshot

__all__ = ["Task", "Connection", "one", "migrate", "LOCK_WAIT", "SCHEMA_VERSION", "TEAM_NAME_LIMIT"]

LOCK_WAIT = 20.0          # seconds a command waits for a task file another process holds
SCHEMA_VERSION = 2
TEAM_NAME_LIMIT = 60
Connection = duckdb.DuckDBPyConnection
T = TypeVar("T")

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE topics (qid VARCHAR PRIMARY KEY, text VARCHAR, judged BOOLEAN, public BOOLEAN, pos INTEGER);
CREATE TABLE qrels_versions (version INTEGER PRIMARY KEY, created DOUBLE, digest VARCHAR, file_name VARCHAR,
                             note VARCHAR, raw BLOB);
CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR UNIQUE, label VARCHAR, created DOUBLE, counted BIGINT);
CREATE TABLE submissions (id INTEGER PRIMARY KEY, team INTEGER, label VARCHAR, file_name VARCHAR, digest VARCHAR,
                          lists_digest VARCHAR, size BIGINT, received DOUBLE, raw BLOB, lint VARCHAR,
                          lint_public VARCHAR, final BOOLEAN, removed DOUBLE, removed_reason VARCHAR,
                          method VARCHAR);
CREATE TABLE scores (submission INTEGER, version INTEGER, qid VARCHAR, measure VARCHAR, value DOUBLE);
CREATE TABLE audit (time DOUBLE, action VARCHAR, detail VARCHAR);
"""


# what turns a task file of a schema version into the next one (a file is migrated when a process
# opens it, under the task's locks, in one transaction): a file of an older version stays readable
_MIGRATIONS = {
    1: ("ALTER TABLE submissions ADD COLUMN method VARCHAR",),   # a team's method line per submission
}


def migrate(con: Connection) -> int:
    """Bring the task file open on ``con`` to :data:`SCHEMA_VERSION` (a new, empty file is left
    alone); the version it had."""
    if not con.execute("SELECT 1 FROM information_schema.tables WHERE table_name = 'meta'").fetchone():
        return SCHEMA_VERSION
    row = con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
    found = int(json.loads(row[0])) if row else 1
    if found >= SCHEMA_VERSION:
        return found
    con.execute("BEGIN TRANSACTION")
    try:
        for version in range(found, SCHEMA_VERSION):
            for statement in _MIGRATIONS[version]:
                con.execute(statement)
        con.execute("DELETE FROM meta WHERE key = 'schema'")
        con.execute("INSERT INTO meta VALUES ('schema', ?)", [json.dumps(SCHEMA_VERSION)])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return found


def one(con: Connection, query: str, parameters: Sequence[object] = ()) -> tuple[Any, ...]:
    """The one row ``query`` returns (an aggregate, a row known to exist)."""
    row = con.execute(query, list(parameters)).fetchone()
    if row is None:
        raise MetricsError("the task file lacks a row it should hold", source="task", fix="ask the instructor")
    return row


class Task:
    """One task file. Every method runs one transaction on it (the file kept open between them)."""

    def __init__(self, path: Path, settings: Settings, clock: Callable[[], float], *, create: bool = False) -> None:
        self.path = Path(path)
        self.id = self.path.stem
        self.settings = settings
        self.clock = clock
        self._open_as = self.path.resolve()  # one key per file, however the home is spelled
        self._lock = file_lock(str(self._open_as))
        self._create = create

    # -- connection --------------------------------------------------------------------

    def _connect(self, deadline: float) -> duckdb.DuckDBPyConnection:
        pause = 0.005
        while True:
            if not self._create and not self.path.exists():
                raise TaskNotFound("this task's file is gone", fix="ask the instructor")
            try:
                try:
                    con = duckdb.connect(str(self.path))
                except duckdb.Error as exc:
                    raise open_error(exc, str(self.path)) from None
                try:
                    migrate(con)
                except BaseException:
                    con.close()
                    raise
                return con
            except WorkspaceLocked:  # a process that does not take the lock file (an old version)
                if time.monotonic() > deadline:
                    raise WorkspaceLocked("the task is busy in another process", source="task",
                                          fix="try again in a moment") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    @contextmanager
    def transaction(self, write: bool = False) -> Iterator[Connection]:
        """One transaction on the task file, kept open between transactions (:mod:`.opened`). Every
        transaction on the file takes this process's per-file lock, then holds the lock file (other
        processes): short, and one at a time. A ``write`` transaction marks the file changed
        (:meth:`_changed`) after its commit. A write-write conflict is raised as
        duckdb.TransactionException for the caller to retry."""
        deadline = time.monotonic() + LOCK_WAIT
        with self._lock:
            held = opened.acquire(self._open_as, self._lock, deadline, self._connect)
            broken = False
            try:
                con = held.con.cursor()
                try:
                    con.execute("BEGIN TRANSACTION")
                    try:
                        yield con
                    except BaseException as exc:
                        broken = isinstance(exc, duckdb.Error)
                        con.execute("ROLLBACK")
                        raise
                    con.execute("COMMIT")
                    if write:
                        self._changed()
                finally:
                    con.close()
            except duckdb.Error:
                broken = True
                raise
            finally:
                opened.done(held)
                if broken:  # a connection DuckDB failed on is not reused
                    opened.close(held.path)

    def write(self, action: Callable[[Connection], T]) -> T:
        """Run ``action(con)`` in a write transaction, again on a conflict (20 tries in all)."""
        attempt = 0
        while True:
            try:
                with self.transaction(write=True) as con:
                    return action(con)
            except duckdb.TransactionException:
                attempt += 1
                if attempt == 20:
                    raise MetricsError("the task is busy", fix="try again in a moment") from None
                time.sleep(0.01 * attempt)

    def _changed(self) -> None:
        """Write a new generation to ``<file>.gen`` (under the locks, after the commit): a reader
        whose cached snapshot has another generation reads the file again."""
        gen = Path(f"{self.path}.gen")
        temporary = gen.with_name(f"{gen.name}.{secrets.token_hex(4)}")
        temporary.write_text(secrets.token_hex(16))
        temporary.replace(gen)

    def _generation(self) -> str | None:
        try:
            return Path(f"{self.path}.gen").read_text()
        except FileNotFoundError:
            return None

    def remove_files(self) -> None:
        with self._lock:
            opened.close(str(self._open_as))
        forget_snapshot(str(self.path))
        for extra in (self.path, Path(f"{self.path}.wal"), Path(f"{self.path}.lock"), Path(f"{self.path}.gen")):
            try:
                extra.unlink()
            except FileNotFoundError:
                pass

    # -- creation ----------------------------------------------------------------------

    def initialise(self, definition: TaskDefinition, topics: pd.DataFrame, judged: set[str], public: set[str],
                   raw_qrels: bytes, qrels_name: str, parsed: io.Qrels, now: float) -> None:
        def action(con: Connection) -> None:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                con.execute(statement)
            state = {"schema": SCHEMA_VERSION, "definition": definition.to_json(), "created": now,
                     "closes": definition.closes, "opens": definition.opens, "released": None,
                     "released_qrels": False, "qrels_version": 1, "dev_qrels": definition.dev_qrels,
                     "anonymous": definition.anonymous}
            con.executemany("INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in state.items()])
            frame = pd.DataFrame({"qid": topics["qid"].astype(str), "text": topics["text"].astype(str)})
            frame["judged"] = frame["qid"].isin(judged)
            frame["public"] = frame["qid"].isin(public)
            frame["pos"] = np.arange(len(frame), dtype=np.int32)
            con.register("new_topics", frame)
            con.execute("INSERT INTO topics SELECT qid, text, judged, public, pos FROM new_topics")
            con.unregister("new_topics")
            con.execute("INSERT INTO qrels_versions VALUES (1, ?, ?, ?, ?, ?)",
                        [now, parsed.digest, qrels_name, "initial", raw_qrels])
            con.execute("INSERT INTO audit VALUES (?, 'create', ?)", [now, definition.title])

        self.write(action)
        self._create = False

    # -- reading -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Everything but the stored files, as of one transaction; kept in memory while the
        file's generation is unchanged (``now`` is always the clock's)."""
        generation = self._generation()
        cached = cached_snapshot(str(self.path), generation, self.clock())
        if cached is not None:
            return cached
        with self.transaction() as con:
            snap = read_snapshot(con, self.id, self.clock())
        keep_snapshot(str(self.path), generation, snap)
        return snap

    def meta(self) -> Meta:
        with self.transaction() as con:
            return read_meta(con)

    def raw_qrels(self, version: int | None = None) -> tuple[bytes, str]:
        with self.transaction() as con:
            if version is None:
                version = int(json.loads(one(con, "SELECT value FROM meta WHERE key = 'qrels_version'")[0]))
            row = one(con, "SELECT raw, file_name FROM qrels_versions WHERE version = ?", [version])
        return bytes(row[0]), str(row[1])

    def raw_runs(self, ids: Sequence[int] | None = None) -> dict[int, bytes]:
        with self.transaction() as con:
            rows = con.execute("SELECT id, raw FROM submissions" + ("" if ids is None else
                               f" WHERE id IN ({', '.join(str(int(i)) for i in ids) or 'NULL'})")).fetchall()
        return {int(i): bytes(raw) for i, raw in rows}

    # -- teams -------------------------------------------------------------------------

    def add_team(self, name: str, now: float) -> int:
        clean = " ".join(str(name).split())
        if not clean:
            raise MetricsError("the team needs a name", fix="give --team NAME")
        if len(clean) > TEAM_NAME_LIMIT:
            raise MetricsError(f"the team name is longer than {TEAM_NAME_LIMIT} characters", fix="shorten it")

        def action(con: Connection) -> int:
            if con.execute("SELECT 1 FROM teams WHERE lower(name) = lower(?)", [clean]).fetchone():
                raise MetricsError(f"a team named {clean!r} has joined already", fix="choose another name")
            team_id = int(one(con, "SELECT coalesce(max(id), 0) + 1 FROM teams")[0])
            con.execute("INSERT INTO teams VALUES (?, ?, ?, ?, 0)", [team_id, clean, f"Team {team_id}", now])
            con.execute("INSERT INTO audit VALUES (?, 'join', ?)", [now, clean])
            return team_id

        return self.write(action)
