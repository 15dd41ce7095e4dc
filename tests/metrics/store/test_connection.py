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
