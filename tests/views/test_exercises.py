"""Exercises that test (AppTest of the Learn page): every exercise of every lesson, read before it is
answered, shows no number its check would accept (as a decimal or as a percentage), nor does a teacher's
exercise link; a wrong answer gets the next step of the arithmetic and not the value; the answer shows
after the link's ``tries`` wrong answers (2 by default) or on "Show the answer", and an exercise whose
answer was shown is never counted as right."""
from __future__ import annotations

import re
from math import log2

import pandas as pd
import pytest

from metrics.analysis import lessons
from tests.conftest import assert_ok
from tests.metrics.analysis.lessons.hand import hand, hand_value

LESSONS = lessons.catalogue()
NUMBER = re.compile(r"(?<![\w@^.,])(\d+(?:[.,]\d+)?)(?![.,]?\w)(\s?%)?")
"""A number as a reader sees one: not a part of a word, an address or a code on either side (a short
link's code is random, ``/s/4KQ2ZZ7A``: its 4 is no number), nor a measure's cutoff (``nDCG@4``)."""


@pytest.fixture
def learn(open_app, shared_home):
    return lambda query_params=None: open_app("views/learn.py", home=shared_home, query_params=query_params)


def hand_answer(ex) -> float | None:
    """The number an exercise asks for, by the textbook formulas (None: not answered with a number)."""
    if ex.kind == "number" or ex.kind == "choice" and all(isinstance(o, float) for o in ex.options):
        return hand_value(ex)
    return None


def cells(frame) -> list[str]:
    frame = frame.data if hasattr(frame, "data") else frame
    frame = pd.DataFrame(frame).reset_index()
    out = []
    for value in frame.to_numpy().ravel():
        if isinstance(value, float):
            out.append(f"{value:g}" if value == int(value) else f"{value:.4f}")
        else:
            out.append(str(value))
    return out


def page_text(at, *, options: bool = True) -> str:
    """Everything the main area shows as text: prose, numbers, tables, labels, placeholders, hints,
    buttons; a radio's options only with ``options`` (a choice among numbers shows its answer among them)."""
    main = at.main
    parts = [e.value for kind in ("title", "header", "subheader", "markdown", "caption", "info", "warning",
                                  "error", "success", "code", "latex") for e in getattr(main, kind)]
    parts += [f"{m.label} {m.value}" for m in main.metric]
    parts += [" ".join(cells(t.value)) for t in main.table] + [" ".join(cells(d.value)) for d in main.dataframe]
    parts += [f"{t.label} {t.proto.placeholder} {t.value}" for t in main.text_input]
    parts += [b.label for b in main.button] + [p.proto.text for p in main.get("progress")]
    parts += [r.label + (" " + " ".join(map(str, r.options)) if options else "") for r in main.radio]
    parts += [s.label for s in main.selectbox] + [n.label for n in main.number_input]
    return "\n".join(str(p) for p in parts)


def leaks(text: str, value: float, tolerance: float) -> list[str]:
    """The numbers of ``text`` that the check would accept for ``value``."""
    found = []
    for m in NUMBER.finditer(text):
        number = float(m.group(1).replace(",", "."))
        if m.group(2):
            number /= 100
        if abs(number - value) <= tolerance + 1e-9:
            found.append(m.group(0))
    return found


def test_the_scan_finds_an_answer_shown_and_not_a_digit_of_a_short_links_code():
    """A lesson's handout shows its random short link twice (the box to copy, the caption); a quarter of
    the codes begin with a digit (8 of ALPHABET's 32), 1 in 32 with a 4: that digit is no number shown."""
    from metrics.store.shortlinks import ALPHABET, LENGTH

    for digit in filter(str.isdigit, ALPHABET):
        url = f"http://localhost:8501/s/{(digit + ALPHABET)[:LENGTH]}"
        assert leaks(f"{url}\nScan it with a phone's camera, or type {url}.", int(digit), 0) == []
    for shown, value, found in (("**The answer:** 4", 4, "4"), ("B scores higher on 4 queries.", 4, "4"),
                                ("(4)", 4, "4"), ("4/5", 4, "4"), ("4.0", 4, "4.0"), ("4 %", 0.04, "4 %")):
        assert leaks(shown, value, 0) == [found], shown


@pytest.mark.parametrize("lesson_id", list(LESSONS))
def test_no_lesson_page_shows_an_exercise_answer_before_it_is_answered(learn, lesson_id):
    lesson = LESSONS[lesson_id]
    for i, ex in enumerate(lesson.exercises):
        at = learn({"lesson": lesson_id, "step": str(i)})
        assert_ok(at)
        assert any(m.value == f"**{ex.question}**" for m in at.main.markdown), (lesson_id, i)
        value = hand_answer(ex)
        if value is None:
            continue
        assert lessons.quantity_value(ex) == pytest.approx(value, abs=1e-9)
        numeric_choice = ex.kind == "choice"
        text = page_text(at, options=not numeric_choice)
        assert lessons.render(lesson, lesson.text) in text          # the scan reads the lesson's text, its
        assert len(NUMBER.findall(text)) > 20                       # example's numbers and the exercise's
        assert leaks(text, value, ex.tolerance) == [], (lesson_id, i, value)


