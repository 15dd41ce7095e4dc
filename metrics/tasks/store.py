"""Class tasks on disk: one DuckDB file per task, a registry of link tokens, the submission path.

Layout under ``$NDCG_LAB_HOME/tasks/``: ``<id>.duckdb`` per task (random id, unrelated to any
token) and ``registry.sqlite3`` (:class:`metrics.store.Registry`, as the workspaces': the app and
a command may open it at once) with sha256(token) -> (task, role, team). No token is stored, and
no file name holds one. The roles and the tokens: :mod:`metrics.tasks.links`.

Bounds, as for workspaces: a task not opened for ``NDCG_LAB_TTL`` is removed (:meth:`Tasks.sweep`,
run by :meth:`Tasks.create` at most hourly), and the runs a task stores may not exceed
``NDCG_LAB_QUOTA_BYTES`` (a submission past it is refused). One run file may not exceed the
task's ``max_bytes``, else ``NDCG_LAB_UPLOAD_BYTES``.

Every operation is one transaction. DuckDB lets one process hold a file at a time, so a process
keeps a task file open only between its transactions until it is idle or another process asks
for it (:mod:`~metrics.tasks.opened`): a command (``ndcg-lab task submit``) and a running server
share the file. Transactions take turns: in a process on the per-file lock of
:mod:`metrics.store.connection`, between processes on ``<file>.lock`` (flock), waiting up to
:data:`LOCK_WAIT` seconds before :class:`~metrics.store.WorkspaceLocked`.

Here: :class:`Tasks` (create, open a link, join, sweep) and :class:`Task` (one file: its locks,
transactions, creation and reads). The parts: :mod:`~metrics.tasks.links` (tokens),
:mod:`~metrics.tasks.submissions` (the submission path; the cap is one transaction),
:mod:`~metrics.tasks.instructor` (the instructor's changes and the exports),
:mod:`~metrics.tasks.snapshot` (what a read sees), :mod:`~metrics.tasks.access` (a link's role).
"""
from __future__ import annotations

import hmac
import json
import secrets
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd

from .. import io
from .. import settings as settings_module
from ..errors import MetricsError
from ..io.paths import stem
from ..io.topics import query_text, read_topics
from ..settings import Settings
from ..store import Registry, WorkspaceLocked, token_hash
from ..store.connection import file_lock, open_error
from . import instructor, opened, submissions
from .access import TaskAccess
from .definition import TaskDefinition, public_split
from .links import PAGE, PARAM, ROLES, TOKEN_BYTES, Links, TaskNotFound, derived_token, token_of
from .snapshot import (
    SNAPSHOTS_KEPT,
    Snapshot,
    cached_snapshot,
    forget_snapshot,
    keep_snapshot,
    read_meta,
    read_snapshot,
)
from .submissions import LABEL_LIMIT, SubmissionRefused, lists_digest, read_bytes

__all__ = ["Tasks", "TaskAccess", "Task", "Snapshot", "TaskNotFound", "SubmissionRefused", "Links", "ROLES",
           "token_of", "lists_digest", "PAGE", "PARAM", "LABEL_LIMIT", "SNAPSHOTS_KEPT", "snap_meta_now",
           "Registry"]

