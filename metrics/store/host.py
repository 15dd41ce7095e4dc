"""What the parts of :class:`metrics.store.Workspace` use of one another, declared for mypy.

Workspace is a facade over parts, one module each (:mod:`.collections`, :mod:`.runs`,
:mod:`.extras`, :mod:`.cached`, :mod:`.shared`, :mod:`.space`); a part calls methods and reads attributes that
the workspace or another part defines. Each part inherits :class:`Host`, so the type checker
sees those names, checks their uses, and checks that the definitions match the declarations.

Nothing here exists at run time: the attributes are bare annotations and the methods are
declared under ``TYPE_CHECKING``, so an attribute or method is looked up exactly as without it.
"""
from __future__ import annotations

import threading
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .. import io
    from .connection import Connection
    from .ranked import RankedCache
    from .records import CollectionInfo, Quota, Usage
    from .tables import Layout
    from .workspace import Workspace


class Host:
    """The workspace's attributes and the parts' methods that other parts call."""

    # set by Workspace.__init__
    path: Path | str
    read_only: bool
    quota: Quota
    _base: Workspace | None
    _cache: RankedCache | None
    _conn: Connection
    _schema: int
    _listing: list[CollectionInfo] | None
    _lock: threading.RLock

    if TYPE_CHECKING:
        # Workspace: its transactions (the cursor is DuckDB's, untyped here) and the file's layout
        @property
        def _layout(self) -> Layout: ...
        def _read(self) -> AbstractContextManager[Any]: ...
        def _write(self, source: str | None = None) -> AbstractContextManager[Any]: ...
        def _after_bulk_read(self, rows: int) -> None: ...

        # Collections
        def load_qrels(self, collection: str) -> io.Qrels: ...
        def load_proxy(self, collection: str) -> io.Qrels | None: ...

        # Runs
        def load_run(self, collection: str, name: str, *, digest: str | None = None) -> io.Run: ...

        # Cached
        def _prepare_ranked(self, collection: str, run: io.Run, digest: str) -> None: ...

        # Shared: the base, copy on write, the quota
        def usage(self) -> Usage: ...
        def _usage(self, cur: Any) -> Usage: ...
        def _check_quota(self, before: Usage, after: Usage, source: str | None) -> None: ...
        def _base_listing(self) -> list[CollectionInfo]: ...
        def _base_info(self, name: str) -> CollectionInfo | None: ...
        def _shared_base(self) -> Workspace: ...
        def _hidden(self, cur: Any) -> set[str]: ...
        def _exists(self, cur: Any, name: str) -> bool: ...
        def _find(self, cur: Any, name: str) -> int | None: ...
        def _own(self, cur: Any, name: str) -> int: ...
        def _copy_shared(self, cur: Any, name: str, as_name: str | None = None) -> int: ...

        # Space: room on the disk, checkpoints, compaction
        def _check_room(self, needed: int = 0) -> None: ...
        def _settle(self, deleted: bool) -> None: ...
