"""The columnar cache of ranked runs: Arrow IPC files beside a workspace file, memory-mapped.

A :class:`metrics.ranking.Ranked` is what every measure reads. Building it from stored lines
means a sort and a hash join over every line (about a second for 7M lines); loading it from
here is a memory map and a few small arrays, so that a new session re-evaluates a stored run
after a change of gain, cutoff or measure without parsing, sorting or joining again.

Two files per stored run and judgments, in ``<workspace file>.cache/``, named by the sha256
of the content digests (never by a user's name):

- ``rows-<run>-<qrels>.arrow``: the run's documents in canonical order, restricted to the
  queries of the qrels: ``docno`` (string) and ``score`` (float64), one record batch.
  Loaded zero-copy from the memory map; measures never read them (explanations do).
- ``join-<run>-<qrels>-<proxy|none>.arrow``: everything a measure reads, one row of list
  columns: ``qids``, ``offsets``, the labelled rows (``labelled``: their positions in the rows
  file, ``rel``, ``inferred``), ``ideal_offsets``, ``ideal_rel`` and ``missing``. Small
  (one entry per query and per label), so it is checked whole: its metadata holds the sha256
  of its arrays, the digests it was built from, and the byte size and length of its rows file.

Shared between workspaces (``store``: one folder for every workspace of a server): a file named by
the same digests holds the same arrays whichever workspace built it, so a workspace that lacks one
takes the store's by a hard link into its own folder (the same inode: the page cache holds its pages
once, however many workspaces and sessions map it), and a file it writes is linked into the store.
Each workspace's folder stays what its quota and its pruning count; a store file no workspace links
any more (its link count is 1) is removed at the next prune. In one process a file's arrays are
mapped and expanded once (:func:`_shared_arrays`, keyed by the files' identity: device, inode, size
and modification time), whichever workspace or session asks: a rebuilt or replaced file is another key.

A file is trusted only when its footer, schema, digests, lengths and (join file) checksum
agree; anything else (a truncated write, a flipped byte in the join file, a rows file of
another length) is a miss, and the caller rebuilds. Per-query values come from the checked
join file alone, so a damaged rows file can change no number. Files are written to a
temporary name and moved into place with ``os.replace``, so another session or process
sees the old file, the new one or none, never half of one.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import secrets
import threading
import time
import weakref
from pathlib import Path

import numpy as np
import pyarrow as pa

from ..ranking import Ranked

__all__ = ["RankedCache", "file_key"]

VERSION = "1"
STALE_TEMP_SECONDS = 3600.0  # a temporary file older than this is left over from a killed writer

ROWS_SCHEMA = pa.schema([("docno", pa.string()), ("score", pa.float64())])
JOIN_SCHEMA = pa.schema([("qids", pa.list_(pa.string())), ("offsets", pa.list_(pa.int64())),
                         ("labelled", pa.list_(pa.int64())), ("rel", pa.list_(pa.int64())),
                         ("inferred", pa.list_(pa.bool_())), ("ideal_offsets", pa.list_(pa.int64())),
                         ("ideal_rel", pa.list_(pa.int64())), ("missing", pa.list_(pa.bool_()))])


def file_key(digest: str | None) -> str:
    """The part of a cache file name that stands for a content digest (any text: hashed)."""
    return "none" if digest is None else hashlib.sha256(digest.encode()).hexdigest()[:32]


def rows_name(run: str, qrels: str) -> str:
    return f"rows-{file_key(run)}-{file_key(qrels)}.arrow"


def join_name(run: str, qrels: str, proxy: str | None) -> str:
    return f"join-{file_key(run)}-{file_key(qrels)}-{file_key(proxy)}.arrow"


def _checksum(arrays) -> str:
    digest = hashlib.sha256()
    for array in arrays:
        data = np.ascontiguousarray(array)
        digest.update(str(data.dtype).encode() + len(data).to_bytes(8, "little"))
        digest.update(data.tobytes() if data.dtype != object else "\0".join(data).encode())
    return digest.hexdigest()


_SHARED: weakref.WeakValueDictionary[tuple, Ranked] = weakref.WeakValueDictionary()
_SHARED_GUARD = threading.Lock()


def _identity(path: Path) -> tuple | None:
    """What names a file's content in this process: (device, inode, size, modification time)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


