"""Shared mode end to end: a visitor who only reads makes nothing on the server; the first change
makes their workspace, puts its token in the address, and lands there.

A real `streamlit run app.py` with NDCG_LAB_MODE=shared and Chromium; the workspaces are counted
where the server keeps them (files under NDCG_LAB_HOME and rows of its registry).
"""
from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.helpers import LEGAL, RUNS_LABEL, TIMEOUT, TOKEN_IN_URL, go_to, main, runs_table, upload, variant_run
from tests.ui.test_shared_mode import made as workspaces_in


def test_reading_makes_no_workspace_and_the_first_upload_makes_one(app_server_factory, page, open_app,
                                                                   wait_for_app, tmp_path):
    server = app_server_factory(env={"NDCG_LAB_MODE": "shared"})
    open_app(page, f"{server.url}/learn?g=3,0,2,1")           # a shared Learn link, in a fresh context
    for name in ("Ideal order", "Reverse", "Shuffle"):
        page.get_by_role("button", name=name, exact=True).click()
        wait_for_app(page)
    page.get_by_role("link", name=re.compile("Gain: 2\\^rel")).click()    # a lesson
    wait_for_app(page)
    assert "lesson=gain" in page.url
    open_app(page, server.url)                                 # the first page, a new session
    go_to(page, wait_for_app, "Curves")
    assert not TOKEN_IN_URL.search(page.url)
    assert workspaces_in(server.home) == (0, 0)

    go_to(page, wait_for_app, "Data")
    upload(page, wait_for_app, RUNS_LABEL, [variant_run(LEGAL / "dense.run", tmp_path, "mine.run")])
    expect(main(page)).to_contain_text("Added run mine", timeout=TIMEOUT)
    page.wait_for_url(TOKEN_IN_URL, timeout=TIMEOUT)
    token = TOKEN_IN_URL.search(page.url).group(1)
    assert workspaces_in(server.home) == (1, 1)

    page.reload(wait_until="domcontentloaded")                 # the address returns to the workspace
    wait_for_app(page)
    assert TOKEN_IN_URL.search(page.url).group(1) == token
    expect(runs_table(page)).to_contain_text("mine", timeout=TIMEOUT)
    expect(main(page)).to_contain_text(re.compile(r"Runs in legal \(5\)"), timeout=TIMEOUT)
    assert workspaces_in(server.home) == (1, 1)
