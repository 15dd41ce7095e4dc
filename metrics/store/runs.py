"""Runs of a collection: add, list, load, rename, delete, and the baseline."""
from __future__ import annotations

from collections.abc import Mapping

from .. import io
from ..errors import MetricsError
from . import tables, values
from .host import Host
from .records import RunInfo, Usage, run_changed, writes


class Runs(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

    def runs(self, collection: str) -> list[RunInfo]:
        """The collection's runs in the order they were added."""
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._shared_base().runs(collection)
            return [info for info, _ in tables.infos(cur, role="run", collection_id=cid, layout=self._layout)]

    @writes
    def add_run(self, collection: str, run, name: str | None = None, *, recipe=None) -> RunInfo:
        """Store a run (a parsed Run, or anything ``metrics.io.read_run`` reads) in a collection.

        ``recipe``: how a fused run was made (a ``Recipe`` or its ``to_dict()``), kept with the
        content and returned as ``RunInfo.recipe``.

        The name defaults to the run's; a name already taken gets " (2)", " (3)", ...
        A run whose content (digest) the collection already holds is not added
        again: its existing entry is returned. Over the quota, :class:`QuotaExceeded`
        is raised before a line is written.
        """
        run = values.as_run(run)
        self._check_room(run.table.nbytes)   # the lines (the log of a small insert is in the reserve)
        with self._write(run.source) as cur:
            info = self._add_run(cur, collection, run, name, recipe)
        self._prepare_ranked(collection, run, info.digest)
        return info

    @writes
    def add_runs(self, collection: str, runs) -> list[RunInfo]:
        """Store several runs (as :meth:`add_run`, each under its own name) in one transaction: all
        of them, or none when one would take the workspace over its quota or the disk is short."""
        runs = [values.as_run(run) for run in runs]
        self._check_room(sum(run.table.nbytes for run in runs))
        with self._write(", ".join(run.source for run in runs[:3]) + (", ..." if len(runs) > 3 else "")) as cur:
            infos = [self._add_run(cur, collection, run, None, None) for run in runs]
        for run, info in zip(runs, infos):
            self._prepare_ranked(collection, run, info.digest)
        return infos

    def _add_run(self, cur, collection: str, run, name: str | None, recipe) -> RunInfo:
        name = values.clean_name(run.name if name is None else name, "run")
        cid = self._own(cur, collection)
        existing = tables.linked(cur, cid, "run", "run", values.digest(run))
        if existing is not None:
            return existing
        if self.quota.limited:
            used = self._usage(cur)
            new = tables.stored_id(cur, "run", values.digest(run)) is None
            size = tables.data_bytes("run", values.conform(run.table, io.RUN_SCHEMA, run.source)) if new else 0
            self._check_quota(used, Usage(used.bytes + size, used.runs + 1), run.source)
        name = values.unique_name(name, tables.run_names(cur, cid))
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
                return self._shared_base().load_run(collection, name, digest=digest)
            info = tables.infos(cur, role="run", collection_id=cid, name=name, layout=self._layout)
            if not info:
                raise values.no_run(collection, name)
            if digest is not None and info[0][0].digest != digest:
                raise run_changed(name, collection)
            run = tables.load_run(cur, cid, name, self._layout)
            if run is None:   # found by infos in this snapshot, so never: a damaged file at most
                raise values.no_run(collection, name)
        self._after_bulk_read(run.table.num_rows)
        return run

    @writes
    def rename_run(self, collection: str, old: str, new: str) -> None:
        new = values.clean_name(new, "run")
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

    @writes
    def delete_run(self, collection: str, name: str) -> None:
        """Remove a run from a collection (its rows too, once no collection links them)."""
        with self._write() as cur:
            cid = self._own(cur, collection)
            link = tables.run_link(cur, cid, collection, name)
            object_id = tables.row(cur, "SELECT object_id FROM links WHERE id = ?", [link])[0]
            cur.execute("DELETE FROM links WHERE id = ?", [link])
            cur.execute("UPDATE collections SET baseline = NULL WHERE id = ? AND baseline = ?", [cid, name])
            tables.collect_garbage(cur, [object_id])

    @writes
    def set_baseline(self, collection: str, name: str | None) -> None:
        """Mark one run of the collection as the baseline of its comparisons (None: no baseline)."""
        with self._write() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                shared = self._base_info(collection)
                if shared is None:   # _find: no id here means a collection of the base
                    raise MetricsError(f"no shared collection named {collection!r}")
                if name is not None and name not in {r.name for r in shared.runs}:
                    raise values.no_run(collection, name)
                if name == shared.baseline:
                    return  # the shared collection already says so: no copy needed
                cid = self._own(cur, collection)
            if name is not None:
                tables.run_link(cur, cid, collection, name)
            cur.execute("UPDATE collections SET baseline = ? WHERE id = ?", [name, cid])

    def baseline(self, collection: str) -> str | None:
        with self._read() as cur:
            cid = self._find(cur, collection)
            if cid is None:
                return self._shared_base().baseline(collection)
            return tables.row(cur, "SELECT baseline FROM collections WHERE id = ?", [cid])[0]
