"""Shared mode end to end: a real `streamlit run app.py` with NDCG_LAB_MODE=shared and Chromium.

Each Playwright context is one visitor. The tests try to break the isolation (listing, guessed
tokens), write through a read-only link, run script through a run name, smuggle a formula into
the CSV export and upload malformed files from the hostile corpus.
"""
from __future__ import annotations

import re
import secrets
from pathlib import Path

import pandas as pd
from playwright.sync_api import expect

from tests.e2e.helpers import (
    LEADERBOARD,
    RUNS_LABEL,
    TIMEOUT,
    TOKEN_IN_URL,
    arrive,
    arrive_with_run,
    go_to,
    main,
    open_app,
    runs_table,
    sidebar,
    text_of,
    upload,
    wait_for_app,
    workspace_links,
)
from tests.hostile_corpus import CASES

XSS = "<img src=x onerror=alert(1)>"
FORMULA = '=HYPERLINK("http://example.com","click")'
LINK = "[link](http://example.com)"
# Malformed runs of the corpus, each rejected with a message that names the file and the line.
# (A browser sends only the part of a file name after its last "/", so the corpus' link-named file
# cannot arrive whole; the link as a run name is tested through the rename form.)
HOSTILE = ["five_columns.run", "score_word.run", "duplicate_doc.run", "nul_byte.run", "crlf_mix.run",
           f"{XSS}.run", "latin1.run", "score_nan.run"]


def test_b_never_sees_as_uploads_by_listing_or_by_a_guessed_token(shared_app_server, visitor, tmp_path):
    a, b = visitor(), visitor()
    token_a = arrive_with_run(a, shared_app_server, tmp_path, "secret_alpha.run", "dense.run")
    expect(main(a)).to_contain_text("Added run secret_alpha", timeout=TIMEOUT)

    token_b = arrive(b, shared_app_server)
    assert token_b != token_a
    go_to(b, wait_for_app, "Data")
    expect(main(b)).to_contain_text("Runs in legal (4)", timeout=TIMEOUT)
    assert "secret_alpha" not in b.content()

    # a reload of B's address returns to B's workspace, not A's and not a new one
    b.reload(wait_until="domcontentloaded")
    wait_for_app(b)
    assert TOKEN_IN_URL.search(b.url).group(1) == token_b
    assert "secret_alpha" not in b.content()

    flipped = token_a[:-1] + ("A" if token_a[-1] != "A" else "B")
    for guess in (secrets.token_urlsafe(24), flipped, token_a[:-2], token_a.lower(), "../" + token_a):
        open_app(b, f"{shared_app_server}/?ws={guess}")
        expect(main(b)).to_contain_text("no workspace has this link", timeout=TIMEOUT)
        assert "secret_alpha" not in b.content()
        assert not sidebar(b).locator('[data-testid="stSelectbox"]').count()

    # A still has it, through its own link
    open_app(a, f"{shared_app_server}/data?ws={token_a}")
    expect(runs_table(a)).to_contain_text("secret_alpha", timeout=TIMEOUT)


def test_the_read_only_link_shows_everything_and_refuses_writes(shared_app_server, visitor, tmp_path):
    owner, teacher = visitor(), visitor()
    arrive_with_run(owner, shared_app_server, tmp_path, "lecture.run")
    edit_link, view_link = workspace_links(owner)
    assert TOKEN_IN_URL.search(edit_link).group(1) == TOKEN_IN_URL.search(owner.url).group(1)
    view_token = TOKEN_IN_URL.search(view_link).group(1)
    assert view_token not in edit_link

    open_app(teacher, f"{shared_app_server}/data?ws={view_token}")
    expect(main(teacher)).to_contain_text("read-only link", timeout=TIMEOUT)
    expect(main(teacher)).to_contain_text("lecture", timeout=TIMEOUT)
    expect(main(teacher).get_by_role("button", name="Reload the legal sample")).to_be_disabled()
    uploader = main(teacher).locator('[data-testid="stFileUploader"]').filter(has_text=RUNS_LABEL)
    expect(uploader.locator('input[type="file"]')).to_be_disabled()
    for form_button in ("Rename", "Delete", "Set baseline"):
        expect(main(teacher).get_by_role("button", name=form_button, exact=True)).to_be_disabled()
    expect(sidebar(teacher).locator('[data-testid="stSelectbox"]').filter(has_text="Baseline")
           .get_by_role("combobox")).to_be_disabled()
    go_to(teacher, wait_for_app, "Leaderboard")
    expect(main(teacher)).to_contain_text("lecture", timeout=TIMEOUT)


