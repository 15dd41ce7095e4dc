"""axe-core (WCAG 2.1 A and AA) on every page and every state a visitor reaches, in Chromium.

Each of the app's pages on the legal sample, at a desktop's width and a phone's (390 px), then the
states behind them: a lesson, an exercise answered wrongly (its hint shown), a class task's
teacher, team and projector pages, the course page on an instructor's link, a live check, a
read-only link and the message of a malformed upload; a student's states on a phone too. Every expander
is opened before axe runs, so what it holds is checked too. A test fails on any violation of impact
serious or critical and lists each by rule and node (tests/e2e/axe.py).
"""
from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import expect

from metrics.analysis import lessons
from metrics.store.live import LiveChecks
from metrics.tasks import TaskDefinition
from metrics.tasks import course as course_module
from ndcg_lab.app import PAGES
from tests.e2e import axe
from tests.e2e.helpers import (
    LEGAL,
    PHONE,
    RUNS_LABEL,
    TIMEOUT,
    TOKEN_IN_URL,
    VIEWPORT,
    arrive,
    go_to,
    main,
    open_app,
    submit,
    upload,
    wait_for_app,
    workspace_links,
)
from tests.e2e.servers import public_server, tasks_of  # noqa: F401  (the fixture `server`)

CLOSED_EXPANDER_JS = """(root) => [...root.querySelectorAll('details > summary')].findIndex(
    s => !s.parentElement.open && !s.closest('[inert]') && s.offsetParent !== null)"""
SLUGS = [path.split("/")[-1].removesuffix(".py") for path, _, _ in PAGES]
SIZES = pytest.mark.parametrize("viewport", [VIEWPORT, PHONE], ids=["desktop", "phone"])


def open_expanders(page) -> None:
    """Open every closed expander of the main area a visitor can reach, one at a time (an opening
    may start a rerun that draws more); one inside an inert region (behind a dialog) is out of
    everyone's reach."""
    summaries = main(page).locator("details > summary")
    for _ in range(100):
        first = main(page).evaluate(CLOSED_EXPANDER_JS)
        if first < 0:
            return
        summaries.nth(first).click()
        wait_for_app(page)


def assert_accessible(page, where: str) -> None:
    """No serious or critical WCAG 2.1 A/AA violation on ``page`` as it is now, expanders opened."""
    open_expanders(page)
    found = axe.serious(page)
    for _ in range(2):
        # A page read in the middle of a rerun shows its stale elements faded, and the keyboard
        # helper marks a new scroll box a moment after it is drawn: a violation that is real stays
        # after the page has settled, a passing state does not.
        if not found:
            break
        wait_for_app(page)
        page.wait_for_timeout(1500)
        found = axe.serious(page)
    assert not found, axe.report(where, found)


@SIZES
@pytest.mark.parametrize("slug", SLUGS)
def test_every_page_on_the_sample_has_no_serious_violation(app_server, visitor, slug, viewport):
    page = visitor(viewport=viewport)
    open_app(page, f"{app_server}/{slug}")
    expect(main(page).locator("h2").first).to_be_visible(timeout=TIMEOUT)
    assert_accessible(page, f"/{slug}")
    # a Plotly chart's element mounts after its code loads, which can be after the script's run;
    # so wait for as many charts as data tables, then check no chart came without one
    alternatives = main(page).locator("summary").filter(has_text="Data of this chart").count()
    charts = main(page).locator('[data-testid="stPlotlyChart"]')
    expect(charts).to_have_count(alternatives, timeout=TIMEOUT)
    wait_for_app(page)
    assert charts.count() == main(page).locator("summary").filter(has_text="Data of this chart").count()


@SIZES
def test_a_lesson_and_an_exercise_with_its_hint(app_server, visitor, viewport):
    page = visitor(viewport=viewport)
    open_app(page, f"{app_server}/learn?lesson=discount")
    assert_accessible(page, "lesson discount")
    box = page.get_by_label("Your answer", exact=False).first
    box.fill("0.1")
    box.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Check my answer", exact=True).click()
    wait_for_app(page)
    expect(page.get_by_text("Not quite.")).to_have_count(1)
    assert_accessible(page, "lesson discount, a wrong answer")

    open_app(page, f"{app_server}/learn?g=0,0,3,2&k=4&gain=linear")
    page.get_by_role("button", name="Add to the set", exact=True).click()
    wait_for_app(page)
    link = page.locator('[data-testid="stCode"]').filter(has_text="?ex=").inner_text().strip()
    assert_accessible(page, "sandbox with an exercise set")
    open_app(page, link)
    assert_accessible(page, "an exercise link")


