"""Lessons in a real browser: every lesson at a phone's width (no horizontal scroll, a screenshot
each for the README), a student completing a lesson, a teacher's exercise link answered in a
second browser, and a live check answered from ten browsers with the projector's histogram.
README screenshots (docs/screenshots/learn-*.png), taken only with NDCG_LAB_SCREENSHOTS=1 (a full-page
shot of each lesson costs seconds): ``NDCG_LAB_SCREENSHOTS=1 python -m pytest tests/e2e/test_lessons.py``."""
from __future__ import annotations

import os
import re
from math import log2
from urllib.parse import parse_qs, urlparse

from playwright.sync_api import expect

from metrics.analysis import lessons
from ndcg_lab.ui.exercise import NUMBER_LABEL
from tests.e2e.helpers import arrive, no_exception, screenshot_dir

PHONE = {"width": 390, "height": 844}
NO_SIDEWAYS_SCROLL = """() => [document.documentElement, document.querySelector('[data-testid="stMain"]')]
    .every(e => e.scrollWidth <= e.clientWidth + 1)"""


def _param(page, name):
    return parse_qs(urlparse(page.url).query).get(name, [None])[0]


def _button(page, name):
    return page.get_by_role("button", name=name, exact=True)


def _click(page, wait_for_app, *names):
    """Click the buttons ``names`` in turn, each followed by the rerun it starts."""
    for name in names:
        _button(page, name).click()
        wait_for_app(page)


def _type_answer(page, wait_for_app, text):
    box = page.get_by_label(NUMBER_LABEL)
    box.fill(text)
    box.press("Enter")
    wait_for_app(page)


def test_phone_width_every_lesson_and_a_student_completes_one(app_server, visitor, open_app, wait_for_app):
    page = visitor(viewport=PHONE)
    shots = bool(os.environ.get("NDCG_LAB_SCREENSHOTS"))
    open_app(page, f"{app_server}/learn")
    assert page.evaluate(NO_SIDEWAYS_SCROLL)
    if shots:
        page.screenshot(path=str(screenshot_dir() / "learn-index.png"))
        page.set_viewport_size({"width": PHONE["width"], "height": 2000})   # a whole lesson per screenshot
    for lesson_id in lessons.catalogue():
        open_app(page, f"{app_server}/learn?lesson={lesson_id}")
        no_exception(page)
        assert page.evaluate(NO_SIDEWAYS_SCROLL), lesson_id
        if shots:
            page.screenshot(path=str(screenshot_dir() / f"learn-{lesson_id}.png"), full_page=True)

    page.set_viewport_size(PHONE)
    # the discount lesson, from its first exercise to its last, keyboard where a phone has one
    open_app(page, f"{app_server}/learn?lesson=discount")
    _type_answer(page, wait_for_app, "43%")                       # the share kept at rank 4, 1/log2(5)
    _button(page, "Check my answer").focus()
    page.keyboard.press("Enter")
    wait_for_app(page)
    assert page.get_by_text("Not quite.").count() == 1
    assert page.get_by_text(re.compile("Where it usually goes wrong: the share kept at rank 4")).count() == 1
    _type_answer(page, wait_for_app, "0.569")                     # 1 - 1/log2(5) = 0.5693
    _click(page, wait_for_app, "Check my answer")
    assert page.get_by_text("Right.", exact=True).count() == 1
    _click(page, wait_for_app, "Next exercise")
    assert _param(page, "step") == "1" and _param(page, "lesson") == "discount"
    page.get_by_text("0.25", exact=True).click()                  # 1/log2(16)
    wait_for_app(page)
    _click(page, wait_for_app, "Check my answer")
    assert page.get_by_text("Right.", exact=True).count() == 1
    _click(page, wait_for_app, "Next exercise")
    page.get_by_label("Document to move").click()                 # the grade-4 document D10 to rank 1
    page.get_by_role("option", name="D10 (grade 4)").click()
    wait_for_app(page)
    _click(page, wait_for_app, "Move", "Check my answer")
    no_exception(page)
    alerts = page.locator('[data-testid="stAlert"]').all_inner_texts()
    assert "Right: your order reaches 1.0000." in alerts, alerts
    assert page.get_by_text("All 3 exercises answered: 3 right.").count() == 1
    assert page.evaluate(NO_SIDEWAYS_SCROLL)


