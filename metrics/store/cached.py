"""The ranked cache of a workspace: a stored run ordered and joined with its judgments.

Beside the file, ``<file>.cache/`` holds it (:mod:`.ranked`: memory-mapped Arrow files keyed by
content digests), so that :meth:`Cached.load_ranked` in a new process costs a map, not a sort and
a join. It is derived data: every write removes the files no collection's (run, qrels) names any
more, and the oldest ones while the cache takes more than the byte quota leaves free."""
from __future__ import annotations

from ..errors import MetricsError
from ..ranking import Ranked, rank
from . import tables, values
from .host import Host
from .records import DiskFull, judgments_changed, run_changed
from .space import check_room

PREPARED_ROWS = 20_000_000
"""Runs of at most this many lines get their ranked cache when stored (:meth:`Cached._prepare_ranked`);
a larger one is ranked on its first use, as before, so that storing it costs no more memory."""


class Cached(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

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
                return self._shared_base().load_ranked(
                    collection, name, digest=digest, qrels_digest=qrels_digest, inferred=inferred,
                    proxy_digest=proxy_digest, judged_only=judged_only)
            info = tables.infos(cur, role="run", collection_id=cid, name=name, layout=self._layout)
            if not info:
                raise values.no_run(collection, name)
            run_digest = info[0][0].digest
            if digest is not None and run_digest != digest:
                raise run_changed(name, collection)
            expected_qrels, qrels_digest = qrels_digest, tables.links(cur, cid, "qrels")[0][4]
            proxy = tables.links(cur, cid, "proxy") if inferred else []
            proxy_digest = proxy[0][4] if proxy else None
            if (expected_qrels is not None and expected_qrels != qrels_digest) or \
                    (inferred and expected_proxy is not None and expected_proxy != proxy_digest):
                raise judgments_changed(collection)
        ranked = None if self._cache is None else self._cache.load(run_digest, qrels_digest, proxy_digest, name)
        if ranked is None:
            run = self.load_run(collection, name, digest=run_digest)
            qrels = self.load_qrels(collection)
            judgments = self.load_proxy(collection) if proxy_digest else None
            if qrels.digest != qrels_digest or (judgments is not None and judgments.digest != proxy_digest):
                raise judgments_changed(collection)
            ranked = rank(run, qrels, inferred=judgments, name=name)
            del run
            if self._cache is not None and self._cache.writable and self._cache_fits(ranked):
                self._cache.save(ranked, run_digest, qrels_digest, proxy_digest)
                # the file just written, memory-mapped: the parsed run's columns are not held by the result
                ranked = self._cache.load(run_digest, qrels_digest, proxy_digest, name) or ranked
            self._after_bulk_read(len(ranked.score))   # the sort's and the join's scratch, given back
        return ranked.condensed() if judged_only else ranked

    def _prepare_ranked(self, collection: str, run, digest: str) -> None:
        """Build the ranked cache of ``run`` (parsed, just stored in ``collection`` as ``digest``)
        against the collection's qrels now, from the run in hand: the first page that shows it then
        maps the files instead of reading the run back and sorting it (two 7M-line runs: 3.4 s of
        the Leaderboard's first visit). Derived data, so nothing is done when the cache cannot be
        written, already holds it, or the collection has no qrels, and the stored run stands
        whatever happens here."""
        cache = self._cache
        if cache is None or not cache.writable or len(run.table) > PREPARED_ROWS:
            return
        with self._read() as cur:
            cid = self._find(cur, collection)
            qrels_links = tables.links(cur, cid, "qrels") if cid is not None else []
        if not qrels_links or cache.has(digest, qrels_links[0][4], None):
            return
        try:
            qrels = self.load_qrels(collection)
            if qrels.digest != qrels_links[0][4]:   # replaced meanwhile: the next page builds its own
                return
            ranked = rank(run, qrels)
            if self._cache_fits(ranked) and self._keeps_room(_cache_bytes(ranked)):
                cache.save(ranked, digest, qrels.digest, None)
            del ranked
        except (MetricsError, OSError):   # derived data: the first page that needs it builds it
            return
        finally:
            self._after_bulk_read(len(run.table))   # the sort's and the join's scratch, given back

    def _keeps_room(self, needed: int) -> bool:
        """Whether the disk keeps its reserve after ``needed`` bytes more (:func:`.space.check_room`):
        a cache written when a run is stored never takes the room the next store needs."""
        try:
            check_room(self.path, needed)
        except DiskFull:
            return False
        return True

    def _cache_fits(self, ranked: Ranked) -> bool:
        """Whether the cache files of ``ranked`` fit in what the byte quota leaves free."""
        if self.quota.bytes is None:
            return True
        needed = _cache_bytes(ranked)
        cache_bytes = 0 if self._cache is None else self._cache.size()
        return self.usage().bytes + cache_bytes + needed <= self.quota.bytes

    def _tidy_cache(self) -> None:
        """Remove cache files no (run, qrels, proxy) of this workspace names any more, and the
        oldest ones while the cache takes more than the byte quota leaves free."""
        if self._cache is None or not self._cache.writable:
            return
        with self._read() as cur:
            live = tables.ranked_keys(cur)
            budget = None if self.quota.bytes is None else max(self.quota.bytes - self._usage(cur).bytes, 0)
        self._cache.prune(live, budget)


def _cache_bytes(ranked: Ranked) -> int:
    """About what the cache files of ``ranked`` take: the docno text, a float and a few integers a row."""
    return ranked.docno.nbytes + 8 * len(ranked.score) + 64 * (ranked.n_queries + 1) + (1 << 16)
