"""ui.learn: the Learn page's glossary, formulas, links and grade options."""
from __future__ import annotations

from urllib.parse import parse_qsl

import pytest

from metrics.analysis import sandbox
from ui import learn


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
