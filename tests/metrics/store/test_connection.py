"""metrics.store.connection: one-line errors when a workspace cannot be opened, and the counted
lock per database file."""
from __future__ import annotations

import duckdb

from metrics.store import connection


def test_open_errors_say_what_to_do():
    locked = connection.open_error(duckdb.IOException(
        'IO Error: Could not set lock on file "w.duckdb": Conflicting lock is held in python (PID 4242)\nmore'),
        "w.duckdb")
    assert isinstance(locked, connection.WorkspaceLocked)
    assert locked.problem == "the workspace is open in another process (PID 4242)" and locked.source == "w.duckdb"
    config = connection.open_error(duckdb.ConnectionException(
        "Connection Error: Can't open a connection to same database file with a different configuration"), "w")
    assert config.problem == "the workspace is open in this process already, read-only"
    other = connection.open_error(duckdb.IOException("IO Error: not a database\nsecond line"), "w")
    assert other.problem == "cannot open the workspace (IO Error: not a database)"
    assert "move it away" in other.fix


def test_first_line_of_an_error():
    assert connection.first_line(ValueError("  one\ntwo  ")) == "one"
    assert connection.first_line(ValueError("")) == "ValueError"


def test_file_locks_are_shared_per_file_and_counted():
    first = connection.file_lock("/tmp/a.duckdb")
    again = connection.file_lock("/tmp/a.duckdb")
    other = connection.file_lock("/tmp/b.duckdb")
    assert first is again and first is not other
    connection.release_file_lock("/tmp/a.duckdb")
    assert connection.file_lock("/tmp/a.duckdb") is first       # one holder was left
    for key in ("/tmp/a.duckdb", "/tmp/a.duckdb", "/tmp/b.duckdb"):
        connection.release_file_lock(key)
    assert connection.file_lock("/tmp/a.duckdb") is not first   # the last release dropped it
    connection.release_file_lock("/tmp/a.duckdb")


def test_a_compactions_leftover_is_removed_only_in_this_processs_turn(tmp_path):
    """A workspace opening removes a compaction's unfinished copy, but only in its turn on the file:
    another process holding the file (here: its lock file, held as another process holds it) may be
    writing that copy now."""
    import threading
    import time
    from pathlib import Path

    from metrics.store.space import compact_path
    from metrics.store.workspace import Workspace

    path = tmp_path / "workspace.duckdb"
    Workspace(path).close()
    connection.share_between_processes(tmp_path)
    try:
        other = connection.take_lock_file(path, time.monotonic() + 5)   # the other process's turn
        copy = compact_path(path)
        copy.write_bytes(b"the other process's copy, being written")
        opened = []
        opening = threading.Thread(target=lambda: opened.append(Workspace(path)))
        opening.start()
        want = Path(f"{path}.want")
        while not want.exists() and opening.is_alive():   # it waits for its turn, asking for it
            time.sleep(0.01)
        assert want.exists() and copy.exists()
        connection._give_turn(str(path), other)
        opening.join(30)
        assert not copy.exists() and len(opened) == 1
        opened[0].close()
    finally:
        connection._SHARED_FOLDERS.discard(tmp_path.resolve())
