"""The SQLite registry shared by processes, and the token hash it keys."""
from __future__ import annotations

import hashlib
import sqlite3
import threading

import pytest

from metrics import settings
from metrics.store import Registry, WorkspaceRegistry, token_hash

SCHEMA = "CREATE TABLE IF NOT EXISTS counter (id INTEGER PRIMARY KEY, n INTEGER NOT NULL);"


def test_token_hash_is_sha256_hex_and_what_the_workspaces_registry_keeps(tmp_path):
    assert token_hash("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"  # FIPS 180-2
    assert token_hash("abc") == hashlib.sha256(b"abc").hexdigest()
    manager = WorkspaceRegistry(settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path)}))
    try:
        access = manager.create()
        with sqlite3.connect(tmp_path / "shared" / "registry.sqlite3") as db:
            stored = {row[0] for row in db.execute("SELECT hash FROM tokens")}
    finally:
        manager.close()
    assert stored == {token_hash(access.token), token_hash(access.view_token)}


def test_two_connections_writing_at_once_lose_no_update(tmp_path):
    """Two registries on one file (two connections, as two processes would hold), each adding 1
    a hundred times by read-then-write: BEGIN IMMEDIATE makes each pair one turn, so 2 x 100 = 200."""
    path = tmp_path / "registry.sqlite3"
    first, second = Registry(path, SCHEMA), Registry(path, SCHEMA)
    with first.write() as db:
        db.execute("INSERT INTO counter VALUES (1, 0)")
    start = threading.Barrier(2)

    def add(registry: Registry) -> None:
        start.wait()
        for _ in range(100):
            with registry.write() as db:
                (n,), = db.execute("SELECT n FROM counter WHERE id = 1").fetchall()
                db.execute("UPDATE counter SET n = ? WHERE id = 1", [n + 1])

    threads = [threading.Thread(target=add, args=(r,)) for r in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert first.rows("SELECT n FROM counter WHERE id = ?", [1]) == [(200,)]
        assert second.rows("SELECT n FROM counter") == [(200,)]
    finally:
        first.close()
        second.close()


def test_a_write_that_raises_is_rolled_back_and_close_reopens(tmp_path):
    registry = Registry(tmp_path / "sub" / "registry.sqlite3", SCHEMA)
    with registry.write() as db:
        db.execute("INSERT INTO counter VALUES (1, 5)")
    with pytest.raises(ValueError), registry.write() as db:
        db.execute("UPDATE counter SET n = 6 WHERE id = 1")
        db.execute("INSERT INTO counter VALUES (2, 0)")
        raise ValueError("abandoned")
    assert registry.rows("SELECT id, n FROM counter") == [(1, 5)]
    registry.close()
    assert registry.rows("SELECT n FROM counter") == [(5,)]  # opened again on use
    registry.close()
