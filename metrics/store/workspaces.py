"""Workspaces for the visitors of one server: private, reached by an unguessable link, bounded.

``personal`` mode has one workspace, ``$NDCG_LAB_HOME/workspace.duckdb``, holding the
sample collections like any other. ``shared`` mode gives every visitor a workspace of
their own, reached by a token, with the samples shared read-only beneath it. A visitor
who only reads has none: :class:`Pristine` shows them :meth:`WorkspaceRegistry.blank` and
creates their workspace at their first change.

The registry, its tokens, the open-file bound, the blank and :class:`Pristine` share one lock
and one life cycle (create, open, suspend, sweep).

Storage: one DuckDB file per visitor workspace (``shared/workspaces/<id>.duckdb``).
- Isolation by construction: a session holds a :class:`~metrics.store.Workspace` bound to
  one file, and no query it runs can name rows of another visitor, because they are in
  another database. With one database for all, every query (and every future one) would
  need a workspace filter, and one forgotten ``WHERE`` would leak.
- Removing an idle workspace is deleting its file; a quota is a sum over one file.
- DuckDB serialises writers per database: one visitor's 7M-line upload never stalls
  another's, and a damaged file touches one visitor.
- The cost, one DuckDB instance per active visitor, is bounded: at most
  ``NDCG_LAB_OPEN_WORKSPACES`` stay open (least recently used closed first, reopened on
  the next use), each with ``NDCG_LAB_WORKSPACE_MEMORY`` of buffer pool.

Tokens: ``secrets.token_urlsafe(24)``, 192 bits. The registry
(``shared/registry.sqlite3``, SQLite: the app and a command may open it at once, which a
DuckDB file would refuse) keeps only sha256(token) and random workspace ids unrelated to
the token; no file name holds a token. The read-only link's token is
HMAC-SHA256(token, "read-only") cut to 192 bits, so the owner's page can show it again at
any visit, while it reveals nothing of the edit token.

Ranked caches: every visitor workspace keeps its own ``<id>.duckdb.cache/`` (its quota counts it),
whose files are hard links into ``shared/ranked/``, named by content digests: two visitors who
store the same run against the same qrels share one file, and the server maps it once.

Samples: built once into ``shared/samples-<digest>.duckdb`` (digest of the sample files;
a changed sample gets a new file), opened read-only, the base of every visitor workspace
(:mod:`metrics.store` copies a sample into the visitor's file when they change it).

Idle workspaces: the last access is kept in memory at every operation and written to the
registry at most once a minute; :meth:`WorkspaceRegistry.sweep` removes those idle longer than
the TTL and keeps a tombstone for 30 days, so that an old link says "expired" rather
than "unknown".
"""
from __future__ import annotations

import base64
import functools
import hashlib
import hmac
import os
import re
import secrets
import shutil
import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from .. import settings as settings_module
from ..errors import MetricsError
from ..settings import Settings
from . import connection
from .home import lock_home
from .registry import Registry, token_hash
from .samples import Sample, samples_digest
from .workspace import FILE_NAME, Quota, RunInfo, Workspace, cache_folder

__all__ = ["WorkspaceRegistry", "Access", "Pristine", "WorkspaceNotFound", "WorkspaceExpired", "view_token_of"]

TOKEN_BYTES = 24
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{32}$")
ACCESS_RESOLUTION = 60.0       # seconds between two registry writes of one workspace's last access
SWEEP_EVERY = 3600.0           # create() sweeps at most this often
TOMBSTONE_SECONDS = 30 * 86400.0
ORPHAN_SECONDS = 3600.0        # a workspace file without a registry row older than this is removed

_REGISTRY = """
CREATE TABLE IF NOT EXISTS workspaces (
    id TEXT PRIMARY KEY, created REAL NOT NULL, last_access REAL NOT NULL, removed REAL);
CREATE TABLE IF NOT EXISTS tokens (
    hash TEXT PRIMARY KEY, workspace TEXT NOT NULL, access TEXT NOT NULL CHECK (access IN ('edit', 'view')));
"""


class WorkspaceNotFound(MetricsError):
    """No workspace has this token (mistyped, forged, or never issued)."""


