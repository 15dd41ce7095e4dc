"""Collections and their judgments: list, create, replace, rename, delete; qrels and proxy."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import io
from ..errors import MetricsError
from . import tables, values
from .host import Host
from .records import CollectionInfo, RunInfo, writes

if TYPE_CHECKING:
    import pandas as pd


class Collections(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

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
        stored: dict[tuple[int, str], list[Any]] = {}
        for role in ("qrels", "proxy", "run"):
            for info, cid in tables.infos(cur, role=role, layout=self._layout):
                stored.setdefault((cid, role), []).append(info)
        return [CollectionInfo(name=name, qrels=stored[cid, "qrels"][0], proxy=stored.get((cid, "proxy"), [None])[0],
                               n_runs=len(stored.get((cid, "run"), ())), baseline=baseline, created=values.utc(created),
                               n_topics=n_topics, n_docs=n_docs, runs=tuple(stored.get((cid, "run"), ())))
                for cid, name, baseline, created, n_topics, n_docs in rows]

    @writes
    def create_collection(self, name: str, qrels, *, proxy=None, topics: pd.DataFrame | None = None,
                          docs: pd.DataFrame | None = None) -> str:
        """Create a collection around its qrels; MetricsError if the name is taken."""
        name = values.clean_name(name, "collection")
        qrels = values.as_qrels(qrels)
        proxy = None if proxy is None else values.as_qrels(proxy)
        topics_table = None if topics is None else values.extra_table("topics", topics)
        docs_table = None if docs is None else values.extra_table("docs", docs)
        with self._write(qrels.source) as cur:
            if self._exists(cur, name):
                raise MetricsError(f"a collection named {name!r} already exists",
                                   fix="choose another name, or delete that collection first")
            tables.create_collection(cur, name, qrels, proxy, topics_table, docs_table)
        return name

    @writes
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
        name = values.clean_name(name, "collection")
        qrels = values.as_qrels(qrels)
        proxy = None if proxy is None else values.as_qrels(proxy)
        runs = [values.as_run(r) for r in runs]
        topics_table = None if topics is None else values.extra_table("topics", topics)
        docs_table = None if docs is None else values.extra_table("docs", docs)
        with self._write(qrels.source) as cur:
            return self._replace(cur, name, qrels, proxy, topics_table, docs_table, runs, baseline, keep_added)

    @writes
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
                    base = self._shared_base()
                    topics, docs = base.load_topics(name), base.load_docs(name)
                    return self._replace(
                        cur, name, base.load_qrels(name), base.load_proxy(name),
                        values.extra_table("topics", topics) if len(topics) else None,
                        values.extra_table("docs", docs) if len(docs) else None,
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
            if values.digest(run) in digests:
                continue
            run_name = values.unique_name(values.clean_name(run.name, "run"), names)
            tables.link(cur, cid, "run", tables.store_object(cur, "run", run), run_name, run.source)
            names.add(run_name)
            digests.add(values.digest(run))
        for object_id, run_name, source, added, digest in old_runs if keep_added else ():
            if digest in digests:
                continue
            run_name = values.unique_name(run_name, names)
            tables.link(cur, cid, "run", object_id, run_name, source, added=added)
            names.add(run_name)
            digests.add(digest)
            kept.append(run_name)
        if baseline is not None and baseline not in names:
            raise values.no_run(name, baseline)
        chosen = baseline if baseline is not None else (old_baseline if old_baseline in names else None)
        cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [chosen, cid])
        if self._schema >= 2:
            tables.unhide(cur, name)
        tables.collect_garbage(cur, released)
        return [info for info, _ in tables.infos(cur, role="run", collection_id=cid) if info.name in kept]

    @writes
    def rename_collection(self, old: str, new: str) -> None:
        new = values.clean_name(new, "collection")
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

    @writes
    def delete_collection(self, name: str) -> None:
        """Delete a collection, its topics and docs, and every run or qrels no other collection links.
        A shared collection is hidden from this workspace (:meth:`restore_shared` shows it again)."""
        with self._write() as cur:
            cid = self._find(cur, name)
            if cid is not None:
                tables.collect_garbage(cur, tables.drop_collection(cur, cid))
            if self._base_info(name) is not None:
                tables.hide(cur, name)

    @writes
    def set_qrels(self, collection: str, qrels) -> None:
        qrels = values.as_qrels(qrels)
        with self._write(qrels.source) as cur:
            self._replace_judgments(cur, self._own(cur, collection), "qrels", qrels)

    @writes
    def set_proxy(self, collection: str, proxy) -> None:
        """Set (or with None, remove) the collection's proxy judgments, used for ``inferred``."""
        proxy = None if proxy is None else values.as_qrels(proxy)
        with self._write(None if proxy is None else proxy.source) as cur:
            self._replace_judgments(cur, self._own(cur, collection), "proxy", proxy)

    def load_qrels(self, collection: str) -> io.Qrels:
        with self._read() as cur:
            cid = self._find(cur, collection)
            qrels = self._shared_base().load_qrels(collection) if cid is None \
                else tables.load_judgments(cur, cid, "qrels")
            if qrels is None:   # a collection is created with its qrels: a damaged file at most
                raise MetricsError(f"collection {collection!r} has no qrels", fix="replace its qrels")
            return qrels

    def load_proxy(self, collection: str) -> io.Qrels | None:
        with self._read() as cur:
            cid = self._find(cur, collection)
            return self._shared_base().load_proxy(collection) if cid is None \
                else tables.load_judgments(cur, cid, "proxy")

    def _replace_judgments(self, cur, cid: int, role: str, qrels) -> None:
        if qrels is not None and tables.linked(cur, cid, role, "qrels", values.digest(qrels)) is not None:
            return
        old = [r[0] for r in cur.execute("SELECT object_id FROM links WHERE collection_id = ? AND role = ?",
                                         [cid, role]).fetchall()]
        cur.execute("DELETE FROM links WHERE collection_id = ? AND role = ?", [cid, role])
        if qrels is not None:
            tables.link(cur, cid, role, tables.store_object(cur, "qrels", qrels), qrels.name, qrels.source)
        tables.collect_garbage(cur, old)
