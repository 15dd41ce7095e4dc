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

A workspace may have a *base*: a read-only workspace (the shared sample
collections) whose collections it shows beside its own. A change to a base
collection first copies it into this workspace, in the same transaction
(copy on write); deleting or renaming one hides it here. The base never changes.

Loading is a single scan fetched as Arrow (no per-row Python); file order is
kept by DuckDB's insertion-order guarantee (``preserve_insertion_order``, on by
default: a scan of one table with a WHERE keeps the order rows were inserted in),
with an explicit ``pos`` column to ORDER BY should that setting be off.

Beside the file, ``<file>.cache/`` holds the ranked cache (:mod:`.ranked`): a stored run ordered
and joined with its collection's judgments, as memory-mapped Arrow files keyed by content
digests, so that :meth:`Workspace.load_ranked` in a new process costs a map, not a sort and a
join. It is derived data: every write removes the files no collection's (run, qrels) names any
more, and the oldest ones while the cache takes more than the byte quota leaves free.

Why one file of ~800 lines: it is one public class, :class:`Workspace`, of some 27 short methods,
each one transaction; the SQL steps live in :mod:`.tables` and the connection in :mod:`.connection`.
"""
from __future__ import annotations

import copy
import functools
import os
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from .. import io, settings
from ..errors import MetricsError
from ..ranking import Ranked, rank
from . import tables
from .connection import Connection, WorkspaceLocked, file_lock, first_line, release_file_lock
from .ranked import RankedCache
from .tables import StoredInfo

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Workspace", "CollectionInfo", "StoredInfo", "RunInfo", "QrelsInfo", "Quota", "Usage",
           "ReadOnlyWorkspace", "QuotaExceeded", "WorkspaceLocked", "default_path", "FILE_NAME"]

FILE_NAME = "workspace.duckdb"
SCHEMA_VERSION = tables.SCHEMA_VERSION

RunInfo = StoredInfo
QrelsInfo = StoredInfo


class ReadOnlyWorkspace(MetricsError):
    """A change was asked of a workspace opened read-only; nothing was changed."""


class QuotaExceeded(MetricsError):
    """The change would take the workspace over its quota; nothing was written."""


@dataclass(frozen=True)
class Quota:
    """Upper bounds of one workspace: data bytes (see :mod:`metrics.store.tables`) and runs; None: no bound."""

    bytes: int | None = None
    runs: int | None = None

    @property
    def limited(self) -> bool:
        return self.bytes is not None or self.runs is not None


@dataclass(frozen=True)
class Usage:
    """Data bytes and runs (what a quota bounds); ``cache_bytes``: the ranked cache's files
    (:meth:`Workspace.load_ranked`), kept within what the byte quota leaves free."""

    bytes: int
    runs: int
    cache_bytes: int = 0


@dataclass(frozen=True)
class CollectionInfo:
    """A collection as listed: its judgments, runs and counts. ``shared`` marks a collection
    seen through the base (the shared samples) that this workspace has not changed."""

    name: str
    qrels: StoredInfo
    proxy: StoredInfo | None
    n_runs: int
    baseline: str | None
    created: datetime
    n_topics: int = 0
    n_docs: int = 0
    runs: tuple[StoredInfo, ...] = ()
    shared: bool = False

    @property
    def qrels_digest(self) -> str:
        return self.qrels.digest

    @property
    def proxy_digest(self) -> str | None:
        return None if self.proxy is None else self.proxy.digest


def cache_folder(path: Path) -> Path:
    """The folder of a workspace file's ranked cache: ``<file>.cache`` beside it."""
    return Path(f"{path}.cache")


def default_path() -> Path:
    """``workspace.duckdb`` in :func:`metrics.settings.home` (``$NDCG_LAB_HOME``, else XDG)."""
    return settings.home() / FILE_NAME


