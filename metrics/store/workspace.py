"""The workspace: collections of qrels, runs, topics and documents in one DuckDB file.

A collection has a unique name, one qrels, optionally proxy (inferred)
judgments, topics (qid, text), document metadata (docno, title) and any number
of runs, one of which may be its baseline. Runs and qrels are stored parsed, as
columnar tables (one row per input line), and once per content digest: adding
the same run again, to the same or another collection, only links the stored
copy. An object's rows are deleted when no collection links it any more.

Every change is one DuckDB transaction on one file, so a failed upload, a
refused quota or a killed process leaves the workspace as it was, and other
threads see the state before the change or after it, never between (a sample
reload is :meth:`Workspace.replace_collection`, one transaction). Everything
lives in the file, so it survives a restart of the app.

Loading is a single scan fetched as Arrow (no per-row Python); file order is
kept by DuckDB's insertion-order guarantee (``preserve_insertion_order``, on by
default: a scan of one table with a WHERE keeps the order rows were inserted in),
with an explicit ``pos`` column to ORDER BY should that setting be off.

:class:`Workspace` is a small facade: this module holds the file's lifecycle (open, upgrade,
close, suspend) and its transactions; each responsibility is a part it inherits, one module each:
:mod:`.collections` (collections and judgments), :mod:`.runs` (runs and the baseline),
:mod:`.extras` (topics and titles), :mod:`.cached` (the ranked cache), :mod:`.shared` (the base,
copy on write, the quota), :mod:`.space` (room on the disk, checkpoints, compaction). The records
and errors are in :mod:`.records`, the SQL steps in :mod:`.tables`, the connection in :mod:`.connection`;
:mod:`.host` declares, for the type checker, what the parts use of the workspace and of one another.
"""
from __future__ import annotations

import copy
import os
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import duckdb

from .. import settings
from ..errors import MetricsError
from ..io.memory import release_memory
from ..ranking import RELEASE_ROWS
from . import tables
from .cached import Cached
from .collections import Collections
from .connection import Connection, WorkspaceLocked, file_lock, first_line, in_turn, release_file_lock
from .extras import Extras
from .ranked import RankedCache
from .records import CollectionInfo, QrelsInfo, Quota, QuotaExceeded, ReadOnlyWorkspace, RunInfo, Usage
from .runs import Runs
from .shared import Shared
from .space import Space, compact_path, remove_copy
from .tables import StoredInfo

__all__ = ["Workspace", "CollectionInfo", "StoredInfo", "RunInfo", "QrelsInfo", "Quota", "Usage",
           "ReadOnlyWorkspace", "QuotaExceeded", "WorkspaceLocked", "default_path", "FILE_NAME"]

FILE_NAME = "workspace.duckdb"
SCHEMA_VERSION = tables.SCHEMA_VERSION


def cache_folder(path: Path) -> Path:
    """The folder of a workspace file's ranked cache: ``<file>.cache`` beside it."""
    return Path(f"{path}.cache")


def default_path() -> Path:
    """``workspace.duckdb`` in :func:`metrics.settings.home` (``$NDCG_LAB_HOME``, else XDG)."""
    return settings.home() / FILE_NAME


