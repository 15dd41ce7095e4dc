"""ndcg_lab.ui.learn: the Learn page's glossary, formulas, links and grade options."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from metrics.analysis import sandbox
from ndcg_lab.ui import learn


def test_every_formula_has_a_glossary_entry_and_a_link_target():
    assert [term for term, _ in learn.FORMULAS] == [t for t in learn.GLOSSARY if t != "graded"]
    assert learn.link("nDCG@10", "ndcg") == "[nDCG@10](#glossary-ndcg)"
    assert learn.anchor("ndcg") == '<span id="glossary-ndcg"></span>'
    assert set(learn.MEASURE_NOTES) == {"AP", "RR", "P", "R"}


def test_grade_options_round_trip_and_unjudged_is_a_question_mark():
    assert learn.GRADE_OPTIONS == ["4", "3", "2", "1", "0", "?"]
    assert [learn.grade_value(o) for o in learn.GRADE_OPTIONS] == [4, 3, 2, 1, 0, None]
    assert [learn.grade_option(learn.grade_value(o)) for o in learn.GRADE_OPTIONS] == learn.GRADE_OPTIONS
    assert learn.grade_option(2.0) == "2"


@pytest.mark.parametrize("value, digits, text", [(0.78474, 4, "0.7847"), (1 / 3, 2, "0.33"), (1.0, 4, "1.0000")])
def test_fmt(value, digits, text):
    assert learn.fmt(value, digits) == text


def test_share_query_keeps_commas_and_question_marks_and_restores_the_sandbox():
    sb = sandbox.Sandbox(grades=(3, None, 0), names=("a", "b", "c"), cutoff=2, guesses=(("b", 2),))
    query = learn.share_query(sandbox.to_params(sb))
    assert query.startswith("?g=3,?,0&k=2&gain=exp")
    assert "names=a,b,c" in query and "guess=b:2" in query
    assert sandbox.from_params(dict(parse_qsl(query[1:]))) == sb


def test_flip_message_says_when_the_order_of_two_systems_flips():
    import pandas as pd

    frame = pd.DataFrame({"nDCG@5 exp": [0.64, 0.68], "nDCG@5 linear": [0.81, 0.72]})
    assert learn.flip_message(frame, 5).startswith("**The order flips**: under exponential gain B (second system) "
                                                   "is higher, under linear gain A (your list) is higher")
    same = pd.DataFrame({"nDCG@5 exp": [0.9, 0.5], "nDCG@5 linear": [0.8, 0.7]})
    assert learn.flip_message(same, 5) == "Same order under both gains: A (your list) is higher."
    tie = pd.DataFrame({"nDCG@5 exp": [0.5, 0.5], "nDCG@5 linear": [0.5, 0.6]})
    assert "under exponential gain they tie" in learn.flip_message(tie, 5)


def test_systems_both_gains_are_the_engines_values():
    sb = sandbox.Sandbox(grades=(3, 0, 1), names=("a", "b", "c"), cutoff=3, versus=("c", "b", "a"))
    table = learn.systems_both_gains(sb)
    assert list(table.columns) == ["ranking", "AP", "RR", "P@3", "nDCG@3 exp", "nDCG@3 linear"]
    from math import log2
    ideal = 3 + 1 / log2(3)
    assert table["nDCG@3 linear"].iloc[1] == pytest.approx((1 + 3 / log2(4)) / ideal)


@pytest.mark.parametrize("text, value", [("0.61", 0.61), ("61%", 0.61), ("0,61", 0.61), (" 7 ", 7.0)])
def test_parse_number(text, value):
    from ndcg_lab.ui.exercise import parse_number
    assert parse_number(text) == pytest.approx(value)


def test_parse_number_refuses_words():
    from metrics.errors import MetricsError
    from ndcg_lab.ui.exercise import parse_number
    with pytest.raises(MetricsError, match="'abc' is not a number"):
        parse_number("abc")
