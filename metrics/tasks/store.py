"""Class tasks on disk: one DuckDB file per task, a registry of link tokens, the submission path.

Layout under ``$NDCG_LAB_HOME/tasks/``: ``<id>.duckdb`` per task (random id, unrelated to any
token) and ``registry.sqlite3`` (SQLite, as the workspaces' registry: the app and a command
may open it at once) with sha256(token) -> (task, role, team). No token is stored, and no file
name holds one. Roles: ``instructor``, ``join`` (a class joins with it), ``projector`` (the
board, read-only) and ``team`` (one per team). The join and projector tokens are
HMAC-SHA256(instructor token, role) cut to 192 bits, so the instructor's page can show them
again at any visit; a team token is 192 random bits.

Bounds, as for workspaces: a task not opened for ``NDCG_LAB_TTL`` is removed (:meth:`Tasks.sweep`,
run by :meth:`Tasks.create` at most hourly), and the runs a task stores may not exceed
``NDCG_LAB_QUOTA_BYTES`` (a submission past it is refused). One run file may not exceed the
task's ``max_bytes``, else ``NDCG_LAB_UPLOAD_BYTES``.

Every operation opens the task file, runs one transaction and closes it, so that a command
(``ndcg-lab task submit``) and a running server share the file: DuckDB lets one process hold
a file at a time. Transactions take turns: in a process on the per-file lock of
:mod:`metrics.store.connection`, between processes on ``<file>.lock`` (flock), waiting up to
:data:`LOCK_WAIT` seconds before :class:`~metrics.store.WorkspaceLocked`.

The cap is one transaction: under that lock, one DuckDB transaction counts the team's
submissions of the UTC day and in all, refuses or inserts, and bumps the team's row (a
concurrent transaction on the same row would conflict and be retried, so no two can take
the last slot). A run is parsed and scored before that transaction, from the stored qrels;
a refused or malformed one writes nothing, so it does not count.
"""
from __future__ import annotations

import base64
import fcntl
import hashlib
import hmac
import io as stdlib_io
import json
import re
import secrets
import sqlite3
import threading
import time
import zipfile
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .. import io
from .. import settings as settings_module
from ..errors import MetricsError
from ..evaluate import score_runs
from ..io import validate as io_validate
from ..io.keys import canonical_digest
from ..io.sources import stem
from ..io.topics import query_text, read_topics
from ..lint import lint as lint_run
from ..report.text import human_bytes
from ..settings import Settings
from ..store import Workspace, WorkspaceLocked
from ..store.connection import file_lock, open_error
from ..store.workspaces import TOKEN_BYTES, _hash
from .definition import TaskDefinition, day_start, iso, public_split

__all__ = ["Tasks", "TaskAccess", "Task", "Snapshot", "TaskNotFound", "SubmissionRefused", "Links", "ROLES",
           "token_of", "lists_digest"]

ROLES = ("instructor", "join", "projector", "team")
SWEEP_EVERY = 3600.0      # create() removes idle tasks at most this often
LOCK_WAIT = 20.0          # seconds a command waits for a task file another process holds
PAGE = "task"             # the page's address: <public url>task?task=TOKEN
PARAM = "task"
_TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")
SCHEMA_VERSION = 1
TEAM_NAME_LIMIT = 60
LABEL_LIMIT = 80

_REGISTRY = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, created REAL NOT NULL, last_access REAL NOT NULL, removed REAL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY, task TEXT NOT NULL, role TEXT NOT NULL, team INTEGER);
"""

_SCHEMA = """
CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
CREATE TABLE topics (qid VARCHAR PRIMARY KEY, text VARCHAR, judged BOOLEAN, public BOOLEAN, pos INTEGER);
CREATE TABLE qrels_versions (version INTEGER PRIMARY KEY, created DOUBLE, digest VARCHAR, file_name VARCHAR,
                             note VARCHAR, raw BLOB);
CREATE TABLE teams (id INTEGER PRIMARY KEY, name VARCHAR UNIQUE, label VARCHAR, created DOUBLE, counted BIGINT);
CREATE TABLE submissions (id INTEGER PRIMARY KEY, team INTEGER, label VARCHAR, file_name VARCHAR, digest VARCHAR,
                          lists_digest VARCHAR, size BIGINT, received DOUBLE, raw BLOB, lint VARCHAR,
                          lint_public VARCHAR, final BOOLEAN, removed DOUBLE, removed_reason VARCHAR);