class RankedCache:
    """The cache folder of one workspace file; ``writable`` False: read it, never write or remove.
    ``store``: the folder shared by the workspaces of a server (see the module), or None."""

    def __init__(self, folder: Path, *, writable: bool, store: Path | None = None) -> None:
        self.folder = Path(folder)
        self.writable = writable
        self.store = None if store is None else Path(store)

    # -- reading -----------------------------------------------------------------------

    def has(self, run: str, qrels: str, proxy: str | None) -> bool:
        """Whether the cache files of these digests exist (here or in the store)."""
        return self._located(join_name(run, qrels, proxy)).exists() and self._located(rows_name(run, qrels)).exists()

    def load(self, run: str, qrels: str, proxy: str | None, name: str) -> Ranked | None:
        """The cached Ranked of these digests, or None when absent or not to be trusted."""
        join_path = self._located(join_name(run, qrels, proxy))
        rows_path = self._located(rows_name(run, qrels))
        key = (_identity(join_path), _identity(rows_path), run, qrels, proxy)
        if key[0] is None or key[1] is None:
            return None
        with _SHARED_GUARD:
            shared = _SHARED.get(key)
        if shared is None:
            shared = self._read(join_path, rows_path, run, qrels, proxy)
            if shared is None:
                return None
            with _SHARED_GUARD:
                shared = _SHARED.setdefault(key, shared)
        # the same arrays under this caller's name; holding ``shared`` keeps it found while this lives
        return dataclasses.replace(shared, name=name, _cache={"arrays": shared})

    def _located(self, file_name: str) -> Path:
        """This folder's file, else the store's: linked into this folder when writable (so that the
        quota and pruning see it, and a prune of the store leaves it), read in place when not."""
        own = self.folder / file_name
        if self.store is None or own.exists():
            return own
        shared = self.store / file_name
        if not self.writable or not shared.exists():
            return shared if shared.exists() else own
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            _link(shared, own)
        except OSError:
            return shared   # another filesystem or a race with a prune: read it in place, or miss
        return own

    def _read(self, join_path: Path, rows_path: Path, run: str, qrels: str, proxy: str | None) -> Ranked | None:
        """The Ranked of the two files (named ``"ranked"``), or None when they are not to be trusted."""
        small = self._read_join(join_path, run, qrels, proxy)
        if small is None:
            return None
        rows = self._read_rows(rows_path, run, qrels, small["n_rows"], small["rows_bytes"])
        if rows is None:
            return None
        docno, score = rows
        n = small["n_rows"]
        labelled = small["labelled"]
        rel = np.zeros(n, dtype=np.int64)
        rel[labelled] = small["rel"]
        judged = np.zeros(n, dtype=bool)
        judged[labelled] = True
        inferred = np.zeros(n, dtype=bool)
        inferred[labelled] = small["inferred"]
        return Ranked(name="ranked", qids=small["qids"], offsets=small["offsets"], rel=rel, judged=judged,
                      inferred=inferred, score=score, docno=docno, ideal_offsets=small["ideal_offsets"],
                      ideal_rel=small["ideal_rel"], missing=small["missing"])

    def _open(self, path: Path, schema: pa.Schema) -> pa.RecordBatch | None:
        try:
            reader = pa.ipc.open_file(pa.memory_map(str(path), "r"))
            if reader.num_record_batches != 1 or not reader.schema.equals(schema):
                return None
            batch = reader.get_batch(0)
            batch.validate(full=schema is JOIN_SCHEMA)  # the small file whole, the rows file's structure
            return batch
        except (OSError, pa.ArrowException):
            return None  # absent, truncated or not Arrow

    def _read_join(self, path: Path, run: str, qrels: str, proxy: str | None) -> dict | None:
        batch = self._open(path, JOIN_SCHEMA)
        meta = {} if batch is None else {k.decode(): v.decode() for k, v in (batch.schema.metadata or {}).items()}
        if batch is None or batch.num_rows != 1 or meta.get("version") != VERSION or \
                (meta.get("run"), meta.get("qrels"), meta.get("proxy", "")) != (run, qrels, proxy or ""):
            return None
        try:
            out = {f: batch.column(f).values.to_numpy(zero_copy_only=False) for f in JOIN_SCHEMA.names}
            out["qids"] = np.asarray(out["qids"], dtype=object)
            arrays = [out[f] for f in JOIN_SCHEMA.names]
            if _checksum(arrays) != meta.get("checksum"):
                return None
            out["n_rows"], out["rows_bytes"] = int(meta["n_rows"]), int(meta["rows_bytes"])
        except (KeyError, ValueError, pa.ArrowException):
            return None
        offsets, ideal, labelled, nq = out["offsets"], out["ideal_offsets"], out["labelled"], len(out["qids"])
        consistent = (len(offsets) == nq + 1 and len(ideal) == nq + 1 and len(out["missing"]) == nq
                      and offsets[0] == 0 and offsets[-1] == out["n_rows"] and ideal[0] == 0
                      and ideal[-1] == len(out["ideal_rel"]) and np.all(np.diff(offsets) >= 0)
                      and np.all(np.diff(ideal) >= 0) and len(out["rel"]) == len(labelled) == len(out["inferred"])
                      and (len(labelled) == 0 or (labelled[0] >= 0 and labelled[-1] < out["n_rows"]
                                                  and np.all(np.diff(labelled) > 0))))
        return out if consistent else None

    def _read_rows(self, path: Path, run: str, qrels: str, n_rows: int, size: int):
        try:
            if path.stat().st_size != size:
                return None
        except OSError:
            return None
        batch = self._open(path, ROWS_SCHEMA)
        if batch is None or batch.num_rows != n_rows:
            return None
        meta = {k.decode(): v.decode() for k, v in (batch.schema.metadata or {}).items()}
        if (meta.get("version"), meta.get("run"), meta.get("qrels")) != (VERSION, run, qrels):
            return None
        docno, score = batch.column("docno"), batch.column("score")
        if docno.null_count or score.null_count:
            return None
        return docno, score.to_numpy()

    # -- writing -----------------------------------------------------------------------

    def save(self, ranked: Ranked, run: str, qrels: str, proxy: str | None) -> None:
        """Write the cache files of a Ranked built by :func:`metrics.ranking.rank` (not condensed)."""
        if not self.writable or ranked.judged_only:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        rows_path = self.folder / rows_name(run, qrels)
        n = len(ranked.rel)
        if self._read_rows(rows_path, run, qrels, n, _size(rows_path)) is None:
            docno = ranked.docno.combine_chunks() if isinstance(ranked.docno, pa.ChunkedArray) else ranked.docno
            table = pa.table({"docno": docno.cast(pa.string()), "score": pa.array(ranked.score, pa.float64())})
            self._write(rows_path, table.replace_schema_metadata({"version": VERSION, "run": run, "qrels": qrels}))
        labelled = np.flatnonzero(ranked.judged).astype(np.int64)
        arrays = {"qids": np.asarray(ranked.qids, dtype=object), "offsets": np.asarray(ranked.offsets, np.int64),
                  "labelled": labelled, "rel": np.asarray(ranked.rel[labelled], np.int64),
                  "inferred": np.asarray(ranked.inferred[labelled], bool),
                  "ideal_offsets": np.asarray(ranked.ideal_offsets, np.int64),
                  "ideal_rel": np.asarray(ranked.ideal_rel, np.int64), "missing": np.asarray(ranked.missing, bool)}
        meta = {"version": VERSION, "run": run, "qrels": qrels, "proxy": proxy or "", "n_rows": str(n),
                "rows_bytes": str(_size(rows_path)), "checksum": _checksum(list(arrays.values()))}
        columns = [pa.array([list(arrays["qids"])], JOIN_SCHEMA.field("qids").type)]
        columns += [pa.ListArray.from_arrays(pa.array([0, len(arrays[f])], pa.int32()),
                                             pa.array(arrays[f], JOIN_SCHEMA.field(f).type.value_type))
                    for f in JOIN_SCHEMA.names[1:]]
        table = pa.Table.from_arrays(columns, schema=JOIN_SCHEMA.with_metadata(meta))
        self._write(self.folder / join_name(run, qrels, proxy), table)

    def _write(self, path: Path, table: pa.Table) -> None:
        temp = self.folder / f".tmp-{secrets.token_hex(8)}.arrow"
        try:
            with pa.OSFile(str(temp), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
                writer.write_table(table, max_chunksize=max(table.num_rows, 1))
            os.replace(temp, path)
            if self.store is not None:
                self.store.mkdir(parents=True, exist_ok=True)
                _link(path, self.store / path.name)
        except OSError:
            pass  # a cache that cannot be written (or shared) is a cache miss next time, nothing more
        finally:
            _unlink(temp)

    # -- housekeeping ------------------------------------------------------------------

    def size(self) -> int:
        """Bytes of the cache files."""
        return sum(_size(p) for p in self._files())

    def _files(self) -> list[Path]:
        try:
            return [p for p in self.folder.iterdir() if p.suffix == ".arrow"]
        except OSError:
            return []

    def prune(self, live, budget: int | None = None) -> None:
        """Remove the files of no live (run, qrels, proxy) triple, leftovers of killed writers, and
        with ``budget`` (bytes) the oldest files until the rest fit in it."""
        if not self.writable:
            return
        keep = set()
        for run, qrels, proxy in live:
            keep.add(rows_name(run, qrels))
            keep.add(join_name(run, qrels, proxy))
        now = time.time()
        files = []
        for path in self._files():
            if path.name.startswith(".tmp-"):
                try:
                    if now - path.stat().st_mtime > STALE_TEMP_SECONDS:
                        _unlink(path)
                except OSError:
                    pass
            elif path.name not in keep:
                _unlink(path)
            else:
                files.append(path)
        if budget is not None:
            files.sort(key=lambda p: _mtime(p))
            total = sum(_size(p) for p in files)
            while files and total > budget:
                victim = files.pop(0)
                total -= _size(victim)
                _unlink(victim)
        self._prune_store()

    def _prune_store(self) -> None:
        """Remove the store's files that no workspace links any more (a link count of 1: the store's own).
        A workspace linking one at the same moment keeps its link (the inode lives on); the store
        then misses it once, and the next build shares it again."""
        if self.store is None:
            return
        try:
            entries = list(self.store.iterdir())
        except OSError:
            return
        for path in entries:
            try:
                if path.suffix == ".arrow" and path.stat().st_nlink <= 1:
                    _unlink(path)
            except OSError:
                pass


def _link(source: Path, target: Path) -> None:
    """A hard link ``target`` of ``source``, put in place whole (a temporary name, then ``os.replace``)."""
    temp = target.parent / f".tmp-{secrets.token_hex(8)}.arrow"
    try:
        os.link(source, temp)
        os.replace(temp, target)
    finally:
        _unlink(temp)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass  # gone already, or held (a platform that keeps mapped files): the next prune tries again
