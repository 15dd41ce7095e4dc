"""Exercises that test, in Chromium: every lesson's every exercise page, read as a student sees it
before answering (the main area's text, the answer box's label and placeholder, every accessible
name), shows no number its check would accept, as a decimal or as a percentage; a wrong answer shows
the next step of the arithmetic and not the value; the second wrong answer shows the value, and typed
back then it is not counted as right."""
from __future__ import annotations

import re
from math import log2

import pytest
from playwright.sync_api import expect

from metrics.analysis import lessons
from ndcg_lab.ui.exercise import NUMBER_LABEL
from tests.e2e.helpers import TIMEOUT, main, no_exception
from tests.metrics.analysis.lessons.hand import hand_value

LESSONS = lessons.catalogue()
NUMBER = re.compile(r"(?<![\w@^.,])(\d+(?:[.,]\d+)?)(?![.,]?\w)(\s?%)?")
"""A number as a reader sees one: not a part of a word, an address or a code on either side (a short
link's code is random, ``/s/4KQ2ZZ7A``: its 4 is no number), nor a measure's cutoff (``nDCG@4``)."""
READ = """(root) => {
    const skip = root.querySelectorAll('[role="radiogroup"]');
    const parts = [root.innerText];
    for (const el of root.querySelectorAll('input, textarea, [aria-label], [title]')) {
        parts.push(el.getAttribute('placeholder') || '', el.getAttribute('aria-label') || '',
                   el.getAttribute('title') || '', el.value || '');
    }
    return [parts.join('\\n'), Array.from(skip).map(e => e.innerText).join('\\n')];
}"""


def leaks(text: str, value: float, tolerance: float) -> list[str]:
    """The numbers of ``text`` the check would accept for ``value`` (a percentage read as a fraction)."""
    found = []
    for m in NUMBER.finditer(text):
        number = float(m.group(1).replace(",", ".")) / (100 if m.group(2) else 1)
        if abs(number - value) <= tolerance + 1e-9:
            found.append(m.group(0))
    return found


def screen(page, *, options: bool) -> str:
    """What the main area shows and names; without a radio group's options when ``options`` is False."""
    text, radios = main(page).evaluate(READ)
    return text if options else text.replace(radios, "")


def numbered(ex) -> bool:
    return ex.kind == "number" or ex.kind == "choice" and all(isinstance(o, float) for o in ex.options)


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_no_exercise_page_shows_its_answer_before_it_is_answered(app_server, page, open_app, wait_for_app,
                                                                 lesson_id):
    lesson = LESSONS[lesson_id]
    for i, ex in enumerate(lesson.exercises):
        open_app(page, f"{app_server}/learn?lesson={lesson_id}&step={i}")
        # the answer widgets are drawn last: read the page once they are there and its run is over
        # (a full CI run once read a page whose answer box was not drawn, the button already was)
        expect(main(page).get_by_role("button", name="Check my answer")).to_be_visible(timeout=TIMEOUT)
        if ex.kind == "number":
            expect(main(page).get_by_label(NUMBER_LABEL)).to_be_visible(timeout=TIMEOUT)
        wait_for_app(page)
        no_exception(page)
        text = screen(page, options=ex.kind != "choice")
        assert ex.question in text and lesson.title in text, (lesson_id, i)
        assert ex.kind != "number" or NUMBER_LABEL in text
        if numbered(ex):
            value = hand_value(ex)
            assert lessons.answer(ex) == pytest.approx(value) or ex.kind == "choice"
            assert leaks(text, value, ex.tolerance) == [], (lesson_id, i, value)


def _answer(page, wait_for_app, text):
    box = page.get_by_label(NUMBER_LABEL)
    box.fill(text)
    box.press("Enter")
    wait_for_app(page)
    page.get_by_role("button", name="Check my answer", exact=True).click()
    wait_for_app(page)
    no_exception(page)


def test_a_wrong_answer_gets_a_hint_then_the_answer_and_a_shown_answer_never_counts(app_server, page, open_app,
                                                                                    wait_for_app):
    open_app(page, f"{app_server}/learn?lesson=unjudged")
    ex = LESSONS["unjudged"].exercises[0]
    right = hand_value(ex)                                        # gains 3, 0, 7, 1, 0 against 7, 7, 3, 1, 0
    assert f"{right:.4f}" == "0.5193"
    _answer(page, wait_for_app, "0.8")
    body = screen(page, options=True)
    assert "Not quite." in body and "The next step:" in body
    dcg = 3 + 7 / log2(4) + 1 / log2(5)                           # the next step: DCG@5, not nDCG@5
    assert f"DCG@5 = 3/log2(2) + 7/log2(4) + 1/log2(5) = {dcg:.4f}" in body, body[-1500:]
    assert "1 more try before the answer shows." in body
    assert leaks(body, right, ex.tolerance) == [] and "The answer:" not in body
    _answer(page, wait_for_app, "0.9")                           # the second wrong answer
    body = screen(page, options=True)
    assert f"The answer: {right:.4f}" in body
    assert "answered 1, right 0" in body
    _answer(page, wait_for_app, f"{right:.4f}")                  # the shown value typed back
    body = screen(page, options=True)
    assert "does not count as right" in body and "Right." not in body
    assert "answered 1, right 0" in body
    page.get_by_role("button", name="Next exercise", exact=True).click()
    wait_for_app(page)
    page.get_by_role("button", name="Show the answer", exact=True).click()
    wait_for_app(page)
    assert "answered 2, right 0" in screen(page, options=True)