CREATE TABLE scores (submission INTEGER, version INTEGER, qid VARCHAR, measure VARCHAR, value DOUBLE);
CREATE TABLE audit (time DOUBLE, action VARCHAR, detail VARCHAR);
"""


class TaskNotFound(MetricsError):
    """No task has this link (mistyped, forged, removed)."""


class SubmissionRefused(MetricsError):
    """A submission not stored: ``reason`` says why, ``next_allowed`` when the next one may come
    (seconds, UTC; None: no more submissions)."""

    def __init__(self, reason: str, *, next_allowed: float | None, now: float, source: str | None = None,
                 line: int | None = None, fix: str | None = None) -> None:
        self.reason = reason
        self.next_allowed = next_allowed
        when = ("the next one is allowed now" if next_allowed is not None and next_allowed <= now
                else f"the next one is allowed at {iso(next_allowed)}" if next_allowed is not None
                else "no further submission is allowed")
        super().__init__(f"submission refused: {reason}", source=source, line=line,
                         fix=f"{fix + '; ' if fix else ''}{when}")


@dataclass(frozen=True)
class Links:
    """The addresses of a task: ``instructor``, ``join``, ``projector`` (and their tokens)."""

    instructor: str
    join: str
    projector: str
    tokens: dict


def token_of(link: str) -> str:
    """The token of a task link (``...?task=TOKEN``) or a bare token."""
    text = str(link).strip()
    match = re.search(r"[?&]" + PARAM + r"=([A-Za-z0-9_-]+)", text)
    token = match.group(1) if match else text
    if not _TOKEN.fullmatch(token):
        raise TaskNotFound("no task has this link", fix="copy the whole link the instructor gave")
    return token


def _derived(token: str, role: str) -> str:
    """The join or projector token of an instructor token: HMAC-SHA256(token, role), 192 bits."""
    digest = hmac.new(token.encode(), f"ndcg-lab task {role}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:TOKEN_BYTES]).decode()


class Tasks:
    """The class tasks of one ``NDCG_LAB_HOME``: create, open a link, join, sweep idle tasks."""

    def __init__(self, config: Settings | None = None, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings_module.load() if config is None else config
        self.clock = clock
        self.folder = Path(self.settings.home) / "tasks"
        self.registry = Registry(self.folder / "registry.sqlite3", _REGISTRY)
        self._last_sweep = float("-inf")
        self._touched: dict[str, float] = {}

    # -- links -------------------------------------------------------------------------

    def link(self, token: str) -> str:
        return f"{self.settings.public_url}{PAGE}?{PARAM}={token}"

    def may_create(self, key: str | None) -> bool:
        """Whether ``key`` lets this visitor create a task (``NDCG_LAB_TASKS``)."""
        if self.settings.tasks == "anyone":
            return True
        wanted = self.settings.instructor_key
        return bool(wanted and key and hmac.compare_digest(str(key).encode(), wanted.encode()))

    # -- create, open, join ------------------------------------------------------------

    def create(self, definition: TaskDefinition, *, topics, qrels, baselines: Sequence = (),
               key: str | None = None, qrels_name: str = "qrels") -> Links:
        """A new task: ``topics`` (anything :func:`metrics.io.topics.read_topics` reads), ``qrels``
        (bytes or a path: kept unchanged, hidden), ``baselines`` (runs, or (name, run) pairs).
        Returns its three links; only their hashes are kept."""
        if not self.may_create(key):
            raise MetricsError("creating a class task needs the instructor key here",
                               source="NDCG_LAB_TASKS",
                               fix="give the key the operator set in NDCG_LAB_INSTRUCTOR_KEY")
        definition = definition.checked()
        raw_qrels = _raw(qrels)
        parsed = io.read_qrels(raw_qrels, source=qrels_name)
        topic_frame = query_text(read_topics(topics))
        judged = sorted(set(parsed.table["qid"].to_pylist()))
        public = public_split(judged, definition)
        known = set(map(str, topic_frame["qid"]))
        missing = [q for q in judged if q not in known]
        if missing:
            raise MetricsError(f"{len(missing)} judged topic(s) are not in the topics: "
                               f"{', '.join(map(repr, missing[:5]))}",
                               fix="give the topics of every query the qrels judge")
        token, task_id = secrets.token_urlsafe(TOKEN_BYTES), secrets.token_hex(16)
        now = self.clock()
        if now - self._last_sweep > SWEEP_EVERY:
            self._last_sweep = now
            self.sweep(now)
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        task = Task(self.folder / f"{task_id}.duckdb", self, create=True)
        try:
            task.initialise(definition, topic_frame, set(judged), public, raw_qrels, qrels_name, parsed, now)
            for item in baselines:
                name, run = item if isinstance(item, tuple) else (None, item)
                task.add_baseline(run, name)
            with self._write_registry() as db:
                db.execute("INSERT INTO tasks VALUES (?, ?, ?, NULL)", [task_id, now, now])
                db.executemany("INSERT INTO tokens VALUES (?, ?, ?, NULL)",
                               [(_hash(token), task_id, "instructor"),
                                (_hash(_derived(token, "join")), task_id, "join"),
                                (_hash(_derived(token, "projector")), task_id, "projector")])
        except BaseException:
            task.remove_files()
            raise
        return self.links(token)

    def links(self, instructor_token: str) -> Links:
        tokens = {"instructor": instructor_token, "join": _derived(instructor_token, "join"),
                  "projector": _derived(instructor_token, "projector")}
        return Links(*(self.link(tokens[r]) for r in ("instructor", "join", "projector")), tokens)

    def open(self, link: str) -> TaskAccess:
        """The task and role of a link; TaskNotFound for a link no task has."""
        token = token_of(link)
        row = self._query("SELECT k.task, k.role, k.team, t.removed FROM tokens k JOIN tasks t ON t.id = k.task "
                          "WHERE k.hash = ?", [_hash(token)])
        if row is None or row[3] is not None:
            raise TaskNotFound("no task has this link" if row is None else "this task was removed",
                               fix="check that the link was copied whole, or ask the instructor")
        task_id, role, team, _ = row
        path = self.folder / f"{task_id}.duckdb"
        if not path.exists():
            raise TaskNotFound("this task's file is gone", fix="ask the instructor")
        self._touch(task_id)
        return TaskAccess(Task(path, self), role, team, token, self)

    def join(self, link: str, team: str) -> str:
        """A new team of the task of a join link; returns the team's link."""
        access = self.open(link)
        if access.role != "join":
            raise MetricsError("this is not a join link", fix="use the join link the instructor gave the class")
        team_id = access.task.add_team(team, self.clock())
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._write_registry() as db:
            db.execute("INSERT INTO tokens VALUES (?, ?, 'team', ?)", [_hash(token), access.task.id, team_id])
        return self.link(token)

    def delete(self, access: TaskAccess) -> None:
        """Remove a task (instructor only): its file and every link."""
        access.require("instructor")
        with self._write_registry() as db:
            db.execute("UPDATE tasks SET removed = ? WHERE id = ?", [self.clock(), access.task.id])
            db.execute("DELETE FROM tokens WHERE task = ?", [access.task.id])
        access.task.remove_files()

    def sweep(self, now: float | None = None) -> list[str]:
        """Remove the tasks idle (no link opened) longer than the TTL; the ids removed."""
        now = self.clock() if now is None else now
        if self.settings.ttl is None:
            return []
        rows = self._query_all("SELECT id FROM tasks WHERE removed IS NULL AND last_access < ?",
                               [now - self.settings.ttl])
        for (task_id,) in rows:
            with self._write_registry() as db:
                db.execute("UPDATE tasks SET removed = ? WHERE id = ?", [now, task_id])
                db.execute("DELETE FROM tokens WHERE task = ?", [task_id])
            Task(self.folder / f"{task_id}.duckdb", self).remove_files()
        return [r[0] for r in rows]

    def close(self) -> None:
        self.registry.close()

    # -- registry ----------------------------------------------------------------------

    def _touch(self, task_id: str) -> None:
        """Record the last access (what the TTL counts), at most once a minute per task."""
        now = self.clock()
        if now - self._touched.get(task_id, float("-inf")) < 60:
            return
        self._touched[task_id] = now
        with self._write_registry() as db:
            db.execute("UPDATE tasks SET last_access = ? WHERE id = ? AND last_access < ?", [now, task_id, now - 60])

    def _query(self, sql, params):
        rows = self.registry.rows(sql, params)
        return rows[0] if rows else None

    def _query_all(self, sql, params):
        return self.registry.rows(sql, params)

    def _write_registry(self):
        return self.registry.write()