def test_a_script_run_name_fires_no_dialog_on_any_page(shared_app_server, visitor, tmp_path):
    page = visitor()
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    arrive_with_run(page, shared_app_server, tmp_path, f"{XSS}.run", "dense.run")
    expect(main(page)).to_contain_text(f"Added run {XSS}", timeout=TIMEOUT)
    expect(runs_table(page)).to_contain_text(XSS)      # shown as text, letter for letter
    for title in ("Leaderboard", "Curves", "Compare"):
        sidebar(page).locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).first.click()
        wait_for_app(page)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        if title == "Leaderboard":   # the table is HTML: the name must be its text, letter for letter
            expect(main(page).locator(LEADERBOARD).locator("tbody th").filter(has_text=XSS)).to_have_count(1)
            assert page.locator("img[src='x']").count() == 0
        if title == "Curves":
            main(page).locator(".js-plotly-plot").first.hover()   # hover labels hold the run names
    page.wait_for_timeout(500)
    assert dialogs == []
    assert page.locator("img[src='x']").count() == 0


def rename_first_run(page, new: str) -> None:
    """Data page: rename the first run of the collection (the form's default choice) to ``new``."""
    form = main(page).locator('[data-testid="stForm"]').filter(has_text="New name")
    form.get_by_label("New name").fill(new)
    form.get_by_role("button", name="Rename").click()
    wait_for_app(page)
    message = main(page).locator('[data-testid="stAlert"]').filter(has_text="Renamed")
    expect(message).to_have_count(1, timeout=TIMEOUT)
    assert new in text_of(message)


def test_a_link_run_name_stays_text_in_the_table_and_the_lint_report(shared_app_server, visitor):
    page = visitor()
    arrive(page, shared_app_server)
    go_to(page, wait_for_app, "Data")
    rename_first_run(page, LINK)
    assert LINK in text_of(runs_table(page))
    lint = main(page).locator('[data-testid="stExpander"]').filter(has_text="finding(s)").first
    assert re.search(rf"\n{re.escape(LINK)}: \d+ finding\(s\)", text_of(lint))
    for title in ("Data", "Leaderboard", "Compare"):
        sidebar(page).locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).first.click()
        wait_for_app(page)
        assert LINK in text_of(main(page)), title
        links = page.locator('a[href^="http://example.com"]')
        where = [links.nth(i).evaluate("a => a.parentElement.outerHTML.slice(0, 300)") for i in range(links.count())]
        assert not where, (title, where)


def test_a_formula_run_name_is_neutralised_in_the_csv_export(shared_app_server, visitor, tmp_path):
    page = visitor()
    arrive(page, shared_app_server)
    go_to(page, wait_for_app, "Data")
    rename_first_run(page, FORMULA)
    go_to(page, wait_for_app, "Leaderboard")
    with page.expect_download() as download:
        main(page).get_by_role("button", name="Export CSV").click()
    text = Path(download.value.path()).read_text()
    table = pd.read_csv(pd.io.common.StringIO(text), comment="#", index_col=0)
    assert "'" + FORMULA in list(table.index)
    assert not any(str(system).startswith(("=", "+", "-", "@")) for system in table.index)


def test_malformed_uploads_each_name_the_file_and_line_and_earlier_data_stays(shared_app_server, visitor, tmp_path):
    cases = {c.name: c for c in CASES}
    page = visitor()
    arrive_with_run(page, shared_app_server, tmp_path, "kept.run", "dense.run")
    expect(main(page)).to_contain_text("Runs in legal (5)", timeout=TIMEOUT)
    payloads = [{"name": name, "mimeType": "application/octet-stream", "buffer": cases[name].data}
                for name in HOSTILE]   # payloads: a name may hold "/", which no file on disk can
    upload(page, wait_for_app, RUNS_LABEL, payloads)
    alerts = main(page).locator('[data-testid="stAlert"]')
    for name in HOSTILE:
        case = cases[name]
        expect(alerts.filter(has_text=name)).to_have_count(1, timeout=TIMEOUT)
        shown = [text for text in (t.removeprefix("block").strip() for t in alerts.all_inner_texts())
                 if text.startswith(f"{name} line {case.line}:")]
        assert len(shown) == 1, (name, alerts.all_inner_texts())
        assert case.message.lower() in shown[0].lower()
    expect(main(page)).to_contain_text("Runs in legal (5)")
    expect(runs_table(page)).to_contain_text("kept.run")
    expect(page.locator('[data-testid="stException"]')).to_have_count(0)
