"""Ranked caches shared between the workspaces of a shared-mode server: one file per content (named by
its digests), hard-linked into every workspace that stores the same run against the same qrels, its
arrays mapped and expanded once per process; and the DuckDB connection closed after a bulk read, so
that its buffer pool gives back the blocks it read."""
from __future__ import annotations

import numpy as np
import pytest

from metrics import io, settings
from metrics.ranking import rank
from metrics.store import WorkspaceRegistry
from metrics.store import cached as cached_module
from metrics.store import workspace as workspace_module
from metrics.store.workspace import cache_folder

from .test_ranked import FIELDS, assert_same, files  # noqa: F401  (fixtures)


@pytest.fixture
def registry(tmp_path):
    config = settings.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(tmp_path / "home")})
    made = WorkspaceRegistry(config)
    yield made
    made.close()


def stored(registry, files, name: str):  # noqa: F811
    run, qrels, _ = files
    ws = registry.create().workspace
    ws.create_collection("c", io.read_qrels(qrels))
    ws.add_run("c", io.read_run(run), name=name)
    return ws


def inodes(ws) -> dict[str, int]:
    folder = cache_folder(ws.path)
    return {p.name: p.stat().st_ino for p in folder.iterdir()} if folder.exists() else {}


def test_two_workspaces_with_the_same_content_share_one_file_and_one_set_of_arrays(registry, files, monkeypatch):  # noqa: F811
    run, qrels, _ = files
    first, second = stored(registry, files, "bm25"), stored(registry, files, "mine")
    built = first.load_ranked("c", "bm25")
    monkeypatch.setattr(cached_module, "rank", lambda *a, **k: pytest.fail("built again, not shared"))
    shared = second.load_ranked("c", "mine")
    assert inodes(second) == inodes(first) and len(inodes(first)) == 2   # the same files, linked
    assert_same(shared, rank(io.read_run(run), io.read_qrels(qrels), name="mine"))   # its own name
    assert built.name == "bm25"
    for f in FIELDS:                    # one copy of every array in this process
        assert np.shares_memory(getattr(built, f), getattr(shared, f)), f


def test_a_store_file_goes_when_no_workspace_links_it(registry, files, tmp_path):  # noqa: F811
    first, second = stored(registry, files, "a"), stored(registry, files, "b")
    first.load_ranked("c", "a")
    second.load_ranked("c", "b")
    store = tmp_path / "home" / "shared" / "ranked"
    assert sorted(p.name for p in store.iterdir()) == sorted(inodes(first))
    first.delete_run("c", "a")          # the first workspace prunes its link; the second still links the files
    assert sorted(p.name for p in store.iterdir()) == sorted(inodes(second))
    second.delete_run("c", "b")         # no workspace links them now
    assert [p.name for p in store.iterdir()] == []


def test_a_bulk_read_closes_the_connection_and_a_small_one_keeps_it(registry, files, monkeypatch):  # noqa: F811
    ws = stored(registry, files, "a")
    ws.load_run("c", "a")
    assert ws.is_open                   # a few lines: the connection stays open
    monkeypatch.setattr(workspace_module, "RELEASE_ROWS", 1)
    ws.load_run("c", "a")
    assert not ws.is_open               # its buffer pool went with it; the next operation reopens
    assert [r.name for r in ws.runs("c")] == ["a"]