class Workspace(Collections, Runs, Extras, Cached, Shared, Space):
    """The workspace database; safe to share between threads (Streamlit sessions).

    ``path`` is a file, a folder (which then holds ``workspace.duckdb``),
    ``":memory:"``, or None for :func:`default_path`. Each operation runs on
    its own DuckDB cursor inside one transaction; writes take a per-file lock.

    ``read_only``: every change raises :class:`ReadOnlyWorkspace` (the file is opened
    read-only too, unless this process already has it open for writing). ``base``: a
    read-only workspace whose collections this one shows and copies on write. ``quota``:
    a change that would exceed it raises :class:`QuotaExceeded`. ``memory_limit``: bytes of
    DuckDB's buffer pool for this file. ``on_use(workspace)`` is called at every operation
    (a manager keeps its least recently used list with it). :meth:`suspend` closes the
    connection until the next operation reopens it. ``ranked_store``: the folder of ranked
    cache files shared by the workspaces of a server (:mod:`.ranked`), or None.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 base: Workspace | None = None, quota: Quota | None = None, memory_limit: int | None = None,
                 on_use: Callable[[Workspace], None] | None = None, ranked_store: Path | None = None) -> None:
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
            if read_only and not self.path.exists():
                raise MetricsError("there is no workspace file here", source=str(self.path),
                                   fix="check the path, or open it for writing once to create it")
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise MetricsError(f"cannot create the folder {str(self.path.parent)!r} ({exc.strerror or exc})",
                                   source=str(self.path), fix="pass --workspace with a writable path") from None
        self.read_only = read_only
        self.quota = quota or Quota()
        self._base = base
        self._key: str | None = key
        self._owner = True
        self._listing: list[CollectionInfo] | None = None
        self._lock = file_lock(key)
        # A read-only file keeps the layout of its schema: read it from the catalogue at each opening
        # of the connection (another process may upgrade the file while it is closed), never per query.
        self._conn = Connection(self.path, read_only=read_only, memory_limit=memory_limit,
                                 on_use=None if on_use is None else (lambda: on_use(self)),
                                 describe=tables.layout if read_only else None)
        self._cache = RankedCache(cache_folder(self.path), writable=not read_only, store=ranked_store) \
            if isinstance(self.path, Path) else None   # ":memory:" has no folder
        if isinstance(self.path, Path) and not read_only:
            with in_turn(self.path):   # another process may be writing its copy now
                remove_copy(compact_path(self.path))   # a compaction a killed process left unfinished
        try:
            self._schema = self._prepare()
            self._tidy_cache()  # files a killed process or an older version left
        except BaseException:
            self.close()
            raise

    def _prepare(self) -> int:
        """Create or upgrade the tables (read-only: check them); the file's schema version."""
        with self._lock, self._transaction() as cur:
            if self.read_only:
                present = tables.row(cur, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'")
                row = tables.one(cur, "SELECT value FROM meta WHERE key = 'schema_version'") if present[0] else None
                if row is None:
                    raise MetricsError("the file is not an nDCG Lab workspace", source=str(self.path),
                                       fix="give the path of a workspace.duckdb")
                version = int(row[0])
            else:
                cur.execute(tables.SCHEMA)
                row = tables.one(cur, "SELECT value FROM meta WHERE key = 'schema_version'")
                version = SCHEMA_VERSION if row is None else int(row[0])
                if row is None:
                    cur.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
                elif version < SCHEMA_VERSION:
                    coded = tables.coded_runs(cur)  # a file may say an older version than its layout
                    if version < 2 and not coded:
                        cur.execute(tables.MIGRATE_1)
                    if version < 3:
                        cur.execute(tables.MIGRATE_2)
                    if not coded:
                        cur.execute(tables.MIGRATE_3)
                    cur.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
                    version = SCHEMA_VERSION
            if version > SCHEMA_VERSION:
                raise MetricsError(f"the workspace was written by a newer nDCG Lab (schema {version})",
                                   source=str(self.path), fix="upgrade nDCG Lab or use another workspace file")
            return version

    def close(self, reason: Callable[[], MetricsError] | None = None) -> None:
        """Close the file; later operations raise ``reason()`` (default: "the workspace is closed").
        Closing a :meth:`read_only_view` leaves the workspace open."""
        if not self._owner:
            return
        self._conn.close(reason or (lambda: MetricsError("the workspace is closed", source=str(self.path),
                                                         fix="open it again with Workspace(path)")))
        if self._key is not None:
            release_file_lock(self._key)
            self._key = None

    def suspend(self) -> bool:
        """Close the DuckDB connection if no operation is running (the next one reopens it)."""
        self._listing = None
        return self._conn.suspend()

    def _after_bulk_read(self, rows: int) -> None:
        """After a read of ``rows`` lines: from :data:`~metrics.ranking.RELEASE_ROWS` on, close the
        connection when idle and hand freed memory back (:func:`metrics.io.memory.release_memory`).
        DuckDB keeps the blocks it read in its buffer pool (up to ``memory_limit``, 512 MB per open
        workspace in shared mode) until the connection closes: two 7M-line runs read left 243 MiB
        there, and the next operation reopens the file in milliseconds."""
        if rows >= RELEASE_ROWS:
            self._conn.suspend()
            release_memory()

    @property
    def is_open(self) -> bool:
        """Whether the DuckDB connection is open now (False after :meth:`suspend` and :meth:`close`)."""
        return self._conn.con is not None

    def read_only_view(self) -> Workspace:
        """The same workspace, every change refused (:class:`ReadOnlyWorkspace`); shares the connection."""
        view = copy.copy(self)
        view.read_only = True
        view._owner = False
        if self._cache is not None:
            view._cache = RankedCache(self._cache.folder, writable=False, store=self._cache.store)
        return view

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def _layout(self) -> tables.Layout:
        """The file's columns where schemas differ (:class:`.tables.Layout`): a file opened for
        writing has the current ones (``_prepare`` upgraded it)."""
        return self._conn.description or tables.CURRENT

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        """The live DuckDB connection (tests set DuckDB options through it)."""
        with self._conn.cursor():
            con = self._conn.con
            if con is None:   # cursor() opened it: only a close() from another thread in between
                raise MetricsError("the workspace is closed", source=str(self.path))
            return con

    @contextmanager
    def _transaction(self):
        with self._conn.cursor() as cur:
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
                raise MetricsError(f"the workspace could not be read or changed ({first_line(exc)})",
                                   source=str(self.path), fix="nothing was changed; try again") from exc

    @contextmanager
    def _write(self, source: str | None = None):
        """One write transaction: all of it or nothing; writers take turns; the quota holds at the end."""
        with self._lock, self._transaction() as cur:
            before = self._usage(cur) if self.quota.limited else None
            yield cur
            if before is not None:
                self._check_quota(before, self._usage(cur), source)

    def _read(self):
        """One read transaction: a consistent snapshot, concurrent with writers."""
        return self._transaction()
