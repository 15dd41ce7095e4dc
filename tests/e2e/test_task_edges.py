"""The rough edges of a class task, in Chromium, as a new user meets them: a team page opened
before the close and used after it, the same file chosen again, the status line and the
countdown, plain text in messages, groups and markers in the standings' LaTeX, a single-choice
final picker, the instructor's timeline, the message when no instructor key is set, and method
lines (a team's own at once, the others' only on the released standings).

Tasks are made and moved through the library (as a teacher's script would); everything checked
is read from the pages and downloads.
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from metrics.tasks import TaskDefinition, Tasks, views
from tests.e2e.helpers import LEGAL, TIMEOUT, choose_run, main, open_app, read_table, submit, wait_for_app
from tests.e2e.servers import public_server, tasks_of  # noqa: F401  (the fixture `server`)

pytestmark = pytest.mark.visitor(timezone="Europe/Paris")

ALERTS = '[data-testid="stAlert"]'
HOSTILE = "**Bold** <b>tag</b> [link](https://evil.example.org)"


def legal_task(tasks: Tasks, **options):
    fields = dict(title="Edges", closes=time.time() + 3600, measures=("nDCG@10", "AP"), public_fraction=0.3,
                  seed=3) | options
    return tasks.create(TaskDefinition(**fields), topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                        baselines=[("bm25", LEGAL / "bm25.run")])


def send(page, path: Path, method: str | None = None) -> str:
    """Choose and submit a run; the text of the page's messages after the answer."""
    submit(page, path, method)
    return " | ".join(main(page).locator(ALERTS).all_inner_texts())


def seen(text: str) -> str:
    """Text as a reader sees it: without the invisible word joiners that keep a link inert."""
    return text.replace("\u2060", "")


def caption_texts(page) -> str:
    return " | ".join(main(page).locator('[data-testid="stCaptionContainer"]').all_inner_texts())


def minutes_left(text: str) -> int:
    found = re.search(r"Closes in (?:(\d+) h )?(\d+) min", text)
    assert found, text
    return int(found.group(1) or 0) * 60 + int(found.group(2))


def test_a_team_page_opened_before_the_close_and_used_after_it_says_when_the_task_closed(server, visitor, tmp_path):
    tasks = tasks_of(server)
    links = legal_task(tasks, total=3)
    team = tasks.join(links.join, "Alpha")
    page = visitor()
    open_app(page, team)
    # the countdown: the minutes to the close, as the close set above gives them
    closes = tasks.open(links.instructor).snapshot().meta["closes"]
    shown = minutes_left(caption_texts(page))
    assert int((closes - time.time()) // 60) <= shown <= int((closes - time.time()) // 60) + 1
    assert "Status: open until" in caption_texts(page) and ", 3 left" in caption_texts(page)

    closes = time.time() + 10
    tasks.open(links.instructor).set_close(closes)
    open_app(page, team)                      # opened before the close ...
    choose_run(page, LEGAL / "dense.run", "dense, e5")
    time.sleep(max(0.0, closes - time.time()) + 1)
    main(page).get_by_role("button", name="Submit").click()   # ... used after it
    wait_for_app(page)
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(closes))
    expect(main(page).locator(ALERTS).first).to_contain_text(f"submission refused: the task closed at {when}",
                                                             timeout=TIMEOUT)
    expect(main(page).locator('[data-testid="stForm"]')).to_have_count(0)
    status = caption_texts(page)
    assert "Status: closed" in status and "opens now" not in status, status
    assert "Closed " in status and "no more submissions" in status
    expect(main(page).locator('[data-testid="stCaptionContainer"]').filter(has_text="Team Alpha")).to_have_text(
        "Team Alpha · submissions: 0 used")    # not "3 left"
    assert views.view(tasks.open(team)).submissions == ()   # nothing stored

    tasks.open(links.instructor).release()
    open_app(page, team)
    status = caption_texts(page)
    assert "Status: released" in status and "opens now" not in status, status


def test_the_same_file_is_taken_again_after_a_refusal_and_after_an_acceptance(server, visitor, tmp_path):
    tasks = tasks_of(server)
    links = legal_task(tasks, finals=1)
    page = visitor()
    open_app(page, tasks.join(links.join, "Alpha"))
    bad = tmp_path / "bad.run"
    bad.write_text("1 Q0 LEG-1 1 nan t\n")
    for _ in range(2):
        said = send(page, bad)
        assert "submission refused: the file is not a valid run" in said and "Choose a run file" not in said, said
    for sid in (2, 3):                         # the baseline is submission 1
        said = send(page, LEGAL / "dense.run")
        assert f"Submission {sid} (dense) scored on the public topics" in said, said

    # one final submission: a single choice, no "Select all"
    expect(main(page).locator('[data-testid="stMultiSelect"]')).to_have_count(0)
    picker = main(page).locator('[data-testid="stSelectbox"]').filter(has_text="Final submission")
    expect(picker).to_have_count(1)
    picker.scroll_into_view_if_needed()
    picker.get_by_role("combobox").click()
    options = page.get_by_role("option")
    expect(options.first).to_be_visible(timeout=TIMEOUT)
    assert options.all_inner_texts() == ["none: your latest", "#2 dense", "#3 dense"]
    assert page.get_by_text("Select all").count() == 0
    page.get_by_role("option", name="#2 dense").click()
    wait_for_app(page)
    main(page).get_by_role("button", name="Save the finals").click()
    wait_for_app(page)
    rows = read_table(main(page).locator('[data-testid="stTable"] table').first)
    assert {k: v["final"] for k, v in rows.items()} == {"2": "✓", "3": ""}


