"""Topics (qid, text) and document titles (docno, title) of a collection."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import tables, values
from .host import Host
from .records import writes

if TYPE_CHECKING:
    import pandas as pd


class Extras(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

    @writes
    def set_topics(self, collection: str, topics: pd.DataFrame | None) -> None:
        """Replace the topics (columns qid and text, or PyTerrier's qid and query); None clears them."""
        self._replace_extra("topics", collection, topics)

    @writes
    def set_docs(self, collection: str, docs: pd.DataFrame | None) -> None:
        """Replace the document metadata (columns docno and title); None clears it."""
        self._replace_extra("docs", collection, docs)

    def load_topics(self, collection: str) -> pd.DataFrame:
        """Topics in upload order: columns qid, text (empty when none were given)."""
        return self._load_extra("topics", collection)

    def load_docs(self, collection: str) -> pd.DataFrame:
        """Document metadata in upload order: columns docno, title (empty when none was given)."""
        return self._load_extra("docs", collection)

    def _replace_extra(self, what: str, collection: str, frame: pd.DataFrame | None) -> None:
        table = None if frame is None else values.extra_table(what, frame)
        with self._write() as cur:
            cid = self._own(cur, collection)
            cur.execute(f"DELETE FROM {what} WHERE collection_id = ?", [cid])
            if table is not None:
                tables.insert_extra(cur, what, cid, table)

    def _load_extra(self, what: str, collection: str) -> pd.DataFrame:
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._shared_base()._load_extra(what, collection)
            return tables.load_extra(cur, what, cid)