def _writes(method):
    """Mark a method that changes the workspace: on a read-only one it raises before doing anything."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if self.read_only:
            raise ReadOnlyWorkspace("this workspace is open read-only; nothing was changed",
                                    source=str(self.path), fix="open it with its edit link to change it")
        result = method(self, *args, **kwargs)
        self._tidy_cache()
        return result

    guarded.changes_workspace = True
    return guarded


class Workspace:
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
    connection until the next operation reopens it.
    """

    def __init__(self, path: str | os.PathLike | None = None, *, read_only: bool = False,
                 base: Workspace | None = None, quota: Quota | None = None, memory_limit: int | None = None,
                 on_use: Callable[[Workspace], None] | None = None) -> None:
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
        self._key = key
        self._owner = True
        self._listing: list[CollectionInfo] | None = None
        self._lock = file_lock(key)
        self._conn = Connection(self.path, read_only=read_only, memory_limit=memory_limit,
                                 on_use=None if on_use is None else (lambda: on_use(self)))
        self._cache = None if self.path == ":memory:" else RankedCache(cache_folder(self.path),
                                                                      writable=not read_only)
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
                present = tables.one(cur, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'meta'")
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

    # -- lifecycle ---------------------------------------------------------------------

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
            view._cache = RankedCache(self._cache.folder, writable=False)
        return view

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({str(self.path)!r}{', read_only=True' if self.read_only else ''})"

    @property
    def _con(self) -> duckdb.DuckDBPyConnection:
        """The live DuckDB connection (tests set DuckDB options through it)."""
        with self._conn.cursor():
            return self._conn.con

    # -- transactions ------------------------------------------------------------------

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

    # -- the base (shared collections) -------------------------------------------------

    def _base_listing(self) -> list[CollectionInfo]:
        return [] if self._base is None else self._base.collections()

    def _base_info(self, name: str) -> CollectionInfo | None:
        return next((c for c in self._base_listing() if c.name == name), None)

    def _hidden(self, cur) -> set[str]:
        return tables.hidden(cur) if self._base is not None and self._schema >= 2 else set()

    def _is_shared(self, cur, name: str) -> bool:
        """Whether ``name`` is a base collection shown here as it is (not hidden, not copied)."""
        return (self._base_info(name) is not None and name not in self._hidden(cur)
                and tables.collection_id(cur, name) is None)

    def _exists(self, cur, name: str) -> bool:
        return tables.collection_id(cur, name) is not None or self._is_shared(cur, name)

    def _find(self, cur, name: str) -> int | None:
        """The collection's id in this file; None for a shared one; MetricsError if there is none."""
        cid = tables.collection_id(cur, name)
        if cid is None and not self._is_shared(cur, name):
            hidden = self._hidden(cur)
            known = [c.name for c in self._base_listing() if c.name not in hidden]
            known += [n for n in tables.collection_names(cur) if n not in known]
            raise MetricsError(f"no collection named {name!r}",
                               fix=f"known collections: {', '.join(map(repr, known))}" if known
                               else "the workspace is empty; create a collection first")
        return cid

    def _own(self, cur, name: str) -> int:
        """The id of the collection in this file, copying a shared one here first (copy on write)."""
        cid = self._find(cur, name)
        return self._copy_shared(cur, name) if cid is None else cid

    def _copy_shared(self, cur, name: str, as_name: str | None = None) -> int:
        base, info = self._base, self._base_info(name)
        topics, docs = base.load_topics(name), base.load_docs(name)
        cid = tables.create_collection(
            cur, as_name or name, base.load_qrels(name), base.load_proxy(name),
            tables.extra_table("topics", topics) if len(topics) else None,
            tables.extra_table("docs", docs) if len(docs) else None, created=tables.naive(info.created))
        for run in info.runs:
            stored = tables.store_object(cur, "run", base.load_run(name, run.name))
            tables.link(cur, cid, "run", stored, run.name, run.source, added=tables.naive(run.uploaded))
        cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [info.baseline, cid])
        return cid

    # -- quota -------------------------------------------------------------------------

    def usage(self) -> Usage:
        """Data bytes and runs this workspace's file holds (what its quota bounds), and the bytes
        of its ranked cache."""
        with self._read() as cur:
            used = self._usage(cur)
        return replace(used, cache_bytes=0 if self._cache is None else self._cache.size())

    def _usage(self, cur) -> Usage:
        return Usage(*tables.usage(cur))

    def _check_quota(self, before: Usage, after: Usage, source: str | None) -> None:
        """Refuse a change that takes the workspace over a bound it did not already exceed."""
        limit = self.quota
        if limit.runs is not None and after.runs > limit.runs and after.runs > before.runs:
            raise QuotaExceeded(f"the workspace would hold {after.runs} runs, over its quota of {limit.runs}",
                                source=source, fix="delete runs you no longer need (nothing was stored), "
                                                   "or ask the operator to raise NDCG_LAB_QUOTA_RUNS")
        if limit.bytes is not None and after.bytes > limit.bytes and after.bytes > before.bytes:
            raise QuotaExceeded(f"the workspace would hold {_size(after.bytes)} of data, over its quota of "
                                f"{_size(limit.bytes)} ({_size(max(limit.bytes - before.bytes, 0))} free)",
                                source=source, fix="delete runs or collections you no longer need (nothing "
                                                   "was stored), or ask the operator to raise NDCG_LAB_QUOTA_BYTES")

    # -- collections -------------------------------------------------------------------

    def has_collection(self, name: str) -> bool:
        with self._read() as cur:
            return self._exists(cur, name)

    def collections(self) -> list[CollectionInfo]:
        """Every collection with its runs, read in one snapshot: the shared ones first (in their
        order, this workspace's copy in place of the original), then this workspace's, oldest first."""
        if self._listing is not None:
            return list(self._listing)
        with self._read() as cur:
            own = self._own_infos(cur)
            hidden = self._hidden(cur)
        by_name = {c.name: c for c in own}
        listed = []
        for info in self._base_listing():
            if info.name in by_name:
                listed.append(by_name.pop(info.name))
            elif info.name not in hidden:
                listed.append(replace(info, shared=True))
        listed += [c for c in own if c.name in by_name]
        if self._conn.db_read_only and self._base is None:
            self._listing = listed  # a read-only file: nothing in this process can change it
        return list(listed)

    def _own_infos(self, cur) -> list[CollectionInfo]:
        rows = cur.execute("""
            SELECT c.id, c.name, c.baseline, c.created,
                   (SELECT count(*) FROM topics t WHERE t.collection_id = c.id),
                   (SELECT count(*) FROM docs d WHERE d.collection_id = c.id)
            FROM collections c ORDER BY c.id""").fetchall()
        stored = {}
        for role in ("qrels", "proxy", "run"):
            for info, cid in tables.infos(cur, role=role):
                stored.setdefault((cid, role), []).append(info)
        return [CollectionInfo(name=name, qrels=stored[cid, "qrels"][0], proxy=stored.get((cid, "proxy"), [None])[0],
                               n_runs=len(stored.get((cid, "run"), ())), baseline=baseline, created=tables.utc(created),
                               n_topics=n_topics, n_docs=n_docs, runs=tuple(stored.get((cid, "run"), ())))
                for cid, name, baseline, created, n_topics, n_docs in rows]

    @_writes
    def create_collection(self, name: str, qrels, *, proxy=None, topics: pd.DataFrame | None = None,
                          docs: pd.DataFrame | None = None) -> str:
        """Create a collection around its qrels; MetricsError if the name is taken."""
        name = tables.clean_name(name, "collection")
        qrels = tables.as_qrels(qrels)
        proxy = None if proxy is None else tables.as_qrels(proxy)
        topics_table = None if topics is None else tables.extra_table("topics", topics)
        docs_table = None if docs is None else tables.extra_table("docs", docs)
        with self._write(qrels.source) as cur:
            if self._exists(cur, name):
                raise MetricsError(f"a collection named {name!r} already exists",
                                   fix="choose another name, or delete that collection first")
            tables.create_collection(cur, name, qrels, proxy, topics_table, docs_table)
        return name

    @_writes
    def replace_collection(self, name: str, qrels, *, proxy=None, topics: pd.DataFrame | None = None,
                           docs: pd.DataFrame | None = None, runs=(), baseline: str | None = None,
                           keep_added: bool = True) -> list[RunInfo]:
        """Delete and recreate collection ``name`` (created if absent) in one transaction.

        The new collection holds ``qrels``, ``proxy``, ``topics``, ``docs`` and ``runs`` (named
        as they are; a taken name gets " (2)"). With ``keep_added``, the runs of the old
        collection whose content is not among ``runs`` are linked again under their names, and
        the old proxy judgments, if any, stay in place of ``proxy``. The baseline is
        ``baseline``, else the old one if its run is still there. Other threads see the old
        collection or the new one, never neither. Returns the runs kept from the old collection.
        """
        name = tables.clean_name(name, "collection")
        qrels = tables.as_qrels(qrels)
        proxy = None if proxy is None else tables.as_qrels(proxy)
        runs = [tables.as_run(r) for r in runs]
        topics_table = None if topics is None else tables.extra_table("topics", topics)
        docs_table = None if docs is None else tables.extra_table("docs", docs)
        with self._write(qrels.source) as cur:
            return self._replace(cur, name, qrels, proxy, topics_table, docs_table, runs, baseline, keep_added)

    @_writes
    def restore_shared(self, name: str) -> list[RunInfo]:
        """Show the shared collection ``name`` as it is again (undo a delete, rename or change here).

        Runs this workspace added to its copy, and proxy judgments it set there, are kept: the
        copy then holds the shared content plus those. Without any, the copy goes and the shared
        collection shows through. One transaction. Returns the runs kept.
        """
        info = self._base_info(name)
        if info is None:
            raise MetricsError(f"no shared collection named {name!r}",
                               fix=f"shared collections: {', '.join(repr(c.name) for c in self._base_listing())}"
                               if self._base_listing() else "this workspace has no shared collections")
        with self._write() as cur:
            cid = tables.collection_id(cur, name)
            shared_digests = {r.digest for r in info.runs}
            if cid is not None:
                added = [link for link in tables.links(cur, cid, "run") if link[4] not in shared_digests]
                proxy = tables.links(cur, cid, "proxy")
                if added or (proxy and proxy[0][4] != info.proxy_digest):
                    base = self._base
                    topics, docs = base.load_topics(name), base.load_docs(name)
                    return self._replace(
                        cur, name, base.load_qrels(name), base.load_proxy(name),
                        tables.extra_table("topics", topics) if len(topics) else None,
                        tables.extra_table("docs", docs) if len(docs) else None,
                        [base.load_run(name, r.name) for r in info.runs], info.baseline, True)
                tables.collect_garbage(cur, tables.drop_collection(cur, cid))
            tables.unhide(cur, name)
            return []

    def _replace(self, cur, name, qrels, proxy, topics_table, docs_table, runs, baseline, keep_added):
        old_cid = tables.collection_id(cur, name)
        old_runs, old_proxy, old_baseline, released = [], [], None, []
        if old_cid is not None:
            old_runs, old_proxy = tables.links(cur, old_cid, "run"), tables.links(cur, old_cid, "proxy")
            old_baseline = tables.one(cur, "SELECT baseline FROM collections WHERE id = ?", [old_cid])[0]
            released = tables.drop_collection(cur, old_cid)
        keep_proxy = keep_added and bool(old_proxy)
        cid = tables.create_collection(cur, name, qrels, None if keep_proxy else proxy, topics_table, docs_table)
        if keep_proxy:
            object_id, proxy_name, source, added, _ = old_proxy[0]
            tables.link(cur, cid, "proxy", object_id, proxy_name, source, added=added)
        names, digests, kept = set(), set(), []
        for run in runs:
            if tables.digest(run) in digests:
                continue
            run_name = tables.unique_name(tables.clean_name(run.name, "run"), names)
            tables.link(cur, cid, "run", tables.store_object(cur, "run", run), run_name, run.source)
            names.add(run_name)
            digests.add(tables.digest(run))
        for object_id, run_name, source, added, digest in old_runs if keep_added else ():
            if digest in digests:
                continue
            run_name = tables.unique_name(run_name, names)
            tables.link(cur, cid, "run", object_id, run_name, source, added=added)
            names.add(run_name)
            digests.add(digest)
            kept.append(run_name)
        if baseline is not None and baseline not in names:
            raise tables.no_run(name, baseline)
        chosen = baseline if baseline is not None else (old_baseline if old_baseline in names else None)
        cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [chosen, cid])
        if self._schema >= 2:
            tables.unhide(cur, name)
        tables.collect_garbage(cur, released)
        return [info for info, _ in tables.infos(cur, role="run", collection_id=cid) if info.name in kept]

    @_writes
    def rename_collection(self, old: str, new: str) -> None:
        new = tables.clean_name(new, "collection")
        with self._write() as cur:
            cid = self._find(cur, old)
            if new == old:
                return
            if self._exists(cur, new):
                raise MetricsError(f"a collection named {new!r} already exists", fix="choose another name")
            if cid is None:
                self._copy_shared(cur, old, as_name=new)
            else:
                cur.execute("UPDATE collections SET name = ? WHERE id = ?", [new, cid])
            if self._base_info(old) is not None:
                tables.hide(cur, old)

    @_writes
    def delete_collection(self, name: str) -> None:
        """Delete a collection, its topics and docs, and every run or qrels no other collection links.
        A shared collection is hidden from this workspace (:meth:`restore_shared` shows it again)."""
        with self._write() as cur:
            cid = self._find(cur, name)
            if cid is not None:
                tables.collect_garbage(cur, tables.drop_collection(cur, cid))
            if self._base_info(name) is not None:
                tables.hide(cur, name)

    @_writes
    def set_qrels(self, collection: str, qrels) -> None:
        qrels = tables.as_qrels(qrels)
        with self._write(qrels.source) as cur:
            self._replace_judgments(cur, self._own(cur, collection), "qrels", qrels)

    @_writes
    def set_proxy(self, collection: str, proxy) -> None:
        """Set (or with None, remove) the collection's proxy judgments, used for ``inferred``."""
        proxy = None if proxy is None else tables.as_qrels(proxy)
        with self._write(None if proxy is None else proxy.source) as cur:
            self._replace_judgments(cur, self._own(cur, collection), "proxy", proxy)

    @_writes
    def set_topics(self, collection: str, topics: pd.DataFrame | None) -> None:
        """Replace the topics (columns qid and text, or PyTerrier's qid and query); None clears them."""
        self._replace_extra("topics", collection, topics)

    @_writes
    def set_docs(self, collection: str, docs: pd.DataFrame | None) -> None:
        """Replace the document metadata (columns docno and title); None clears it."""
        self._replace_extra("docs", collection, docs)

    def load_qrels(self, collection: str) -> io.Qrels:
        with self._read() as cur:
            cid = self._find(cur, collection)
            return self._base.load_qrels(collection) if cid is None else tables.load_judgments(cur, cid, "qrels")

    def load_proxy(self, collection: str) -> io.Qrels | None:
        with self._read() as cur:
            cid = self._find(cur, collection)
            return self._base.load_proxy(collection) if cid is None else tables.load_judgments(cur, cid, "proxy")

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
            cid = self._find(cur, collection)
            if cid is None:
                return self._base.runs(collection)
            return [info for info, _ in tables.infos(cur, role="run", collection_id=cid)]

    @_writes
    def add_run(self, collection: str, run, name: str | None = None, *, recipe=None) -> RunInfo:
        """Store a run (a parsed Run, or anything ``metrics.io.read_run`` reads) in a collection.

        ``recipe``: how a fused run was made (a ``Recipe`` or its ``to_dict()``), kept with the
        content and returned as ``RunInfo.recipe``.

        The name defaults to the run's; a name already taken gets " (2)", " (3)", ...
        A run whose content (digest) the collection already holds is not added
        again: its existing entry is returned. Over the quota, :class:`QuotaExceeded`
        is raised before a line is written.
        """
        run = tables.as_run(run)
        name = tables.clean_name(run.name if name is None else name, "run")
        with self._write(run.source) as cur:
            cid = self._own(cur, collection)
            existing = tables.linked(cur, cid, "run", "run", tables.digest(run))
            if existing is not None:
                return existing
            if self.quota.limited:
                used = self._usage(cur)
                new = tables.stored_id(cur, "run", tables.digest(run)) is None
                size = tables.data_bytes("run", tables.conform(run.table, io.RUN_SCHEMA, run.source)) if new else 0
                self._check_quota(used, Usage(used.bytes + size, used.runs + 1), run.source)
            name = tables.unique_name(name, tables.run_names(cur, cid))
            if recipe is not None and not isinstance(recipe, Mapping):
                recipe = recipe.to_dict()
            tables.link(cur, cid, "run", tables.store_object(cur, "run", run, recipe), name, run.source)
            return tables.infos(cur, role="run", collection_id=cid, name=name)[0][0]

    def load_run(self, collection: str, name: str, *, digest: str | None = None) -> io.Run:
        """The stored run, rows in file order, as an Arrow-backed Run (no per-row Python).

        With ``digest``, the run must still hold that content (a page that listed it may be
        reading after another tab replaced it): MetricsError otherwise, never other rows.
        """
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._base.load_run(collection, name, digest=digest)
            info = tables.infos(cur, role="run", collection_id=cid, name=name)
            if not info:
                raise tables.no_run(collection, name)
            if digest is not None and info[0][0].digest != digest:
                raise _changed(name, collection)
            return tables.load_run(cur, cid, name)

    def load_ranked(self, collection: str, name: str, *, digest: str | None = None, qrels_digest: str | None = None,
                    inferred: bool = False, proxy_digest: str | None = None, judged_only: bool = False) -> Ranked:
        """The stored run ordered and joined with the collection's qrels: what
        ``metrics.evaluate_ranked`` and ``metrics.curve_ranked`` take.

        Equal to ``metrics.ranking.rank(load_run(...), load_qrels(...), inferred=load_proxy(...)
        if inferred, name=name)`` (``.condensed()`` with ``judged_only``), array for array. The
        first call builds it and keeps it in the ranked cache (:mod:`.ranked`, keyed by the content
        digests, within the byte quota); later calls, in any process, memory-map it. A read-only
        workspace reads the cache and never writes it. ``digest``, ``qrels_digest`` and
        ``proxy_digest`` (with ``inferred``): the content the caller listed, as in :meth:`load_run`;
        MetricsError if the run or the judgments hold other content now, never other arrays.
        """
        expected_proxy = proxy_digest
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._base.load_ranked(collection, name, digest=digest, qrels_digest=qrels_digest,
                                              inferred=inferred, proxy_digest=proxy_digest, judged_only=judged_only)
            info = tables.infos(cur, role="run", collection_id=cid, name=name)
            if not info:
                raise tables.no_run(collection, name)
            run_digest = info[0][0].digest
            if digest is not None and run_digest != digest:
                raise _changed(name, collection)
            expected_qrels, qrels_digest = qrels_digest, tables.links(cur, cid, "qrels")[0][4]
            proxy = tables.links(cur, cid, "proxy") if inferred else []
            proxy_digest = proxy[0][4] if proxy else None
            if (expected_qrels is not None and expected_qrels != qrels_digest) or \
                    (inferred and expected_proxy is not None and expected_proxy != proxy_digest):
                raise _judgments_changed(collection)
        ranked = None if self._cache is None else self._cache.load(run_digest, qrels_digest, proxy_digest, name)
        if ranked is None:
            run = self.load_run(collection, name, digest=run_digest)
            qrels = self.load_qrels(collection)
            judgments = self.load_proxy(collection) if proxy_digest else None
            if qrels.digest != qrels_digest or (judgments is not None and judgments.digest != proxy_digest):
                raise _judgments_changed(collection)
            ranked = rank(run, qrels, inferred=judgments, name=name)
            if self._cache is not None and self._cache.writable and self._cache_fits(ranked):
                self._cache.save(ranked, run_digest, qrels_digest, proxy_digest)
        return ranked.condensed() if judged_only else ranked

    def _cache_fits(self, ranked: Ranked) -> bool:
        """Whether the cache files of ``ranked`` fit in what the byte quota leaves free."""
        if self.quota.bytes is None:
            return True
        needed = ranked.docno.nbytes + 8 * len(ranked.score) + 64 * (ranked.n_queries + 1) + (1 << 16)
        return self.usage().bytes + self._cache.size() + needed <= self.quota.bytes

    def _tidy_cache(self) -> None:
        """Remove cache files no (run, qrels, proxy) of this workspace names any more, and the
        oldest ones while the cache takes more than the byte quota leaves free."""
        if self._cache is None or not self._cache.writable:
            return
        with self._read() as cur:
            live = tables.ranked_keys(cur)
            budget = None if self.quota.bytes is None else max(self.quota.bytes - self._usage(cur).bytes, 0)
        self._cache.prune(live, budget)

    @_writes
    def rename_run(self, collection: str, old: str, new: str) -> None:
        new = tables.clean_name(new, "run")
        with self._write() as cur:
            cid = self._own(cur, collection)
            link = tables.run_link(cur, cid, collection, old)
            if new == old:
                return
            if new in tables.run_names(cur, cid):
                raise MetricsError(f"collection {collection!r} already has a run named {new!r}",
                                   fix="choose another name, or delete or rename that run first")
            cur.execute("UPDATE links SET name = ? WHERE id = ?", [new, link])
            cur.execute("UPDATE collections SET baseline = ? WHERE id = ? AND baseline = ?", [new, cid, old])

    @_writes
    def delete_run(self, collection: str, name: str) -> None:
        """Remove a run from a collection (its rows too, once no collection links them)."""
        with self._write() as cur:
            cid = self._own(cur, collection)
            link = tables.run_link(cur, cid, collection, name)
            object_id = tables.one(cur, "SELECT object_id FROM links WHERE id = ?", [link])[0]
            cur.execute("DELETE FROM links WHERE id = ?", [link])
            cur.execute("UPDATE collections SET baseline = NULL WHERE id = ? AND baseline = ?", [cid, name])
            tables.collect_garbage(cur, [object_id])

    @_writes
    def set_baseline(self, collection: str, name: str | None) -> None:
        """Mark one run of the collection as the baseline of its comparisons (None: no baseline)."""
        with self._write() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                if name is not None and name not in {r.name for r in self._base_info(collection).runs}:
                    raise tables.no_run(collection, name)
                if name == self._base_info(collection).baseline:
                    return  # the shared collection already says so: no copy needed
                cid = self._own(cur, collection)
            if name is not None:
                tables.run_link(cur, cid, collection, name)
            cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [name, cid])

    def baseline(self, collection: str) -> str | None:
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._base.baseline(collection)
            return tables.one(cur, "SELECT baseline FROM collections WHERE id = ?", [cid])[0]

    def stats(self) -> dict[str, int]:
        """Row counts of this file's tables (what the workspace holds, for display and tests)."""
        with self._read() as cur:
            return {t: tables.one(cur, f"SELECT count(*) FROM {t}")[0]
                    for t in ("collections", "links", "objects", "run_lines", "qrels_lines", "topics", "docs")}

    # -- steps inside a write transaction ----------------------------------------------

    def _replace_judgments(self, cur, cid: int, role: str, qrels) -> None:
        if qrels is not None and tables.linked(cur, cid, role, "qrels", tables.digest(qrels)) is not None:
            return
        old = [r[0] for r in cur.execute("SELECT object_id FROM links WHERE collection_id = ? AND role = ?",
                                         [cid, role]).fetchall()]
        cur.execute("DELETE FROM links WHERE collection_id = ? AND role = ?", [cid, role])
        if qrels is not None:
            tables.link(cur, cid, role, tables.store_object(cur, "qrels", qrels), qrels.name, qrels.source)
        tables.collect_garbage(cur, old)

    def _replace_extra(self, what: str, collection: str, frame: pd.DataFrame | None) -> None:
        table = None if frame is None else tables.extra_table(what, frame)
        with self._write() as cur:
            cid = self._own(cur, collection)
            cur.execute(f"DELETE FROM {what} WHERE collection_id = ?", [cid])
            if table is not None:
                tables.insert_extra(cur, what, cid, table)

    def _load_extra(self, what: str, collection: str) -> pd.DataFrame:
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._base._load_extra(what, collection)
            return tables.load_extra(cur, what, cid)


def _changed(name: str, collection: str) -> MetricsError:
    return MetricsError(f"run {name!r} of {collection!r} changed while it was being read",
                        fix="reload the page to see its new content")


def _judgments_changed(collection: str) -> MetricsError:
    return MetricsError(f"the judgments of {collection!r} changed while they were being read",
                        fix="reload the page to see the new ones")


def _size(n: int) -> str:
    for unit, scale in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"
