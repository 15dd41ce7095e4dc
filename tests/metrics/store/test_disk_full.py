"""A full disk, on a real 20 MB filesystem (tmpfs, mounted when the tests run as root; skipped
where mounting is not allowed): a write that would fill it is refused with a message that names no
server path, deleting still works, and the same open workspace stores again once there is room,
without a restart."""
from __future__ import annotations

import os
import subprocess

import pytest

from metrics import io
from metrics.errors import MetricsError
from metrics.store import Workspace
from metrics.store import cached as cached_module
from metrics.store.records import DiskFull

QRELS = b"".join(b"q%d 0 d%d 1\n" % (q, d) for q in range(20) for d in range(5))


def run_lines(tag: bytes, n: int) -> bytes:
    return b"".join(b"q%d Q0 doc%d-%s %d %d.5 %s\n" % (i % 20, i, tag, i // 20 + 1, n - i, tag) for i in range(n))


@pytest.fixture
def disk(tmp_path):
    folder = tmp_path / "disk"
    folder.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def fill(folder, leave: int) -> None:
    """Write a filler file until only ``leave`` bytes are free."""
    free = os.statvfs(folder).f_bavail * os.statvfs(folder).f_frsize
    with open(folder / "filler", "wb") as out:
        out.write(b"\0" * max(free - leave, 0))


def test_a_full_disk_refuses_a_write_keeps_deletes_and_recovers_without_restart(disk):
    ws = Workspace(disk / "w.duckdb")
    ws.create_collection("c", io.read_qrels(QRELS, source="q.txt"))
    ws.add_run("c", io.read_run(run_lines(b"a", 2000), name="a", source="a.run"))
    fill(disk, 300_000)

    with pytest.raises(MetricsError, match="the server's disk is full") as caught:
        ws.add_run("c", io.read_run(run_lines(b"b", 20_000), name="b", source="b.run"))
    assert str(disk) not in str(caught.value) and "no restart is needed" in str(caught.value)
    assert [r.name for r in ws.runs("c")] == ["a"]                   # the workspace is intact and readable
    assert ws.load_run("c", "a").table.num_rows == 2000

    ws.delete_run("c", "a")                                          # deleting works on a full disk
    assert ws.runs("c") == []

    (disk / "filler").unlink()                                       # room again: the same workspace stores
    ws.add_run("c", io.read_run(run_lines(b"b", 20_000), name="b", source="b.run"))
    assert [r.name for r in ws.runs("c")] == ["b"]
    ws.close()


def free_bytes(folder) -> int:
    stat = os.statvfs(folder)
    return stat.f_bavail * stat.f_frsize


def room(ws, folder) -> int:
    """Bytes free on the disk plus the free blocks of the workspace's file."""
    with ws._con.cursor() as cur:
        block, free = cur.execute("SELECT block_size, free_blocks FROM pragma_database_size()").fetchone()
    return free_bytes(folder) + block * free


ROW_GROUP = 122_880
"""DuckDB's row group: runs of this many lines fill whole row groups, whose blocks a delete frees
(a row group shared by several small runs is kept while any of them is)."""


def test_deleting_runs_on_a_full_disk_gives_the_space_back_and_the_same_workspace_stores_again(disk, monkeypatch):
    monkeypatch.setattr(cached_module, "PREPARED_ROWS", 0)   # the file's blocks alone: no ranked cache at store
    ws = Workspace(disk / "w.duckdb")
    ws.create_collection("c", io.read_qrels(QRELS, source="q.txt"))
    stored, refused = [], None
    for i in range(40):                                              # runs until the disk refuses one
        run = io.read_run(run_lines(b"r%d" % i, ROW_GROUP), name=f"r{i}", source=f"r{i}.run")
        try:
            ws.add_run("c", run)
        except DiskFull:
            refused = run
            break
        stored.append(run.name)
    assert refused is not None and len(stored) >= 3
    before = room(ws, disk)

    ws.delete_run("c", stored[0])
    ws.delete_run("c", stored[1])
    freed = room(ws, disk) - before
    # Two runs take at least their data bytes (tables.py's formula: 16 a line
    # beside the text), on the disk or as free blocks of the file that the next store reuses.
    assert freed > 2 * ROW_GROUP * 16, f"deleting two runs freed {freed:,} bytes"
    ws.add_run("c", refused)                                         # no restart: the same object stores
    assert [r.name for r in ws.runs("c")] == [*stored[2:], refused.name]
    assert ws.load_run("c", refused.name).table.num_rows == ROW_GROUP

    on_disk = free_bytes(disk)
    for name in stored[2:]:                                          # most of the file free: it is compacted
        ws.delete_run("c", name)
    assert free_bytes(disk) - on_disk > len(stored[2:]) * ROW_GROUP * 16
    assert not list(disk.glob("*.compact*")) and not (disk / "w.duckdb.wal").exists()
    assert [r.name for r in ws.runs("c")] == [refused.name]
    assert ws.load_run("c", refused.name).table.num_rows == ROW_GROUP
    ws.close()
    with Workspace(disk / "w.duckdb") as again:                      # and it all survives a reopening
        assert [r.name for r in again.runs("c")] == [refused.name]
        assert again.load_run("c", refused.name).table.num_rows == ROW_GROUP
