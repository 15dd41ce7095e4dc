"""What a workspace lists and raises: the records of its collections, its quota and usage, its
errors, and :func:`writes`, the mark of a method that changes it (shared by the parts of
:class:`metrics.store.Workspace`)."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import datetime

from ..errors import MetricsError
from .tables import StoredInfo

RunInfo = StoredInfo
QrelsInfo = StoredInfo


class ReadOnlyWorkspace(MetricsError):
    """A change was asked of a workspace opened read-only; nothing was changed."""


class QuotaExceeded(MetricsError):
    """The change would take the workspace over its quota; nothing was written."""


class DiskFull(MetricsError):
    """The server's disk has too little room for the change; nothing was written."""


DISK_RESERVE = 64 * 10**6
"""Bytes kept free on the workspace's filesystem (at most a twentieth of it): DuckDB invalidates a
database whose write fails for lack of room, so a write that might fill the disk is refused first
(:func:`metrics.store.space.check_room`)."""


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


def writes(method):
    """Mark a method that changes the workspace: on a read-only one it raises before doing anything."""
    @functools.wraps(method)
    def guarded(self, *args, **kwargs):
        if self.read_only:
            raise ReadOnlyWorkspace("this workspace is open read-only; nothing was changed",
                                    fix="open it with its edit link to change it")
        deletes = method.__name__.startswith(("delete", "remove"))
        if not deletes:
            self._check_room()
        result = method(self, *args, **kwargs)
        self._tidy_cache()
        self._settle(deleted=deletes)   # the log folded into the file; a delete's room given back
        return result

    guarded.changes_workspace = True
    return guarded


def run_changed(name: str, collection: str) -> MetricsError:
    return MetricsError(f"run {name!r} of {collection!r} changed while it was being read",
                        fix="reload the page to see its new content")


def judgments_changed(collection: str) -> MetricsError:
    return MetricsError(f"the judgments of {collection!r} changed while they were being read",
                        fix="reload the page to see the new ones")