def test_a_class_task_teacher_team_and_projector(module_app_server, page, visitor):
    open_app(page, f"{module_app_server}/task")
    assert_accessible(page, "class task: creation form")
    main(page).get_by_role("button", name="Create the task").click()
    wait_for_app(page)
    expect(main(page)).to_contain_text("The task is created", timeout=TIMEOUT)
    codes = main(page).locator('[data-testid="stCode"]')
    # the links are built on the server's public address (NDCG_LAB_PUBLIC_URL), not this test's
    instructor, join_link, projector = (re.sub(r"^https?://[^/]+", module_app_server, codes.nth(i).inner_text().strip())
                                        for i in range(3))
    assert_accessible(page, "class task: created")

    team = visitor()
    open_app(team, join_link)
    assert_accessible(team, "class task: join page")
    main(team).get_by_label("Team name").fill("Alpha")
    main(team).get_by_role("button", name="Join").click()
    wait_for_app(team)
    expect(main(team)).to_contain_text("Welcome", timeout=TIMEOUT)
    submit(team, LEGAL / "dense.run")
    expect(main(team)).to_contain_text("scored on the public topics", timeout=TIMEOUT)
    assert_accessible(team, "class task: team page after a submission")

    for name, link in (("instructor", instructor), ("projector", projector)):
        open_app(page, link)
        assert_accessible(page, f"class task: {name} page")


def test_a_read_only_link_and_an_upload_error(shared_app_server, visitor, tmp_path):
    owner = visitor()
    arrive(owner, shared_app_server)
    go_to(owner, wait_for_app, "Data")
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 not-a-score tag\n")
    upload(owner, wait_for_app, RUNS_LABEL, [bad])
    expect(main(owner).locator('[data-testid="stAlert"]').filter(has_text="bad.run")).to_have_count(1)
    assert_accessible(owner, "Data with an upload error")

    _, view_link = workspace_links(owner)
    token = TOKEN_IN_URL.search(view_link).group(1)
    reader = visitor()
    open_app(reader, f"{shared_app_server}/data?ws={token}")
    expect(main(reader)).to_contain_text("read-only link", timeout=TIMEOUT)
    assert_accessible(reader, "a read-only link (Data)")
    go_to(reader, wait_for_app, "Leaderboard")
    assert_accessible(reader, "a read-only link (Leaderboard)")


def test_a_live_check_on_a_phone_the_teachers_page_and_the_projector(server, visitor):
    ex = lessons.from_spec({"kind": "number", "question": "What is nDCG@4 of this list?", "grades": [0, 2, 1, 2],
                            "cutoff": 4, "gain": "linear"})
    check, key = LiveChecks(server.home).open(lessons.encode([ex]), minutes=30)
    phone = visitor(viewport=PHONE)
    open_app(phone, f"{server.url}/learn?live={check.code}")
    expect(main(phone).get_by_label("Your answer")).to_be_visible(timeout=TIMEOUT)
    assert_accessible(phone, "live check: a student's phone")
    main(phone).get_by_label("Your answer").fill("0.5")
    main(phone).get_by_label("Your answer").press("Enter")
    wait_for_app(phone)
    main(phone).get_by_role("button", name="Send my answer").click()
    wait_for_app(phone)
    expect(main(phone)).to_contain_text("Answer sent", timeout=TIMEOUT)
    assert_accessible(phone, "live check: an answer sent")
    teacher = visitor()
    open_app(teacher, f"{server.url}/learn?live={check.code}&key={key}")
    expect(main(teacher)).to_contain_text("1 answer", timeout=TIMEOUT)
    assert_accessible(teacher, "live check: the teacher's page")
    main(teacher).get_by_role("button", name="Reveal the answer").click()
    wait_for_app(teacher)
    assert_accessible(teacher, "live check: the answer revealed")
    room = visitor(viewport={"width": 1920, "height": 1080})
    open_app(room, f"{server.url}/learn?live={check.code}&view=projector")
    expect(room.locator(".pj-tally, .pj-none").first).to_be_visible(timeout=TIMEOUT)
    assert_accessible(room, "live check: the projector")


@SIZES
def test_the_course_page_on_an_instructors_link(server, visitor, viewport):
    tasks = tasks_of(server)
    links = tasks.create(TaskDefinition(title="IR course", closes=time.time() + 3600, measures=("nDCG@10",), total=2),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt")
    course_module.set_items(tasks.open(links.instructor), [course_module.Item("lesson", "discount", ""),
                                                           course_module.Item("task", "", "")])
    teacher = visitor(viewport=viewport)
    open_app(teacher, f"{server.url}/course?course={links.tokens['instructor']}")
    expect(main(teacher).get_by_label("Or paste it")).to_be_visible(timeout=TIMEOUT)
    assert_accessible(teacher, "course: the instructor's page")
    main(teacher).get_by_label("Or paste it").fill("student id,name,team\ns1,Ada Lovelace,Red\ns2,Alan Turing,Blue\n")
    main(teacher).get_by_role("button", name="Load the class list").click()
    wait_for_app(teacher)
    expect(main(teacher)).to_contain_text("2 students in 2 teams", timeout=TIMEOUT)
    assert_accessible(teacher, "course: the instructor's page with a class list and its progress")