class WorkspaceExpired(WorkspaceNotFound):
    """The token's workspace was removed after the time to live without a visit."""


@dataclass(frozen=True)
class Access:
    """A workspace as one token opens it: ``read_only`` for a view link; ``view_token`` is the
    read-only link's token of an edit link (None for a view link)."""

    workspace: Workspace
    token: str
    view_token: str | None

    @property
    def read_only(self) -> bool:
        return self.workspace.read_only


class Pristine:
    """A new visitor's workspace before their first change: it reads as a new workspace reads
    (:meth:`WorkspaceRegistry.blank`: the shared samples, nothing of the visitor's own) while nothing of it
    exists on the server. The first change (a :class:`Workspace` method marked ``changes_workspace``)
    calls ``create`` (once, however many threads change it at once), then goes to the workspace
    made, as does every call after it; ``access`` is that workspace's access (None before)."""

    def __init__(self, blank: Workspace, create: Callable[[], Access]) -> None:
        self._blank = blank
        self._create = create
        self._lock = threading.Lock()
        self.access: Access | None = None

    @property
    def read_only(self) -> bool:
        return False

    def created(self) -> Access:
        """The workspace's access, creating it at the first call."""
        with self._lock:
            if self.access is None:
                self.access = self._create()
            return self.access

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        access = self.access
        if access is not None:
            return getattr(access.workspace, name)
        method = getattr(type(self._blank), name, None)
        if method is None or not getattr(method, "changes_workspace", False):
            return getattr(self._blank, name)

        @functools.wraps(method)
        def change(*args, **kwargs):
            return getattr(self.created().workspace, name)(*args, **kwargs)
        return change

    def __repr__(self) -> str:
        return f"Pristine({self.access.workspace!r})" if self.access is not None else "Pristine()"


def view_token_of(token: str) -> str:
    """The read-only link's token of an edit token: HMAC-SHA256(token, "read-only"), 192 bits."""
    mac = hmac.new(token.encode(), b"ndcg-lab read-only", hashlib.sha256).digest()[:TOKEN_BYTES]
    return base64.urlsafe_b64encode(mac).decode()


