"""The base (the shared collections beneath a workspace), copy on write, and the quota.

A workspace may have a *base*: a read-only workspace (the shared sample collections) whose
collections it shows beside its own. A change to a base collection first copies it into this
workspace, in the same transaction (:meth:`Shared._own`); deleting or renaming one hides it here.
The base never changes. A change that would take the workspace over its :class:`.Quota` raises
:class:`.QuotaExceeded` before its transaction commits."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import MetricsError
from ..settings import human_bytes
from . import tables, values
from .host import Host
from .records import CollectionInfo, QuotaExceeded, Usage

if TYPE_CHECKING:
    from .workspace import Workspace


class Shared(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

    def usage(self) -> Usage:
        """Data bytes and runs this workspace's file holds, copies of shared collections left out
        (what its quota bounds), and the bytes of its ranked cache."""
        with self._read() as cur:
            used = self._usage(cur)
        return replace(used, cache_bytes=0 if self._cache is None else self._cache.size())

    def _usage(self, cur) -> Usage:
        """What this file holds, less the copies of the base's collections in it (a quota bounds
        what a visitor added, not the shared samples they changed)."""
        total, runs = tables.usage(cur)
        if self._base is None:
            return Usage(total, runs)
        shared_bytes, shared_runs = tables.inherited(cur, self._base._parts())
        return Usage(total - shared_bytes, runs - shared_runs)

    def _parts(self) -> tables.Parts:
        """:func:`metrics.store.tables.parts` of this workspace, kept once read when it is read-only
        (the shared samples: nothing changes them)."""
        kept = self.__dict__.get("_kept_parts")
        if kept is not None:
            return kept
        with self._read() as cur:
            found = tables.parts(cur)
        if self.read_only:
            self._kept_parts = found
        return found

    def _check_quota(self, before: Usage, after: Usage, source: str | None) -> None:
        """Refuse a change that takes the workspace over a bound it did not already exceed."""
        limit = self.quota
        if limit.runs is not None and after.runs > limit.runs and after.runs > before.runs:
            raise QuotaExceeded(f"the workspace would hold {after.runs} runs, over its quota of {limit.runs}",
                                source=source, fix="delete runs you no longer need (nothing was stored), "
                                                   "or ask the operator to raise NDCG_LAB_QUOTA_RUNS")
        if limit.bytes is not None and after.bytes > limit.bytes and after.bytes > before.bytes:
            raise QuotaExceeded(f"the workspace would hold {human_bytes(after.bytes)} of data, over its quota of "
                                f"{human_bytes(limit.bytes)} ({human_bytes(max(limit.bytes - before.bytes, 0))} free)",
                                source=source, fix="delete runs or collections you no longer need (nothing "
                                                   "was stored), or ask the operator to raise NDCG_LAB_QUOTA_BYTES")

    def stats(self) -> dict[str, int]:
        """Row counts of this file's tables (what the workspace holds, for display and tests)."""
        with self._read() as cur:
            return {t: tables.row(cur, f"SELECT count(*) FROM {t}")[0]
                    for t in ("collections", "links", "objects", "run_lines", "qrels_lines", "topics", "docs")}

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

    def _shared_base(self) -> Workspace:
        """The base, for a collection :meth:`_find` said is shared (only a workspace with a base has one)."""
        if self._base is None:
            raise MetricsError("this workspace has no base, so no shared collections")
        return self._base

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
        base, info = self._shared_base(), self._base_info(name)
        if info is None:
            raise MetricsError(f"no shared collection named {name!r}")
        topics, docs = base.load_topics(name), base.load_docs(name)
        cid = tables.create_collection(
            cur, as_name or name, base.load_qrels(name), base.load_proxy(name),
            values.extra_table("topics", topics) if len(topics) else None,
            values.extra_table("docs", docs) if len(docs) else None, created=values.naive(info.created))
        for run in info.runs:
            stored = tables.store_object(cur, "run", base.load_run(name, run.name))
            tables.link(cur, cid, "run", stored, run.name, run.source, added=values.naive(run.uploaded))
        cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [info.baseline, cid])
        return cid