snap_meta_now = read_meta  # the meta table of a transaction, under this module's name too
SWEEP_EVERY = 3600.0      # create() removes idle tasks at most this often
LOCK_WAIT = 20.0          # seconds a command waits for a task file another process holds
SCHEMA_VERSION = 1
TEAM_NAME_LIMIT = 60

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
        raw_qrels = read_bytes(qrels)
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
            with self.registry.write() as db:
                db.execute("INSERT INTO tasks VALUES (?, ?, ?, NULL)", [task_id, now, now])
                db.executemany("INSERT INTO tokens VALUES (?, ?, ?, NULL)",
                               [(token_hash(token), task_id, "instructor"),
                                (token_hash(derived_token(token, "join")), task_id, "join"),
                                (token_hash(derived_token(token, "projector")), task_id, "projector")])
        except BaseException:
            task.remove_files()
            raise
        return self.links(token)

    def links(self, instructor_token: str) -> Links:
        tokens = {"instructor": instructor_token, "join": derived_token(instructor_token, "join"),
                  "projector": derived_token(instructor_token, "projector")}
        return Links(*(self.link(tokens[r]) for r in ("instructor", "join", "projector")), tokens)

    def open(self, link: str) -> TaskAccess:
        """The task and role of a link; TaskNotFound for a link no task has."""
        token = token_of(link)
        rows = self.registry.rows("SELECT k.task, k.role, k.team, t.removed FROM tokens k "
                                  "JOIN tasks t ON t.id = k.task WHERE k.hash = ?", [token_hash(token)])
        row = rows[0] if rows else None
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
        with self.registry.write() as db:
            db.execute("INSERT INTO tokens VALUES (?, ?, 'team', ?)", [token_hash(token), access.task.id, team_id])
        return self.link(token)

    def delete(self, access: TaskAccess) -> None:
        """Remove a task (instructor only): its file and every link."""
        access.require("instructor")
        with self.registry.write() as db:
            db.execute("UPDATE tasks SET removed = ? WHERE id = ?", [self.clock(), access.task.id])
            db.execute("DELETE FROM tokens WHERE task = ?", [access.task.id])
        access.task.remove_files()

    def sweep(self, now: float | None = None) -> list[str]:
        """Remove the tasks idle (no link opened) longer than the TTL; the ids removed."""
        now = self.clock() if now is None else now
        if self.settings.ttl is None:
            return []
        rows = self.registry.rows("SELECT id FROM tasks WHERE removed IS NULL AND last_access < ?",
                               [now - self.settings.ttl])
        for (task_id,) in rows:
            with self.registry.write() as db:
                db.execute("UPDATE tasks SET removed = ? WHERE id = ?", [now, task_id])
                db.execute("DELETE FROM tokens WHERE task = ?", [task_id])
            Task(self.folder / f"{task_id}.duckdb", self).remove_files()
        return [r[0] for r in rows]

    def close(self) -> None:
        """Close the registry and this process's open task files."""
        opened.close_under(self.folder.resolve())
        self.registry.close()

    # -- registry ----------------------------------------------------------------------

    def _touch(self, task_id: str) -> None:
        """Record the last access (what the TTL counts), at most once a minute per task."""
        now = self.clock()
        if now - self._touched.get(task_id, float("-inf")) < 60:
            return
        self._touched[task_id] = now
        with self.registry.write() as db:
            db.execute("UPDATE tasks SET last_access = ? WHERE id = ? AND last_access < ?", [now, task_id, now - 60])


class Task:
    """One task file. Every method runs one transaction on it (the file kept open between them)."""

    def __init__(self, path: Path, tasks: Tasks, *, create: bool = False) -> None:
        self.path = Path(path)
        self.id = self.path.stem
        self.tasks = tasks
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
    def transaction(self, write: bool = False):
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

    def write(self, action: Callable):
        """Run ``action(con)`` in a write transaction, again on a conflict (a few times)."""
        for attempt in range(20):
            try:
                with self.transaction(write=True) as con:
                    return action(con)
            except duckdb.TransactionException:
                if attempt == 19:
                    raise MetricsError("the task is busy", fix="try again in a moment") from None
                time.sleep(0.01 * (attempt + 1))

    _transaction = transaction

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

        self.write(action)
        self._create = False

    # -- reading -----------------------------------------------------------------------

    # -- reading -----------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """Everything but the stored files, as of one transaction; kept in memory while the
        file's generation is unchanged (``now`` is always the clock's)."""
        generation = self._generation()
        cached = cached_snapshot(str(self.path), generation, self.tasks.clock())
        if cached is not None:
            return cached
        with self.transaction() as con:
            snap = read_snapshot(con, self.id, self.tasks.clock())
        keep_snapshot(str(self.path), generation, snap)
        return snap

    def meta(self) -> dict:
        with self.transaction() as con:
            return read_meta(con)

    def raw_qrels(self, version: int | None = None) -> tuple[bytes, str]:
        with self.transaction() as con:
            if version is None:
                version = int(json.loads(con.execute("SELECT value FROM meta WHERE key = 'qrels_version'")
                                         .fetchone()[0]))
            row = con.execute("SELECT raw, file_name FROM qrels_versions WHERE version = ?", [version]).fetchone()
        return bytes(row[0]), row[1]

    def raw_runs(self, ids: Sequence[int] | None = None) -> dict[int, bytes]:
        with self.transaction() as con:
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

        return self.write(action)

    def add_baseline(self, run, name: str | None = None) -> int:
        raw = read_bytes(run)
        label = name or (stem(Path(run).name) if isinstance(run, (str, Path)) else "baseline")
        return submissions.store(self, None, raw, label, label, self.tasks.clock(), check=None)


    # -- submitting and the instructor's changes: metrics.tasks.submissions, .instructor ---

    def submit(self, team: int, data, label: str | None = None, file_name: str = "run.txt") -> int:
        """Check, score and store one run of ``team``; its id. SubmissionRefused says why not."""
        return submissions.submit(self, team, data, label, file_name)

    def set_meta(self, action_name: str, detail: str, **values) -> None:
        instructor.set_meta(self, action_name, detail, **values)

    def remove_submission(self, sid: int, reason: str) -> None:
        instructor.remove_submission(self, sid, reason)

    def choose_finals(self, team: int, ids: Sequence[int], limit: int) -> None:
        instructor.choose_finals(self, team, ids, limit)

    def replace_qrels(self, qrels, file_name: str, note: str) -> int:
        """A new qrels version (the old ones kept); every submission rescored on it. Its number."""
        return instructor.replace_qrels(self, qrels, file_name, note)
