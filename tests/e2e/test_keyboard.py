"""A student with the keyboard alone, in Chromium: no click, no mouse, only Tab, Shift+Tab, Enter,
Space and typing. They open a lesson from the Learn page's list, answer its first exercise, join a
class task and submit a run (the upload button opened with Enter; the file chosen in the browser's
file chooser, which is the operating system's dialog and not the page's).

Every step moves the focus with Tab until the element wanted has it, so a control the keyboard
cannot reach (no tab stop, or a trap before it) fails the test with what had the focus instead.
"""
from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from metrics.analysis import lessons
from metrics.tasks import TaskDefinition
from tests.e2e.helpers import LEGAL, TIMEOUT, main, open_app, wait_for_app
from tests.e2e.servers import public_server, tasks_of  # noqa: F401  (the fixture `server`)

TABS = 250
"""The most Tab presses a step may take: the sidebar's links and widgets come before the page's."""
FOCUSED_JS = """() => { const e = document.activeElement;
    return e ? [e.tagName, e.getAttribute('aria-label') || '', (e.innerText || e.value || '').trim().slice(0, 80),
                e.getAttribute('href') || ''] : null; }"""


def tab_to(page, matches: str, what: str) -> None:
    """Press Tab until the focused element satisfies the JS predicate ``matches`` (given the
    element); fail naming ``what`` and the elements the focus passed through."""
    passed = []
    for _ in range(TABS):
        page.keyboard.press("Tab")
        if page.evaluate(f"() => {{ const e = document.activeElement; return !!e && ({matches})(e); }}"):
            return
        passed.append(page.evaluate(FOCUSED_JS))
    pytest.fail(f"{what} not reached with {TABS} Tab presses; the focus went through {passed[-40:]}")


def by_text(text: str) -> str:
    return f"e => (e.innerText || '').trim() === {text!r}"


def by_label(label: str) -> str:
    return (f"e => (e.getAttribute('aria-label') || '').startsWith({label!r}) || "
            f"(e.labels && [...e.labels].some(l => l.innerText.trim().startsWith({label!r})))")


def test_a_student_does_a_lesson_and_submits_a_class_run_with_the_keyboard_alone(server, page):
    lesson = lessons.catalogue()["discount"]
    exercise = lesson.exercises[0]
    assert exercise.kind == "number"
    right = float(lessons.answer(exercise))

    open_app(page, f"{server.url}/learn")
    tab_to(page, "e => e.tagName === 'A' && (e.getAttribute('href') || '').includes('lesson=discount')",
           "the link to the discount lesson")
    page.keyboard.press("Enter")
    page.wait_for_url("**lesson=discount**", timeout=TIMEOUT)
    wait_for_app(page)
    expect(main(page)).to_contain_text(lesson.title, timeout=TIMEOUT)

    tab_to(page, by_label("Your answer"), "the answer box")
    page.keyboard.type(f"{right:.4f}")
    page.keyboard.press("Enter")
    wait_for_app(page)
    tab_to(page, by_text("Check my answer"), "the Check my answer button")
    page.keyboard.press("Space")
    wait_for_app(page)
    expect(page.get_by_text("Right.", exact=True)).to_have_count(1, timeout=TIMEOUT)

    tasks = tasks_of(server)
    links = tasks.create(TaskDefinition(title="Keyboard class", closes=time.time() + 3600, measures=("nDCG@10",),
                                        seed=3),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt")
    open_app(page, links.join)
    tab_to(page, by_label("Team name"), "the Team name box")
    page.keyboard.type("Keys")
    tab_to(page, by_text("Join"), "the Join button")
    page.keyboard.press("Enter")
    wait_for_app(page)
    expect(main(page)).to_contain_text("Welcome", timeout=TIMEOUT)

    # The team page's countdown redraws itself every few seconds; a redraw between the Tab and the
    # Enter may take the focus with it, so a student (and this test) tabs back and tries again.
    for attempt in range(5):
        wait_for_app(page)
        tab_to(page, "e => e.tagName === 'BUTTON' && !!e.closest('[data-testid=\"stFileUploaderDropzone\"]')",
               "the upload button of the submission form")
        focused = page.evaluate(FOCUSED_JS)
        try:
            with page.expect_file_chooser(timeout=10_000) as chooser:
                page.keyboard.press("Enter")
            break
        except Exception as exc:   # what had the focus, for the reader of a failure
            if attempt == 4:
                raise AssertionError(f"Enter on {focused} opened no file chooser") from exc
    chooser.value.set_files(str(LEGAL / "dense.run"))
    form = main(page).locator('[data-testid="stForm"]')
    expect(form.locator('[data-testid="stFileChipName"]')).to_have_count(1, timeout=TIMEOUT)
    expect(form.locator('[data-testid="stFileChipIconSpinner"]')).to_have_count(0, timeout=TIMEOUT)
    tab_to(page, by_text("Submit"), "the Submit button")
    page.keyboard.press("Enter")
    wait_for_app(page)
    expect(main(page)).to_contain_text("scored on the public topics", timeout=TIMEOUT)