def test_a_teacher_makes_an_exercise_and_a_student_answers_it(app_server, page, visitor, open_app, wait_for_app):
    open_app(page, f"{app_server}/learn?g=0,0,3,2&k=4&gain=linear")
    _click(page, wait_for_app, "Add to the set")
    link = page.locator('[data-testid="stCode"]').filter(has_text="?ex=").inner_text().strip()
    page.get_by_role("heading", name="Make an exercise").scroll_into_view_if_needed()
    page.screenshot(path=str(screenshot_dir() / "learn-make-exercise.png"))
    assert "ws=" not in link
    other = visitor(viewport=PHONE)
    open_app(other, link)
    no_exception(other)
    _type_answer(other, wait_for_app, "0.5")
    _click(other, wait_for_app, "Check my answer")
    assert other.get_by_text("Not quite.").count() == 1
    right = (3 / log2(4) + 2 / log2(5)) / (3 / log2(2) + 2 / log2(3))   # 2.3614 / 4.2619
    _type_answer(other, wait_for_app, f"{right:.3f}")
    _click(other, wait_for_app, "Check my answer")
    assert other.get_by_text("Right.", exact=True).count() == 1
    assert other.get_by_text(re.compile(rf"nDCG@4 = 2\.3614 / 4\.2619 = {right:.4f}")).count() == 1


def test_a_live_check_from_four_phones_and_the_workspace_token_stays(shared_app_server, page, visitor, open_app,
                                                                    wait_for_app):
    token = arrive(page, shared_app_server)             # a workspace, made by a first change
    page.get_by_role("link", name="Learn NDCG").click()
    wait_for_app(page)
    assert _param(page, "ws") == token
    page.get_by_role("link", name=re.compile("Gain: 2\\^rel")).click()
    wait_for_app(page)
    assert _param(page, "lesson") == "gain" and _param(page, "ws") == token
    page.get_by_text("Ask the class (live check)").click()
    expect(_button(page, "Open a live check of this question")).to_be_visible()
    wait_for_app(page)
    _click(page, wait_for_app, "Open a live check of this question")
    # the address the rerun writes: wait_for_app may return before a loaded server starts that rerun
    try:
        page.wait_for_url(re.compile(r"(?=.*[?&]live=[^&])(?=.*[?&]key=[^&])"))
    except Exception as exc:   # what the page showed instead, for the next reader of a failure
        raise AssertionError(f"no live check in the address {page.url}; the page said: "
                             f"{page.locator('body').inner_text()[:3000]!r}") from exc
    code, key = _param(page, "live"), _param(page, "key")
    assert code and key and _param(page, "ws") == token

    answers = ["0.55", "0.55", "0.75", "0.5"]           # the right one: 0.5465
    tabs = [visitor(viewport=PHONE) for _ in answers]
    for tab in tabs:
        open_app(tab, f"{shared_app_server}/learn?live={code}")
    for tab, answer in zip(tabs, answers):
        _type_answer(tab, wait_for_app, answer)
        _click(tab, wait_for_app, "Send my answer")
        expect(tab.get_by_text("Answer sent.", exact=False)).to_have_count(1)
        assert "key" not in tab.url
    _click(page, wait_for_app, "Refresh")
    expect(page.get_by_text("4 answers", exact=False)).to_have_count(1)
    cells = page.locator('[data-testid="stTable"]').filter(has_text="answers").last.evaluate(
        "(t) => [...t.querySelectorAll('tr')].map(tr => [...tr.children].map(c => c.innerText.trim()))")
    header, *body = cells
    rows = {line[header.index("answer")]: line[header.index("answers")] for line in body}
    assert rows == {"0.55": "2", "0.75": "1", "0.5": "1"}      # as typed, not rounded
    assert page.get_by_text("4 answers", exact=False).count() == 1
    _click(page, wait_for_app, "Reveal the answer")
    expect(page.get_by_text("The answer: 0.5465", exact=False)).to_have_count(1)
    assert _param(page, "ws") == token
    page.screenshot(path=str(screenshot_dir() / "learn-live.png"), full_page=True)