def test_a_teachers_exercise_link_shows_no_answer(learn):
    token = lessons.encode([lessons.from_spec({"kind": "number", "question": "nDCG@4 of this list?",
                                               "grades": [0, 0, 3, 2], "cutoff": 4, "gain": "linear"})])
    at = learn({"ex": token})
    assert_ok(at)
    right = (3 / log2(4) + 2 / log2(5)) / (3 / log2(2) + 2 / log2(3))
    text = page_text(at)
    assert "nDCG@4 of this list?" in text and leaks(text, right, 0.005) == []


def answer(at, key, text):
    at.text_input(key=f"{key}_number").input(text).run()
    at.button(key=f"{key}_check").click().run()
    assert_ok(at)


def progress(at) -> str:
    return at.main.get("progress")[0].proto.text


def test_a_wrong_answer_gets_the_next_step_then_the_answer_shows_and_never_counts(learn):
    at = learn({"lesson": "discount"})
    key = "learn_ex_discount_0"
    kept = 1 / log2(5)                                         # rank 4 keeps 0.4307, loses 0.5693
    lost = 1 - kept
    answer(at, key, f"{kept:.2f}")                             # the usual mistake: the kept share
    assert [e.value for e in at.main.error] == ["Not quite."]
    assert any("share kept at rank 4" in w.value for w in at.main.warning)
    assert any(f"1/log2(4+1) = 1/2.3219 = {kept:.4f}" in c.value and "share lost = 1 - 0.4307 = ?" in c.value
               for c in at.main.code)
    assert any(c.value == "1 more try before the answer shows." for c in at.main.caption)
    assert leaks(page_text(at), lost, 0.01) == []                           # no value after a wrong answer
    assert not any("The answer:" in m.value for m in at.main.markdown)
    answer(at, key, "0.3")                                      # the second wrong answer shows it
    assert any(m.value == f"**The answer:** {lost:.4f}" for m in at.main.markdown)
    assert "answered 1, right 0" in progress(at)
    answer(at, key, f"{lost:.4f}")                              # typed back, it is not counted
    assert [s.value for s in at.main.success] == []
    assert any("does not count as right" in i.value for i in at.main.info)
    assert "answered 1, right 0" in progress(at)
    at.button(key="learn_ex_discount__next").click().run()
    key = "learn_ex_discount_1"
    at.button(key=f"{key}_reveal").click().run()                # shown on request, before any answer
    assert any(m.value == "**The answer:** 0.25" for m in at.main.markdown)
    at.radio(key=f"{key}_choice").set_value(1).run()            # 0.25 = 1/log2(16)
    at.button(key=f"{key}_check").click().run()
    assert [s.value for s in at.main.success] == [] and "answered 2, right 0" in progress(at)
    at.button(key="learn_ex_discount__back").click().run()       # back at the first: still shown, not right
    assert "answered 2, right 0" in progress(at)
    assert any(m.value == f"**The answer:** {lost:.4f}" for m in at.main.markdown)


def test_a_right_answer_counts_and_the_link_sets_the_tries(learn):
    at = learn({"lesson": "gain", "tries": "3"})
    key = "learn_ex_gain_0"
    right = hand(LESSONS["gain"].exercises[0].sandbox, "ndcg")
    for i, wrong in enumerate(("0.1", "0.2")):
        answer(at, key, wrong)
        assert not any("The answer:" in m.value for m in at.main.markdown)
        assert any(c.value == f"{2 - i} more {'tries' if i == 0 else 'try'} before the answer shows."
                   for c in at.main.caption)
    assert only(at.query_params["tries"]) == "3"
    answer(at, key, f"{right * 100:.1f}%")
    assert [s.value for s in at.main.success] == ["Right."]
    assert "answered 1, right 1" in progress(at)
    at = learn({"lesson": "gain", "tries": "1"})
    answer(at, key, "0.1")
    assert any(m.value == f"**The answer:** {right:.4f}" for m in at.main.markdown)


@pytest.mark.parametrize("tries", ["0", "11", "two", "-1"])
def test_a_link_with_bad_tries_says_so_and_keeps_the_default(learn, tries):
    at = learn({"lesson": "gain", "tries": tries})
    assert_ok(at)
    assert [w.value for w in at.main.warning] == [f"The link's tries={tries} is not a whole number from 1 to 10: "
                                                  "the answer shows after 2 wrong tries."]
    key = "learn_ex_gain_0"
    answer(at, key, "0.1")
    assert not any("The answer:" in m.value for m in at.main.markdown)
    answer(at, key, "0.2")
    assert any("The answer:" in m.value for m in at.main.markdown)


def only(value):
    return value[0] if isinstance(value, list) else value