class Registry:
    """A SQLite file that the app and commands read and write at once (WAL journal; a write is
    one ``BEGIN IMMEDIATE`` transaction, so writers of other processes wait), opened on first use."""

    def __init__(self, path: Path, schema: str) -> None:
        self.path, self.schema = Path(path), schema
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            self._db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(self.schema)
        return self._db

    def rows(self, sql: str, params) -> list[tuple]:
        with self._lock:
            return self._connect().execute(sql, params).fetchall()

    @contextmanager
    def write(self):
        with self._lock:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _raw(src) -> bytes:
    """The bytes of a file given as bytes, a path or a file object (stored unchanged)."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src)
    if hasattr(src, "getvalue"):
        return bytes(src.getvalue())
    if hasattr(src, "read"):
        return bytes(src.read())
    path = Path(src).expanduser()
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MetricsError(f"cannot read {str(path)!r} ({exc.strerror or exc})", source=path.name,
                           fix="check the path") from None


def _findings(findings) -> str:
    return json.dumps([{"kind": f.kind, "message": f.message, "count": f.count, "examples": list(f.examples),
                        "value": f.value} for f in findings])


def lists_digest(run: io.Run) -> str:
    """sha256 of a run's ranked lists (query ids and document ids in trec_eval order: score
    descending, docno descending), whatever its tag, scores or file layout."""
    table = run.table.select(["qid", "docno", "score"])
    order = pc.sort_indices(table, sort_keys=[("qid", "ascending"), ("score", "descending"),
                                              ("docno", "descending")])
    return canonical_digest(table.take(order).select(["qid", "docno"]), io_validate.RUN)


class Task:
    """One task file. Every method opens the file, runs one transaction and closes it."""

    def __init__(self, path: Path, tasks: Tasks, *, create: bool = False) -> None:
        self.path = Path(path)
        self.id = self.path.stem
        self.tasks = tasks
        self._lock = file_lock(str(self.path.resolve()))
        self._create = create

    # -- connection --------------------------------------------------------------------

    def _connect(self, deadline: float) -> duckdb.DuckDBPyConnection:
        pause = 0.005
        while True:
            if not self._create and not self.path.exists():
                raise TaskNotFound("this task's file is gone", fix="ask the instructor")
            try:
                try:
                    return duckdb.connect(str(self.path))
                except duckdb.Error as exc:
                    raise open_error(exc, str(self.path)) from None
            except WorkspaceLocked:  # a process that does not take the lock file (an old version)
                if time.monotonic() > deadline:
                    raise WorkspaceLocked("the task is busy in another process", source="task",
                                          fix="try again in a moment") from None
                time.sleep(pause)
                pause = min(pause * 2, 0.1)

    @contextmanager
    def _process_lock(self, deadline: float):
        """``<file>.lock``, locked with flock: the processes on one task file take turns (DuckDB
        lets one process hold the file; waiting here costs a poll, not a failed open)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(f"{self.path}.lock", "a+b") as handle:
            pause = 0.001
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise WorkspaceLocked("the task is busy in another process", source="task",
                                              fix="try again in a moment") from None
                    time.sleep(pause)
                    pause = min(pause * 2, 0.02)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    @contextmanager
    def _transaction(self, write: bool = False):
        """One transaction on a fresh connection, closed after. Every transaction on the file takes
        this process's per-file lock, then the lock file (other processes): short, and one at a time.
        A ``write`` transaction marks the file changed (:meth:`_changed`) after its commit. A
        write-write conflict is raised as duckdb.TransactionException for the caller to retry."""
        deadline = time.monotonic() + LOCK_WAIT
        with self._lock, self._process_lock(deadline):
            con = self._connect(deadline)
            try:
                con.execute("BEGIN TRANSACTION")
                try:
                    yield con
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
                if write:
                    self._changed()
            finally:
                con.close()

    def _write(self, action: Callable):
        """Run ``action(con)`` in a write transaction, again on a conflict (a few times)."""
        for attempt in range(20):
            try:
                with self._transaction(write=True) as con:
                    return action(con)
            except duckdb.TransactionException:
                if attempt == 19:
                    raise MetricsError("the task is busy", fix="try again in a moment") from None
                time.sleep(0.01 * (attempt + 1))

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
        _SNAPSHOTS.pop(str(self.path), None)
        for extra in (self.path, Path(f"{self.path}.wal"), Path(f"{self.path}.lock"), Path(f"{self.path}.gen")):
            try:
                extra.unlink()
            except FileNotFoundError:
                pass

    # -- creation ----------------------------------------------------------------------

    def initialise(self, definition, topics: pd.DataFrame, judged: set, public: set, raw_qrels: bytes,
                   qrels_name: str, parsed: io.Qrels, now: float) -> None:
        def action(con):
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

        self._write(action)
        self._create = False

    # -- reading -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Everything but the stored files, as of one transaction; kept in memory while the
        file's generation is unchanged (``now`` is always the clock's)."""
        generation = self._generation()
        cached = _SNAPSHOTS.get(str(self.path))
        if cached is not None and generation is not None and cached[0] == generation:
            return replace(cached[1], now=self.tasks.clock())
        with self._transaction() as con:
            meta = {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta").fetchall()}
            topics = con.execute("SELECT qid, text, judged, public FROM topics ORDER BY pos").df()
            teams = con.execute("SELECT id, name, label, created FROM teams ORDER BY id").df()
            subs = con.execute("SELECT id, team, label, file_name, digest, lists_digest, size, received, lint, "
                               "lint_public, final, removed, removed_reason FROM submissions ORDER BY id").df()
            version = int(meta["qrels_version"])
            scores = con.execute("SELECT s.submission, s.qid, s.measure, s.value FROM scores s "
                                 "JOIN submissions b ON b.id = s.submission "
                                 "WHERE s.version = ? AND b.removed IS NULL", [version]).df()
            versions = con.execute("SELECT version, created, digest, file_name, note FROM qrels_versions "
                                   "ORDER BY version").df()
            audit = con.execute("SELECT time, action, detail FROM audit ORDER BY time").df()
        subs["team"] = subs["team"].astype("float64")
        subs["removed"] = subs["removed"].astype("float64")
        subs["final"] = subs["final"].fillna(False).astype(bool)
        definition = TaskDefinition.from_json(meta["definition"])
        definition = replace(definition, closes=meta["closes"], opens=meta["opens"],
                             dev_qrels=bool(meta["dev_qrels"]), anonymous=bool(meta["anonymous"]))
        snap = Snapshot(self.id, definition, meta, topics, teams, subs, scores, versions, audit, self.tasks.clock())
        if generation is not None:
            with _SNAPSHOTS_LOCK:
                _SNAPSHOTS[str(self.path)] = (generation, snap)
                while len(_SNAPSHOTS) > SNAPSHOTS_KEPT:
                    _SNAPSHOTS.pop(next(iter(_SNAPSHOTS)))
        return snap

    def raw_qrels(self, version: int | None = None) -> tuple[bytes, str]:
        with self._transaction() as con:
            if version is None:
                version = int(json.loads(con.execute("SELECT value FROM meta WHERE key = 'qrels_version'")
                                         .fetchone()[0]))
            row = con.execute("SELECT raw, file_name FROM qrels_versions WHERE version = ?", [version]).fetchone()
        return bytes(row[0]), row[1]

    def raw_runs(self, ids: Sequence[int] | None = None) -> dict[int, bytes]:
        with self._transaction() as con:
            rows = con.execute("SELECT id, raw FROM submissions" + ("" if ids is None else
                               f" WHERE id IN ({', '.join(str(int(i)) for i in ids) or 'NULL'})")).fetchall()
        return {int(i): bytes(raw) for i, raw in rows}

    # -- teams and baselines -----------------------------------------------------------

    def add_team(self, name: str, now: float) -> int:
        clean = " ".join(str(name).split())
        if not clean:
            raise MetricsError("the team needs a name", fix="give --team NAME")
        if len(clean) > TEAM_NAME_LIMIT:
            raise MetricsError(f"the team name is longer than {TEAM_NAME_LIMIT} characters", fix="shorten it")

        def action(con):
            if con.execute("SELECT 1 FROM teams WHERE lower(name) = lower(?)", [clean]).fetchone():
                raise MetricsError(f"a team named {clean!r} has joined already", fix="choose another name")
            team_id = con.execute("SELECT coalesce(max(id), 0) + 1 FROM teams").fetchone()[0]
            con.execute("INSERT INTO teams VALUES (?, ?, ?, ?, 0)", [team_id, clean, f"Team {team_id}", now])
            con.execute("INSERT INTO audit VALUES (?, 'join', ?)", [now, clean])
            return int(team_id)

        return self._write(action)

    def add_baseline(self, run, name: str | None = None) -> int:
        raw = _raw(run)
        label = name or (stem(Path(run).name) if isinstance(run, (str, Path)) else "baseline")
        return self._store(None, raw, label, label, self.tasks.clock(), check=None)

    # -- submitting --------------------------------------------------------------------

    def submit(self, team: int, data, label: str | None = None, file_name: str = "run.txt") -> int:
        """Check, score and store one run of ``team``; its id. SubmissionRefused says why not."""
        now = self.tasks.clock()
        raw = _raw(data)
        with self._transaction() as con:
            context = self._context(con)
            meta = context[0]
            definition = TaskDefinition.from_json(meta["definition"])
            refusal = _allowance_refusal(con, team, now, meta, definition)  # before parsing and scoring
        limit = definition.max_bytes or self.tasks.settings.upload_bytes
        if len(raw) > limit:
            raise SubmissionRefused(f"the file is {human_bytes(len(raw))}, over the bound of {human_bytes(limit)}",
                                    next_allowed=now, now=now, source=file_name, fix="submit a smaller run")
        if refusal is not None:
            raise refusal
        label = " ".join(str(label or stem(file_name)).split())[:LABEL_LIMIT] or "run"

        def check(con, at):
            return _allowance_refusal(con, team, at, snap_meta_now(con), definition)

        return self._store(team, raw, label, file_name, now, check=check, context=context)

    def _meta(self) -> dict:
        with self._transaction() as con:
            return snap_meta_now(con)

    @staticmethod
    def _context(con) -> tuple:
        """What scoring a run needs: the meta, the topics (qid, public) and the current qrels."""
        meta = snap_meta_now(con)
        topics = con.execute("SELECT qid, public FROM topics").fetchall()
        raw_qrels, qrels_name = con.execute("SELECT raw, file_name FROM qrels_versions WHERE version = ?",
                                            [int(meta["qrels_version"])]).fetchone()
        return meta, topics, bytes(raw_qrels), qrels_name

    def _store(self, team: int | None, raw: bytes, label: str, file_name: str, now: float, check,
               context: tuple | None = None) -> int:
        try:
            run = io.read_run(raw, name=label, source=file_name)
        except MetricsError as exc:
            if team is None:
                raise
            raise SubmissionRefused(f"the file is not a valid run ({exc.problem})", next_allowed=now, now=now,
                                    source=exc.source, line=exc.line, fix=exc.fix) from None
        if context is None:
            with self._transaction() as con:
                context = self._context(con)
        meta, topics, raw_qrels, qrels_name = context
        _check_topics(run, {q for q, _ in topics}, file_name, now, refuse=team is not None)
        definition = TaskDefinition.from_json(meta["definition"])
        qrels = io.read_qrels(raw_qrels, source=qrels_name)
        public = {q for q, p in topics if p}
        scores = _score(qrels, run, definition.measures)
        lint_all = _findings(lint_run(qrels, run))
        # a team's lint: the run's own findings, and those against the public topics' judgments
        # (shown only while the public judgments are open to teams)
        lint_public = json.dumps({"own": json.loads(_findings(run.findings)),
                                  "public": json.loads(_findings(lint_run(_subset(qrels, public), run)))})
        lists = lists_digest(run)
        version = int(meta["qrels_version"])

        def action(con):
            if check is not None:
                refusal = check(con, now)
                if refusal is not None:
                    raise refusal
                quota = self.tasks.settings.quota_bytes
                if quota is not None:
                    used = int(con.execute("SELECT coalesce(sum(size), 0) FROM submissions").fetchone()[0])
                    if used + len(raw) > quota:
                        raise SubmissionRefused(f"the task holds {human_bytes(used)} of runs and may hold "
                                                f"{human_bytes(quota)} (NDCG_LAB_QUOTA_BYTES)", next_allowed=None,
                                                now=now, fix="ask the instructor")
                con.execute("UPDATE teams SET counted = counted + 1 WHERE id = ?", [team])
            if int(json.loads(con.execute("SELECT value FROM meta WHERE key = 'qrels_version'").fetchone()[0])) \
                    != version:
                raise _Stale()
            sid = int(con.execute("SELECT coalesce(max(id), 0) + 1 FROM submissions").fetchone()[0])
            con.execute("INSERT INTO submissions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, false, NULL, NULL)",
                        [sid, team, label, file_name, run.digest, lists, len(raw), now, raw, lint_all, lint_public])
            frame = scores.assign(submission=sid, version=version)
            con.register("new_scores", frame)
            con.execute("INSERT INTO scores SELECT submission, version, qid, measure, value FROM new_scores")
            con.unregister("new_scores")
            return sid

        try:
            return self._write(action)
        except _Stale:  # the qrels were replaced while this run was scored: score it again
            return self._store(team, raw, label, file_name, now, check)  # context read anew

    # -- instructor's changes ----------------------------------------------------------

    def set_meta(self, action_name: str, detail: str, **values) -> None:
        now = self.tasks.clock()

        def action(con):
            for key, value in values.items():
                con.execute("UPDATE meta SET value = ? WHERE key = ?", [json.dumps(value), key])
            con.execute("INSERT INTO audit VALUES (?, ?, ?)", [now, action_name, detail])

        self._write(action)

    def remove_submission(self, sid: int, reason: str) -> None:
        reason = " ".join(str(reason).split())
        if not reason:
            raise MetricsError("removing a submission needs a reason", fix="say why, for the audit list")
        now = self.tasks.clock()

        def action(con):
            row = con.execute("SELECT team, label FROM submissions WHERE id = ? AND removed IS NULL",
                              [int(sid)]).fetchone()
            if row is None:
                raise MetricsError(f"no submission {sid} to remove", fix="pick one from the list")
            con.execute("UPDATE submissions SET removed = ?, removed_reason = ? WHERE id = ?", [now, reason, int(sid)])
            con.execute("INSERT INTO audit VALUES (?, 'remove', ?)", [now, f"submission {sid} ({row[1]}): {reason}"])

        self._write(action)

    def choose_finals(self, team: int, ids: Sequence[int], limit: int) -> None:
        ids = [int(i) for i in dict.fromkeys(ids)]
        if len(ids) > limit:
            raise MetricsError(f"a team may choose at most {limit} final submission(s)", fix="choose fewer")

        def action(con):
            own = {int(r[0]) for r in con.execute("SELECT id FROM submissions WHERE team = ? AND removed IS NULL",
                                                   [team]).fetchall()}
            if not set(ids) <= own:
                raise MetricsError("a final submission must be one of the team's own", fix="pick from the list")
            con.execute("UPDATE submissions SET final = list_contains(?, id) WHERE team = ?", [ids, team])

        self._write(action)

    def replace_qrels(self, qrels, file_name: str, note: str) -> int:
        """A new qrels version (the old ones kept); every submission rescored on it. Its number."""
        raw = _raw(qrels)
        parsed = io.read_qrels(raw, source=file_name)
        meta = self._meta()
        with self._transaction() as con:
            known = {q for (q,) in con.execute("SELECT qid FROM topics").fetchall()}
            subs = con.execute("SELECT id, label, file_name, raw FROM submissions").fetchall()
        judged = set(parsed.table["qid"].to_pylist())
        unknown = sorted(judged - known)
        if unknown:
            raise MetricsError(f"{len(unknown)} judged topic(s) are not topics of the task: "
                               f"{', '.join(map(repr, unknown[:5]))}", source=file_name,
                               fix="judge the task's topics only")
        definition = TaskDefinition.from_json(meta["definition"])
        rescored = [_score(parsed, io.read_run(bytes(r), name=label, source=name), definition.measures)
                    .assign(submission=int(i)) for i, label, name, r in subs]
        now = self.tasks.clock()

        def action(con):
            version = int(con.execute("SELECT max(version) + 1 FROM qrels_versions").fetchone()[0])
            con.execute("INSERT INTO qrels_versions VALUES (?, ?, ?, ?, ?, ?)",
                        [version, now, parsed.digest, file_name, note, raw])
            if rescored:
                frame = pd.concat(rescored, ignore_index=True).assign(version=version)
                con.register("new_scores", frame)
                con.execute("INSERT INTO scores SELECT submission, version, qid, measure, value FROM new_scores")
                con.unregister("new_scores")
            con.execute("UPDATE topics SET judged = list_contains(?, qid)", [sorted(judged)])
            con.execute("UPDATE meta SET value = ? WHERE key = 'qrels_version'", [json.dumps(version)])
            con.execute("INSERT INTO audit VALUES (?, 'qrels', ?)",
                        [now, f"version {version} from {file_name}: {note}".strip()])
            return version

        return self._write(action)


def snap_meta_now(con) -> dict:
    return {k: json.loads(v) for k, v in con.execute("SELECT key, value FROM meta").fetchall()}


def _allowance_refusal(con, team: int, now: float, meta: dict, definition: TaskDefinition):
    """The refusal of a submission of ``team`` at ``now``, or None (counts of this transaction)."""
    opens, closes = meta["opens"], meta["closes"]
    if opens is not None and now < opens:
        return SubmissionRefused(f"the task opens at {iso(opens)}", next_allowed=opens, now=now)
    if now >= closes:
        return SubmissionRefused(f"the task closed at {iso(closes)}", next_allowed=None, now=now)
    total, today = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE received >= ?) FROM submissions "
        "WHERE team = ? AND removed IS NULL", [day_start(now), team]).fetchone()
    if definition.total is not None and total >= definition.total:
        return SubmissionRefused(f"the team has used all {definition.total} submissions", next_allowed=None,
                                 now=now)
    if definition.per_day is not None and today >= definition.per_day:
        tomorrow = day_start(now) + 86400.0
        return SubmissionRefused(f"the team has used its {definition.per_day} submission(s) of today (UTC)",
                                 next_allowed=tomorrow if tomorrow < closes else None, now=now)
    return None


def _check_topics(run: io.Run, topics: set, source: str, now: float, *, refuse: bool) -> None:
    """A run line naming a query that is no topic of the task: a line-numbered error."""
    qids = run.table["qid"]
    bad = pc.invert(pc.is_in(qids, value_set=pa.array(sorted(topics), type=pa.string())))
    if not pc.any(bad).as_py():
        return
    row = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
    line = run.line_of([row])
    qid = qids[row].as_py()
    problem = f"query {qid!r} is not a topic of this task"
    fix = "submit runs of the task's topics only"
    if refuse:
        raise SubmissionRefused(f"the file is not a valid run ({problem})", next_allowed=now, now=now, source=source,
                                line=None if line is None else int(line[0]), fix=fix)
    raise MetricsError(problem, source=source, line=None if line is None else int(line[0]), fix=fix)


def _subset(qrels: io.Qrels, qids: set) -> io.Qrels:
    table = qrels.table.filter(pc.is_in(qrels.table["qid"], value_set=pa.array(sorted(qids), type=pa.string())))
    return io.read_qrels(table, name=qrels.name, source=qrels.source)


def _score(qrels: io.Qrels, run: io.Run, measures) -> pd.DataFrame:
    """Per-query values of every measure on every judged topic (a topic the run lacks scores 0)."""
    [scores] = score_runs(qrels, run, list(measures))
    qids = [str(q) for q in scores.qids]
    return pd.DataFrame({"qid": [q for _ in scores.values for q in qids],
                         "measure": [m for m in scores.values for _ in qids],
                         "value": np.concatenate([np.asarray(v, dtype=np.float64) for v in scores.values.values()])
                         if scores.values else np.array([])})


# The last snapshot of each task file read by this process, with the file's generation
# (oldest first, at most SNAPSHOTS_KEPT).
_SNAPSHOTS: dict[str, tuple[str, Snapshot]] = {}
_SNAPSHOTS_LOCK = threading.Lock()
SNAPSHOTS_KEPT = 64


class _Stale(Exception):
    """The qrels version changed between scoring and storing."""


@dataclass
class Snapshot:
    """A task as one read transaction saw it (no stored file bytes)."""

    id: str
    definition: TaskDefinition
    meta: dict
    topics: pd.DataFrame
    teams: pd.DataFrame
    submissions: pd.DataFrame
    scores: pd.DataFrame
    versions: pd.DataFrame
    audit: pd.DataFrame
    now: float
    _values: dict | None = field(default=None, repr=False)

    @property
    def status(self) -> str:
        if self.meta["released"] is not None:
            return "released"
        if self.now >= self.meta["closes"]:
            return "closed"
        if self.meta["opens"] is not None and self.now < self.meta["opens"]:
            return "not open yet"
        return "open"

    @property
    def public_qids(self) -> list[str]:
        t = self.topics
        return t.loc[t["public"] & t["judged"], "qid"].astype(str).tolist()

    @property
    def hidden_qids(self) -> list[str]:
        t = self.topics
        return t.loc[~t["public"] & t["judged"], "qid"].astype(str).tolist()

    @property
    def judged_qids(self) -> list[str]:
        t = self.topics
        return t.loc[t["judged"], "qid"].astype(str).tolist()

    def values(self) -> dict:
        """{(submission, measure): {qid: value}} of the current qrels version (built once)."""
        if self._values is None:
            s = self.scores
            out: dict = {}
            for sid, measure, qid, value in zip(s["submission"].astype(int), s["measure"].astype(str),
                                                s["qid"].astype(str), s["value"].astype(float)):
                out.setdefault((sid, measure), {})[qid] = value
            self._values = out
        return self._values

    def final_qids(self) -> list[str]:
        return self.hidden_qids if self.definition.final_topics == "hidden" else self.judged_qids

    def qrels_digest(self) -> str:
        v = self.versions
        return str(v.loc[v["version"] == int(self.meta["qrels_version"]), "digest"].iloc[0])


class TaskAccess:
    """A task as one link opens it: ``role`` (instructor, join, projector, team) and, for a team
    link, ``team`` (its id). Every action checks the role first."""

    def __init__(self, task: Task, role: str, team: int | None, token: str, tasks: Tasks) -> None:
        self.task = task
        self.role = role
        self.team = team
        self.token = token
        self.tasks = tasks

    def require(self, *roles: str) -> None:
        if self.role not in roles:
            raise MetricsError(f"a {self.role} link cannot do this", fix=f"use the {' or '.join(roles)} link")

    @property
    def link(self) -> str:
        return self.tasks.link(self.token)

    def links(self) -> Links:
        self.require("instructor")
        return self.tasks.links(self.token)

    def snapshot(self) -> Snapshot:
        return self.task.snapshot()

    def view(self) -> dict:
        """Exactly what this link may see (:func:`metrics.tasks.views.view`)."""
        from . import views

        return views.view(self)

    def submit(self, data, label: str | None = None, file_name: str = "run.txt") -> int:
        self.require("team")
        return self.task.submit(self.team, data, label, file_name)

    def choose_finals(self, ids: Sequence[int]) -> None:
        self.require("team")
        snap = self.task.snapshot()
        if snap.status in ("closed", "released"):
            raise MetricsError("the task is closed: the finals can no longer change", fix="ask the instructor")
        self.task.choose_finals(self.team, ids, snap.definition.finals)

    def close(self) -> None:
        self.require("instructor")
        now = self.tasks.clock()
        self.task.set_meta("close", f"closed at {iso(now)}", closes=now)

    def set_close(self, closes: float) -> None:
        """Extend (or move) the close; a time in the future reopens a closed task (not a released one)."""
        self.require("instructor")
        snap = self.task.snapshot()
        opens = snap.meta["opens"]
        if opens is not None and closes <= opens:
            raise MetricsError("the close must come after the opening", fix="pick a later time")
        values = {"closes": float(closes)}
        if snap.meta["released"] is not None and closes > self.tasks.clock():
            values |= {"released": None, "released_qrels": False}
        self.task.set_meta("close time", f"closes at {iso(closes)}", **values)

    def release(self, *, qrels: bool = False) -> None:
        self.require("instructor")
        snap = self.task.snapshot()
        if snap.status not in ("closed", "released"):
            raise MetricsError("the task is still open", fix="close it first (or wait for the close)")
        self.task.set_meta("release", "with the qrels" if qrels else "standings only",
                           released=self.tasks.clock(), released_qrels=bool(qrels))

    def set_options(self, *, dev_qrels: bool | None = None, anonymous: bool | None = None) -> None:
        self.require("instructor")
        values = {k: bool(v) for k, v in (("dev_qrels", dev_qrels), ("anonymous", anonymous)) if v is not None}
        if values:
            self.task.set_meta("options", ", ".join(f"{k}={v}" for k, v in values.items()), **values)

    def remove_submission(self, sid: int, reason: str) -> None:
        self.require("instructor")
        self.task.remove_submission(sid, reason)

    def replace_qrels(self, qrels, file_name: str = "qrels", note: str = "") -> int:
        self.require("instructor")
        return self.task.replace_qrels(qrels, file_name, note)

    def add_baseline(self, run, name: str | None = None) -> int:
        self.require("instructor")
        return self.task.add_baseline(run, name)

    def standings(self, fmt: str = "csv") -> str:
        """The board this link may see, as csv, tsv, json or latex (stamped)."""
        from . import views

        return views.export_board(self.view(), fmt)

    def archive(self) -> bytes:
        """Every submission as a zip of runs with a manifest (and the task's definition,
        topics and qrels versions): the instructor's export of the task."""
        self.require("instructor")
        snap = self.task.snapshot()
        runs = self.task.raw_runs()
        names = dict(zip(snap.teams["id"].astype(int), snap.teams["name"].astype(str)))
        buffer = stdlib_io.BytesIO()
        manifest = []
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
            for row in snap.submissions.itertuples():
                team = "baseline" if pd.isna(row.team) else names.get(int(row.team), f"team {int(row.team)}")
                path = f"runs/{int(row.id):04d}-{_safe(team)}-{_safe(row.label)}.run"
                zf.writestr(path, runs[int(row.id)])
                manifest.append({"file": path, "submission": int(row.id), "team": team, "label": row.label,
                                 "file_name": row.file_name, "sha256": row.digest, "bytes": int(row.size),
                                 "received": iso(row.received), "final": bool(row.final),
                                 "removed": iso(row.removed) if not pd.isna(row.removed) else None,
                                 "removed_reason": None if pd.isna(row.removed) else row.removed_reason})
            for v in snap.versions.itertuples():
                raw, _ = self.task.raw_qrels(int(v.version))
                zf.writestr(f"qrels/v{int(v.version)}-{_safe(v.file_name)}", raw)
            zf.writestr("topics.tsv", snap.topics[["qid", "text", "public", "judged"]].to_csv(sep="\t", index=False))
            zf.writestr("task.json", json.dumps({"definition": json.loads(snap.definition.to_json()),
                                                 "closes": iso(snap.meta["closes"]),
                                                 "released": iso(snap.meta["released"])}, indent=2))
            zf.writestr("manifest.json", json.dumps(manifest, indent=2))
        return buffer.getvalue()

    def copy_to(self, workspace: Workspace, name: str | None = None) -> str:
        """After a release with the qrels: this team's runs and the released qrels (and the topics)
        as a new collection of ``workspace``; the collection's name."""
        self.require("team")
        snap = self.task.snapshot()
        if snap.meta["released"] is None or not snap.meta["released_qrels"]:
            raise MetricsError("the instructor has not released the qrels yet", fix="wait for the release")
        raw, qrels_name = self.task.raw_qrels()
        mine = snap.submissions[(snap.submissions["team"] == self.team) & snap.submissions["removed"].isna()]
        runs = self.task.raw_runs([int(i) for i in mine["id"]])
        base = " ".join((name or snap.definition.title).split())[:80] or "class task"
        collection, n = base, 1
        while workspace.has_collection(collection):
            n += 1
            collection = f"{base} ({n})"
        topics = snap.topics[["qid", "text"]].astype(str)
        workspace.create_collection(collection, io.read_qrels(raw, source=qrels_name), topics=topics)
        for row in mine.itertuples():
            workspace.add_run(collection, io.read_run(runs[int(row.id)], name=row.label, source=row.file_name),
                              row.label)
        return collection

    def delete(self) -> None:
        self.tasks.delete(self)


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("_")[:60] or "x"

