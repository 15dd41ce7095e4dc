"""Class tasks on disk: the registry of link tokens and the facade (:class:`Tasks`: create, open a
link, join, delete, sweep).

Layout under ``$NDCG_LAB_HOME/tasks/``: ``<id>.duckdb`` per task (random id, unrelated to any
token; one :class:`~metrics.tasks.task.Task` each) and ``registry.sqlite3``
(:class:`metrics.store.Registry`, as the workspaces': the app and a command may open it at once)
with sha256(token) -> (task, role, team). No token is stored, and no file name holds one. The
roles and the tokens: :mod:`metrics.tasks.links`; what a link may do:
:class:`~metrics.tasks.access.TaskAccess`.

Bounds, as for workspaces: a task not opened for ``NDCG_LAB_TTL`` is removed (:meth:`Tasks.sweep`,
run by :meth:`Tasks.create` at most hourly), and the runs a task stores may not exceed
``NDCG_LAB_QUOTA_BYTES`` (a submission past it is refused). One run file may not exceed the
task's ``max_bytes``, else ``NDCG_LAB_UPLOAD_BYTES``.
"""
from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import io
from .. import settings as settings_module
from ..errors import MetricsError
from ..io.topics import query_text, read_topics
from ..settings import Settings
from ..store import Registry, token_hash
from . import classlist, opened, submissions
from .access import TaskAccess
from .definition import TaskDefinition, public_split
from .links import TOKEN_BYTES, Links, TaskNotFound, address, derived_token, links_of, token_of
from .submissions import Source, read_bytes
from .task import Task

__all__ = ["Tasks", "NO_KEY", "NO_KEY_FIX"]

NO_KEY = "no instructor key is set on this server, so no class task can be created here"
NO_KEY_FIX = ("the operator sets one and restarts the server, e.g. "
              "NDCG_LAB_INSTRUCTOR_KEY='a-long-random-phrase' ndcg-lab app "
              "(or NDCG_LAB_TASKS=anyone lets every visitor create tasks)")

SWEEP_EVERY = 3600.0      # create() removes idle tasks at most this often

_REGISTRY = """
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY, created REAL NOT NULL, last_access REAL NOT NULL, removed REAL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY, task TEXT NOT NULL, role TEXT NOT NULL, team INTEGER);
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
        return address(self.settings.public_url, token)

    def key_unset(self) -> bool:
        """Whether creating a task needs the instructor key (``NDCG_LAB_TASKS=key``) and the
        operator set none (``NDCG_LAB_INSTRUCTOR_KEY`` empty): then nobody can create one."""
        return self.settings.tasks != "anyone" and not self.settings.instructor_key

    def may_create(self, key: str | None) -> bool:
        """Whether ``key`` lets this visitor create a task (``NDCG_LAB_TASKS``)."""
        if self.settings.tasks == "anyone":
            return True
        wanted = self.settings.instructor_key
        return bool(wanted and key and hmac.compare_digest(str(key).encode(), wanted.encode()))

    # -- create, open, join ------------------------------------------------------------

    def create(self, definition: TaskDefinition, *, topics: object, qrels: Source,
               baselines: Sequence[Source | tuple[str | None, Source]] = (),
               key: str | None = None, qrels_name: str = "qrels") -> Links:
        """A new task: ``topics`` (anything :func:`metrics.io.topics.read_topics` reads), ``qrels``
        (bytes or a path: kept unchanged, hidden), ``baselines`` (runs, or (name, run) pairs).
        Returns its three links; only their hashes are kept."""
        if self.key_unset():
            raise MetricsError(NO_KEY, source="NDCG_LAB_INSTRUCTOR_KEY", fix=NO_KEY_FIX)
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
        task = Task(self.folder / f"{task_id}.duckdb", self.settings, self.clock, create=True)
        try:
            task.initialise(definition, topic_frame, set(judged), public, raw_qrels, qrels_name, parsed, now)
            for item in baselines:
                name, run = item if isinstance(item, tuple) else (None, item)
                submissions.add_baseline(task, run, name)
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
        return links_of(self.settings.public_url, instructor_token)

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
        task = Task(path, self.settings, self.clock)
        if role == "student":  # a personal link of the class list: its student's team, if any
            return classlist.student_access(task, int(team), token)
        return TaskAccess(task, role, team, token)

    def join(self, link: str, team: str) -> str:
        """A new team of the task of a join link; returns the team's link."""
        access = self.open(link)
        if access.role != "join":
            raise MetricsError("this is not a join link", fix="use the join link the instructor gave the class")
        classlist.refuse_join(access.task)
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
            Task(self.folder / f"{task_id}.duckdb", self.settings, self.clock).remove_files()
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