def test_method_lines_messages_standings_and_timeline_after_a_release(server, visitor):
    tasks = tasks_of(server)
    links = legal_task(tasks, title=HOSTILE)
    alpha_link, beta_link = tasks.join(links.join, "Alpha"), tasks.join(links.join, "Beta")
    tasks.open(alpha_link).submit((LEGAL / "bm25_qe.run").read_bytes(), "qe", "qe.run")
    tasks.open(beta_link).submit((LEGAL / "bm25_ce.run").read_bytes(), "ce", "ce.run", "Beta uses a cross-encoder")
    alpha, beta, teacher = visitor(), visitor(), visitor()
    open_app(alpha, alpha_link)
    mine = f"{HOSTILE} dense e5"
    said = send(alpha, LEGAL / "dense.run", mine)
    assert "Submission 4 (dense) scored" in said, said
    table = read_table(main(alpha).locator('[data-testid="stTable"] table').first)
    assert seen(table["4"]["method"]) == mine                      # its own line, as typed, at once
    assert "Beta uses a cross-encoder" not in main(alpha).inner_text() + alpha.content()

    # the instructor's timeline: Alpha's two points and Beta's single one, on a datetime axis
    open_app(teacher, links.instructor)
    chart = main(teacher).locator(".js-plotly-plot").filter(has=teacher.locator(".scatterlayer"))
    expect(chart).to_have_count(1)
    expect(chart.locator(".scatterlayer .trace")).to_have_count(2)
    expect(chart.locator(".scatterlayer path.point")).to_have_count(3)
    ticks = chart.locator(".xaxislayer-above .xtick text").all_text_contents()
    assert ticks and all(re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}", t) for t in ticks), ticks
    today = time.strftime("%Y-%m-%d", time.gmtime())
    assert any(t.startswith(today) for t in ticks), ticks

    tasks.open(links.instructor).close()
    tasks.open(links.instructor).release(qrels=True)
    open_app(teacher, links.instructor)
    with teacher.expect_download(timeout=TIMEOUT) as event:
        main(teacher).get_by_role("button", name="Final standings (LaTeX)").click()
    latex = Path(event.value.path()).read_text()
    rows = dict(re.findall(r"^(Alpha|Beta|baseline: bm25) \[([A-Z])\] & ", latex, re.MULTILINE))
    assert set(rows) == {"Alpha", "Beta", "baseline: bm25"}, latex
    assert re.search(r"^Beta \[[A-Z]\] & \\textbf\{[\d.]+\}\$\^\{\\blacktriangle\}\$", latex, re.MULTILINE), latex
    assert "% groups: " in latex and '% baseline: "bm25"' in latex

    # after the release: Beta sees Alpha's method line on the final standings, as plain text
    open_app(beta, beta_link)
    expect(main(beta).get_by_role("heading", name="Final standings")).to_be_visible(timeout=TIMEOUT)
    wait_for_app(beta)   # the heading is drawn before the table beneath it
    expect(main(beta).locator('[data-testid="stTable"]').first).to_be_visible(timeout=TIMEOUT)
    page_text = seen(main(beta).inner_text())
    assert mine in page_text and "Beta uses a cross-encoder" in page_text
    assert main(beta).locator('[data-testid="stTable"]').locator("b, strong, a").count() == 0
    assert "Status: released" in caption_texts(beta) and "opens now" not in caption_texts(beta)

    # a message with the task's (hostile) title in it: plain text, no markdown, nothing live
    open_app(alpha, alpha_link)
    main(alpha).get_by_role("button", name="Copy my runs and the released qrels into my workspace").click()
    wait_for_app(alpha)
    message = main(alpha).locator(ALERTS).filter(has_text="Added the collection").first
    expect(message).to_be_visible(timeout=TIMEOUT)
    text = seen(message.inner_text())
    assert text.startswith(f"Added the collection {HOSTILE}") and "to your workspace" in text, text
    assert message.locator("b, strong, a").count() == 0


def test_with_no_instructor_key_set_the_create_page_says_so_and_how_to_set_one(app_server_factory, visitor):
    server = app_server_factory(env={"NDCG_LAB_TASKS": "key", "NDCG_LAB_INSTRUCTOR_KEY": ""})
    page = visitor()
    open_app(page, f"{server.url}/task")
    warning = main(page).locator(ALERTS).first
    expect(warning).to_contain_text("No instructor key is set on this server", timeout=TIMEOUT)
    expect(warning).to_contain_text("NDCG_LAB_INSTRUCTOR_KEY is not set")
    expect(warning).to_contain_text("NDCG_LAB_INSTRUCTOR_KEY='a-long-random-phrase' ndcg-lab app")
    main(page).get_by_role("button", name="Create the task").click()
    wait_for_app(page)
    expect(main(page).locator(ALERTS).last).to_contain_text("no instructor key is set on this server")