class WorkspaceRegistry:
    """The registry of a server's workspace files: opens them, makes and sweeps them; one per process,
    shared by its sessions (threads).
    In shared mode one process per ``NDCG_LAB_HOME`` (:func:`lock_home`), or the processes of one
    deployment (``NDCG_LAB_DEPLOYMENT``), which take turns on each file.

    Personal mode: :meth:`personal`. Shared mode: :meth:`create` for a new visitor,
    :meth:`open` for a token, :meth:`sweep` for idle workspaces. Either mode:
    :meth:`reload_sample`. ``clock`` gives the time in seconds (tests move it).
    """

    def __init__(self, config: Settings | None = None, *, samples: Sequence[Sample] = (),
                 clock: Callable[[], float] = time.time) -> None:
        self.settings = settings_module.load() if config is None else config
        self.samples = tuple(samples)
        self._clock = clock
        self._lock = threading.RLock()  # opening, creating and removing workspaces
        # The bookkeeping of every operation (LRU order, last access) has a lock of its own, so
        # that no operation waits for another visitor's workspace being opened or removed.
        self._lru_lock = threading.Lock()
        self._root = Path(self.settings.home) / "shared"
        self._folder = self._root / "workspaces"
        self._ranked_store = self._root / "ranked"   # ranked cache files shared by content (metrics.store.ranked)
        self._handles: dict[str, Workspace] = {}
        self._open: OrderedDict[str, None] = OrderedDict()  # ids whose connection may be open, oldest first
        self._touched: dict[str, float] = {}
        self._recorded: dict[str, float] = {}
        self._personal: dict[str, Workspace] = {}
        self._base: Workspace | None = None
        self._blank: Workspace | None = None
        self._registry = Registry(self._root / "registry.sqlite3", _REGISTRY)
        self._last_sweep = self._clock()
        if self.settings.shared:
            lock_home(self._root, self.settings.deployment)
        if self.settings.deployment is not None:
            connection.share_between_processes(self.settings.home)   # workspaces, live checks

    @property
    def quota(self) -> Quota:
        return Quota(bytes=self.settings.quota_bytes, runs=self.settings.quota_runs)

    # -- personal mode ---------------------------------------------------------------------

    def personal(self, path: str | os.PathLike | None = None) -> Workspace:
        """The workspace of personal mode (``path``, default ``$NDCG_LAB_HOME/workspace.duckdb``),
        holding the samples from its first opening; one Workspace per file for all sessions."""
        if self.settings.shared:
            raise MetricsError("this server is in shared mode: every visitor has a workspace of their own",
                               fix="open a workspace with its link (WorkspaceRegistry.open) or make one (create)")
        path = Path(self.settings.home) / FILE_NAME if path is None else Path(path).expanduser()
        key = str((path / FILE_NAME if path.is_dir() else path).resolve())
        with self._lock:
            if key not in self._personal:
                ws = Workspace(path, quota=self.quota, memory_limit=self.settings.workspace_memory)
                try:
                    if not ws.collections():
                        for sample in self.samples:
                            ws.replace_collection(sample.name, **sample.read())
                except BaseException:
                    ws.close()
                    raise
                self._personal[key] = ws
            return self._personal[key]

    # -- shared mode -----------------------------------------------------------------------

    def create(self) -> Access:
        """A new, empty private workspace (the samples show through) and its two tokens.

        The file is made outside the manager lock (its id is new and random: no other thread can
        name it), so visitors arriving together create theirs at once; a file whose registry row
        was never written (a crash in between) is an orphan that :meth:`sweep` removes."""
        self._require_shared()
        token, workspace_id = secrets.token_urlsafe(TOKEN_BYTES), secrets.token_hex(16)
        now = self._clock()
        if now - self._last_sweep > SWEEP_EVERY:
            self.sweep(now)
        with self._lock:
            base = self._shared_samples()
            self._folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = self._path(workspace_id)
        with self._lru_lock:
            self._recorded[workspace_id] = now     # the registry row below records this access
        ws = Workspace(path, base=base, quota=self.quota, memory_limit=self.settings.workspace_memory,
                       on_use=self._used, ranked_store=self._ranked_store)
        try:
            with self._write_registry() as db:
                db.execute("INSERT INTO workspaces VALUES (?, ?, ?, NULL)", [workspace_id, now, now])
                db.executemany("INSERT INTO tokens VALUES (?, ?, ?)",
                               [(token_hash(token), workspace_id, "edit"),
                                (token_hash(view_token_of(token)), workspace_id, "view")])
        except BaseException:
            with self._lru_lock:
                self._open.pop(workspace_id, None)
                self._touched.pop(workspace_id, None)
                self._recorded.pop(workspace_id, None)
            ws.close()
            _remove_files(path)
            raise
        with self._lock:
            self._handles[workspace_id] = ws
        self._used(ws)      # into the open list now that the manager can suspend it
        return Access(ws, token, view_token_of(token))

    def blank(self) -> Workspace:
        """What a new visitor's workspace shows, read-only: nothing of its own over the shared
        samples. One in-memory database per manager, shared by every :class:`Pristine` session;
        no file, no registry row."""
        self._require_shared()
        with self._lock:
            if self._blank is None:
                self._blank = Workspace(":memory:", base=self._shared_samples(), quota=self.quota,
                                        memory_limit=self.settings.workspace_memory)
            return self._blank.read_only_view()

    def open(self, token: str) -> Access:
        """The workspace of ``token``: WorkspaceNotFound for a token no workspace has,
        WorkspaceExpired for one removed after the TTL; a view token opens it read-only."""
        self._require_shared()
        text = token if isinstance(token, str) else ""
        with self._lock:
            row = None
            if _TOKEN.match(text):
                row = self._query("SELECT t.workspace, t.access, w.last_access, w.removed FROM tokens t "
                                  "JOIN workspaces w ON w.id = t.workspace WHERE t.hash = ?", [token_hash(text)])
            if row is None:
                raise WorkspaceNotFound("no workspace has this link",
                                        fix="check that the link was copied whole, or start a new workspace")
            workspace_id, access, last_access, removed = row
            now = self._clock()
            with self._lru_lock:
                last_access = max(last_access, self._touched.get(workspace_id, last_access))
            ttl = self.settings.ttl
            if removed is None and ttl is not None and now - last_access > ttl:
                self._remove(workspace_id, now)
                removed = now
            if removed is not None:
                raise self._expired()
            ws = self._workspace(workspace_id)
            with self._lru_lock:
                self._touched[workspace_id] = now
        if access == "view":
            return Access(ws.read_only_view(), text, None)
        return Access(ws, text, view_token_of(text))

    def sweep(self, now: float | None = None) -> list[str]:
        """Remove the workspaces idle longer than the TTL (their files and open connections);
        forget tombstones older than 30 days and files the registry does not know. The ids removed."""
        if not self.settings.shared:
            return []
        now = self._clock() if now is None else now
        self._last_sweep = now
        removed = []
        with self._lock:
            self._flush_access()
            if self.settings.ttl is not None:
                rows = self._query_all("SELECT id FROM workspaces WHERE removed IS NULL AND last_access < ?",
                                       [now - self.settings.ttl])
                for (workspace_id,) in rows:
                    with self._lru_lock:
                        recent = self._touched.get(workspace_id, 0.0) >= now - self.settings.ttl
                    if recent:
                        continue
                    self._remove(workspace_id, now)
                    removed.append(workspace_id)
            with self._write_registry() as db:
                old = now - TOMBSTONE_SECONDS
                db.execute("DELETE FROM tokens WHERE workspace IN (SELECT id FROM workspaces WHERE removed < ?)",
                           [old])
                db.execute("DELETE FROM workspaces WHERE removed < ?", [old])
            known = {r[0] for r in self._query_all("SELECT id FROM workspaces WHERE removed IS NULL", [])}
            for path in self._folder.glob("*.duckdb") if self._folder.exists() else ():
                if path.stem not in known and path.stem not in self._handles:
                    try:
                        if now - path.stat().st_mtime > ORPHAN_SECONDS:
                            _remove_files(path)
                    except FileNotFoundError:
                        pass
        return removed

    # -- either mode -----------------------------------------------------------------------

    def reload_sample(self, workspace: Workspace, name: str) -> list[RunInfo]:
        """Restore the sample ``name`` in ``workspace``, keeping the runs (and proxy judgments)
        added to it there; one transaction. Returns the runs kept."""
        sample = next((s for s in self.samples if s.name == name), None)
        if sample is None:
            raise MetricsError(f"no sample named {name!r}",
                               fix=f"samples: {', '.join(repr(s.name) for s in self.samples) or 'none'}")
        if self.settings.shared:
            return workspace.restore_shared(name)
        return workspace.replace_collection(name, **sample.read())

    def close(self) -> None:
        """Close every workspace this manager opened and the registry."""
        with self._lock:
            self._flush_access()
            for ws in [*self._handles.values(), *self._personal.values(), self._blank, self._base]:
                if ws is not None:
                    ws.close()
            self._handles.clear()
            self._personal.clear()
            with self._lru_lock:
                self._open.clear()
            self._base = self._blank = None
            self._registry.close()

    # -- internals -------------------------------------------------------------------------

    def _require_shared(self) -> None:
        if not self.settings.shared:
            raise MetricsError("workspace links exist only in shared mode", source="NDCG_LAB_MODE",
                               fix="set NDCG_LAB_MODE=shared, or use WorkspaceRegistry.personal()")

    def _expired(self) -> WorkspaceExpired:
        days = (self.settings.ttl or 0) / 86400
        return WorkspaceExpired(f"this workspace was removed after {days:g} days without a visit",
                                fix="start a new workspace and upload the files again")

    def _path(self, workspace_id: str) -> Path:
        return self._folder / f"{workspace_id}.duckdb"

    def _workspace(self, workspace_id: str) -> Workspace:
        """The open Workspace of an id (under the manager lock)."""
        ws = self._handles.get(workspace_id)
        if ws is not None:
            return ws
        path = self._path(workspace_id)
        if not path.exists():
            raise self._expired()
        ws = Workspace(path, base=self._shared_samples(), quota=self.quota,
                       memory_limit=self.settings.workspace_memory, on_use=self._used, ranked_store=self._ranked_store)
        self._handles[workspace_id] = ws  # opening it called _used already
        return ws

    def _used(self, ws: Workspace) -> None:
        """Called at every operation on a visitor workspace: LRU order, last access, the bound."""
        workspace_id = Path(ws.path).stem
        now = self._clock()
        with self._lru_lock:
            self._open[workspace_id] = None
            self._open.move_to_end(workspace_id)
            self._touched[workspace_id] = now
            excess = len(self._open) - self.settings.open_workspaces
            for victim in list(self._open)[:-1]:
                if excess <= 0:
                    break
                handle = self._handles.get(victim)  # a dict read: safe while another thread adds
                if handle is None or handle.suspend() or not handle.is_open:
                    del self._open[victim]
                    excess -= 1
            record = now - self._recorded.get(workspace_id, 0.0) >= ACCESS_RESOLUTION
            if record:
                self._recorded[workspace_id] = now
        if record:
            try:
                with self._write_registry() as db:
                    db.execute("UPDATE workspaces SET last_access = max(last_access, ?) WHERE id = ?",
                               [now, workspace_id])
            except sqlite3.OperationalError:     # a full disk: the visit is recorded at a later one
                with self._lru_lock:
                    self._recorded.pop(workspace_id, None)

    def _flush_access(self) -> None:
        with self._lru_lock:
            pending = [(t, i) for i, t in self._touched.items() if t > self._recorded.get(i, 0.0)]
            for t, i in pending:
                self._recorded[i] = t
        if pending:
            try:
                with self._write_registry() as db:
                    db.executemany("UPDATE workspaces SET last_access = max(last_access, ?) WHERE id = ?", pending)
            except sqlite3.OperationalError:     # a full disk: kept in memory, written at a later flush
                with self._lru_lock:
                    for _, i in pending:
                        self._recorded.pop(i, None)

    def _remove(self, workspace_id: str, now: float) -> None:
        """Mark removed, close, delete the files (under the manager lock)."""
        with self._write_registry() as db:
            db.execute("UPDATE workspaces SET removed = ? WHERE id = ?", [now, workspace_id])
        handle = self._handles.pop(workspace_id, None)
        if handle is not None:
            handle.close(reason=self._expired)
        with self._lru_lock:
            self._open.pop(workspace_id, None)
            self._touched.pop(workspace_id, None)
            self._recorded.pop(workspace_id, None)
        _remove_files(self._path(workspace_id))

    def _shared_samples(self) -> Workspace | None:
        """The read-only workspace of the samples, built on first use (under the manager lock)."""
        if not self.samples:
            return None
        if self._base is None:
            self._root.mkdir(parents=True, exist_ok=True, mode=0o700)
            path = self._root / f"samples-{samples_digest(self.samples)[:16]}.duckdb"
            if not path.exists():
                building = self._root / f".building-{secrets.token_hex(8)}.duckdb"
                try:
                    with Workspace(building) as ws:
                        for sample in self.samples:
                            ws.replace_collection(sample.name, **sample.read())
                    os.replace(building, path)
                finally:
                    _remove_files(building)
                for old in self._root.glob("samples-*.duckdb"):
                    if old != path:
                        _remove_files(old)
            self._base = Workspace(path, read_only=True)
        return self._base

    def _query(self, sql: str, params) -> tuple | None:
        rows = self._registry.rows(sql, params)
        return rows[0] if rows else None

    def _query_all(self, sql: str, params) -> list[tuple]:
        return self._registry.rows(sql, params)

    def _write_registry(self):
        """One SQLite write transaction (:meth:`Registry.write`)."""
        return self._registry.write()


def _remove_files(path: Path) -> None:
    """A DuckDB file with its write-ahead log, spill folder and ranked cache."""
    for extra in (path, Path(f"{path}.wal"), Path(f"{path}.compact"), Path(f"{path}.compact.wal")):
        try:
            extra.unlink()
        except FileNotFoundError:
            pass
    shutil.rmtree(f"{path}.tmp", ignore_errors=True)
    shutil.rmtree(cache_folder(path), ignore_errors=True)
