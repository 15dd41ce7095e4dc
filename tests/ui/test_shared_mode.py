"""Shared mode in the app (AppTest): a visitor who only reads makes no workspace; the first change
makes a private workspace whose token goes in the URL; the token opens it again; a wrong token gets
a page of its own; a read-only link refuses writes."""
from __future__ import annotations

import sqlite3

import pytest

from metrics import store
from ndcg_lab.ui import state
from tests.conftest import assert_ok, baseline_box


@pytest.fixture
def shared(monkeypatch, tmp_path):
    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    return tmp_path / "home"


def visit(open_app, home, token=None, page=None):
    return open_app(page, home=home, query_params={"ws": token} if token else None)


def token_of(at) -> str | None:
    token = at.query_params.get("ws")
    return token[0] if isinstance(token, list) else token


def made(home) -> tuple[int, int]:
    """(workspace files, registry rows) a shared server keeps in ``home`` (its NDCG_LAB_HOME)."""
    files = len(list((home / "shared" / "workspaces").glob("*.duckdb")))
    registry = home / "shared" / "registry.sqlite3"
    if not registry.exists():
        return files, 0
    with sqlite3.connect(registry) as db:
        return files, db.execute("SELECT count(*) FROM workspaces").fetchone()[0]


def new_workspace() -> str:
    """A visitor's workspace (as their first change makes it): its token."""
    return state.manager().create().token


def test_a_visitor_who_only_reads_makes_no_workspace(open_app, shared):
    at = visit(open_app, shared)
    assert token_of(at) is None
    assert at.session_state["collection"] == "legal"           # the shared samples show through
    assert any("Nothing of yours is stored on this server yet" in c.value for c in at.sidebar.caption)
    for page in ("views/learn.py", "views/curves.py", "views/data.py"):
        at.switch_page(page).run()
        assert_ok(at)
    assert [r for r in at.table[0].value["name"]] == ["bm25 (baseline)", "bm25_ce", "bm25_qe", "dense"]
    assert not at.button(key="sample_legal").disabled and not at.file_uploader(key="runs_upload").disabled
    at.radio(key="gain").set_value("linear").run()              # a setting of the session is no change
    assert token_of(at) is None and made(shared) == (0, 0)


def test_the_first_change_makes_the_workspace_and_the_token_returns_to_it(open_app, shared):
    at = visit(open_app, shared, page="views/data.py")
    baseline_box(at).set_value("dense").run()  # a change: the stored baseline
    assert_ok(at)
    token = token_of(at)
    assert token and len(token) == 32                          # 192 bits, url-safe base64
    assert made(shared) == (1, 1)
    assert at.session_state["collection"] == "legal"
    at.switch_page("views/learn.py").run()
    assert token_of(at) == token and made(shared) == (1, 1)
    assert not any("Nothing of yours" in c.value for c in at.sidebar.caption)
    again = visit(open_app, shared, token, "views/data.py")
    assert_ok(again)
    assert [r for r in again.table[0].value["name"]] == ["bm25", "bm25_ce", "bm25_qe", "dense (baseline)"]
    other = visit(open_app, shared, page="views/data.py")          # another visitor: the samples as they are
    assert token_of(other) is None
    assert [r for r in other.table[0].value["name"]] == ["bm25 (baseline)", "bm25_ce", "bm25_qe", "dense"]


def test_a_wrong_token_gets_a_clear_page_and_no_data(open_app, shared):
    at = visit(open_app, shared, "A" * 32)
    assert_ok(at)
    assert any("no workspace has this link" in e.value for e in at.error)
    assert not at.sidebar.selectbox and not at.table and not at.html


def test_a_read_only_link_shows_everything_and_refuses_writes(open_app, shared):
    visit(open_app, shared)
    view = store.view_token_of(new_workspace())
    at = visit(open_app, shared, view, "views/data.py")
    assert_ok(at)
    assert any("read-only link" in i.value for i in at.info)
    assert at.button(key="sample_legal").disabled
    assert at.file_uploader(key="runs_upload").disabled
    assert len(at.table[0].value) == 4


def test_a_read_only_link_cannot_store_a_fused_run(open_app, shared):
    visit(open_app, shared)
    at = visit(open_app, shared, store.view_token_of(new_workspace()), "views/fusion.py")
    assert_ok(at)
    button = next(b for b in at.button if b.label == "Store the fused run in the workspace")
    assert button.disabled
