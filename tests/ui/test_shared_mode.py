"""Shared mode in the app (AppTest): a first visit makes a private workspace whose token goes in the
URL; the token opens it again; a wrong token gets a page of its own; a read-only link refuses writes."""
from __future__ import annotations

import pytest

from metrics import store
from tests.conftest import assert_ok


@pytest.fixture
def shared(monkeypatch, tmp_path):
    monkeypatch.setenv("NDCG_LAB_MODE", "shared")
    return tmp_path / "home"


def visit(open_app, home, token=None, page=None):
    return open_app(page, home=home, query_params={"ws": token} if token else None)


def test_a_first_visit_makes_a_workspace_and_the_token_returns_to_it(open_app, shared):
    first = visit(open_app, shared)
    token = first.query_params["ws"]
    token = token[0] if isinstance(token, list) else token
    assert len(token) == 32                                   # 192 bits, url-safe base64
    assert first.session_state["collection"] == "legal"       # the shared samples show through
    again = visit(open_app, shared, token, "views/data.py")
    assert_ok(again)
    assert [r for r in again.table[0].value["name"]] == ["bm25 (baseline)", "bm25_ce", "bm25_qe", "dense"]
    other = visit(open_app, shared)
    assert other.query_params["ws"] != first.query_params["ws"]


def test_a_wrong_token_gets_a_clear_page_and_no_data(open_app, shared):
    visit(open_app, shared)
    at = visit(open_app, shared, "A" * 32)
    assert_ok(at)
    assert any("no workspace has this link" in e.value for e in at.error)
    assert not at.sidebar.selectbox and not at.table


def test_a_read_only_link_shows_everything_and_refuses_writes(open_app, shared):
    owner = visit(open_app, shared)
    token = owner.query_params["ws"]
    token = token[0] if isinstance(token, list) else token
    view = store.view_token_of(token)
    at = visit(open_app, shared, view, "views/data.py")
    assert_ok(at)
    assert any("read-only link" in i.value for i in at.info)
    assert at.button(key="sample_legal").disabled
    assert at.file_uploader(key="runs_upload").disabled
    assert len(at.table[0].value) == 4


def test_a_read_only_link_cannot_store_a_fused_run(open_app, shared):
    owner = visit(open_app, shared)
    token = owner.query_params["ws"]
    token = token[0] if isinstance(token, list) else token
    at = visit(open_app, shared, store.view_token_of(token), "views/fusion.py")
    assert_ok(at)
    button = next(b for b in at.button if b.label == "Store the fused run in the workspace")
    assert button.disabled
