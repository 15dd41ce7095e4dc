"""Room on the workspace's disk: checked before a change, given back after a delete.

DuckDB keeps a transaction in its write-ahead log (``<file>.wal``) and folds the log into the file
at a checkpoint, by default once the log passes 16 MB. Left to that, every stored run sits on disk
twice at the checkpoint (the log, then the file's new blocks), a checkpoint on a nearly full disk
fails and invalidates the database, and a delete only adds to the log: nothing it frees reaches the
disk. So every change ends with a checkpoint (:meth:`Space._settle`): the log stays empty between
changes, the rows a delete removes become free blocks of the file, which later stores reuse and
which :func:`check_room` counts as room, and DuckDB cuts free blocks off the end of the file.

A delete that leaves at least a quarter of the file free compacts it when the disk has room for
the copy: the live rows are copied into ``<file>.compact`` (``COPY FROM DATABASE``: tables,
sequences and their counters), which replaces the file once no operation of this process uses the
connection. A process killed during the copy leaves a ``.compact`` file that the next opening
removes; the original is replaced only by a finished copy (``os.replace``).
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb

from .host import Host
from .records import DISK_RESERVE, DiskFull

COMPACT_SHARE = 4
"""A delete compacts the file when at least 1/COMPACT_SHARE of it is free blocks."""


def compact_path(path: Path) -> Path:
    """Where the compacted copy of workspace file ``path`` is written before it replaces it."""
    return Path(f"{path}.compact")


def file_blocks(cur) -> tuple[int, int]:
    """(bytes of the database file, bytes of its free blocks) of the cursor's database."""
    row = cur.execute("SELECT block_size, total_blocks, free_blocks FROM pragma_database_size() "
                      "WHERE database_name = current_database()").fetchone()
    if row is None:
        return 0, 0
    block, total, free = (int(v) for v in row)
    return block * total, block * free


def check_room(path, needed: int = 0, in_file: int = 0) -> None:
    """:class:`DiskFull` unless the filesystem of workspace file ``path`` keeps its reserve
    (min(:data:`DISK_RESERVE`, size / 20)) free, and a change of ``needed`` bytes fits in what is
    free on the disk and in ``in_file`` bytes of free blocks of the file. DuckDB writes the rows of
    a large insert (a row group, 122,880 lines, or more) straight into the file, into its free
    blocks first; a smaller one passes through the write-ahead log, which the reserve holds. The
    message names no server path; deleting stays possible (:func:`metrics.store.records.writes`
    checks nothing for a delete)."""
    if not isinstance(path, Path):
        return                                   # an in-memory workspace
    try:
        usage = shutil.disk_usage(path.parent)
    except OSError:
        return
    reserve = min(DISK_RESERVE, usage.total // 20)
    if usage.free < reserve or usage.free + in_file < needed + reserve:
        raise DiskFull(f"the server's disk is full ({usage.free / 1e6:,.1f} MB free): nothing was stored",
                       fix="delete runs or collections you no longer need (deleting works), or ask the operator "
                           "to free space on the server; no restart is needed")


class Space(Host):
    """Part of :class:`metrics.store.Workspace` (see the module)."""

    def _check_room(self, needed: int = 0) -> None:
        """:func:`check_room` for a change of ``needed`` bytes, counting the file's free blocks."""
        if not isinstance(self.path, Path):
            return
        with self._conn.cursor() as cur:
            _, free = file_blocks(cur)
        check_room(self.path, needed, free)

    def _settle(self, deleted: bool) -> None:
        """After a change: a checkpoint, and after a delete the compaction (see the module)."""
        if not isinstance(self.path, Path):
            return
        with self._lock:
            with self._conn.cursor() as cur:
                try:
                    cur.execute("CHECKPOINT")
                except duckdb.TransactionException:
                    return                       # another thread's transaction is open: the next change folds it
                size, free = file_blocks(cur)
                if not deleted or free * COMPACT_SHARE < size or free == 0:
                    return
                try:
                    room = shutil.disk_usage(self.path.parent)
                except OSError:
                    return
                if room.free < size - free + min(DISK_RESERVE, room.total // 20):
                    return                       # no room for the copy: the free blocks serve later stores
                copy = compact_path(self.path)
                remove_copy(copy)
                try:
                    database = cur.execute("SELECT current_database()").fetchone()[0]
                    cur.execute("ATTACH ? AS ndcg_lab_compacted", [str(copy)])
                    try:
                        cur.execute(f'COPY FROM DATABASE "{database}" TO ndcg_lab_compacted')
                        cur.execute("CHECKPOINT ndcg_lab_compacted")
                    finally:
                        cur.execute("DETACH ndcg_lab_compacted")
                except Exception:   # noqa: BLE001 - compaction is an optimisation: the file stays as it is
                    remove_copy(copy)
                    return
            if not self._conn.replace_file(copy):
                remove_copy(copy)


def remove_copy(copy: Path) -> None:
    """A compacted copy (and its log) that will not replace the file."""
    for path in (copy, Path(f"{copy}.wal")):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
