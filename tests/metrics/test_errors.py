"""metrics.errors: the four parts of a MetricsError and its pickling."""
from __future__ import annotations

import pickle

from metrics.errors import MetricsError


def test_error_message_parts_and_pickling():
    err = MetricsError("expected 6 columns, found 4", source="run.txt", line=1204, fix="add the tag")
    assert str(err) == "run.txt line 1204: expected 6 columns, found 4. add the tag"
    assert isinstance(err, ValueError)
    assert str(MetricsError("bad", fix="do x")) == "bad. do x"
    assert str(MetricsError("bad", source="a.txt")) == "a.txt: bad"
    back = pickle.loads(pickle.dumps(err))
    assert (back.problem, back.source, back.line, back.fix) == (err.problem, "run.txt", 1204, "add the tag")
    assert str(back) == str(err)


def test_a_huge_quoted_field_is_cut_to_a_bounded_prefix():
    grade = "9" * 1_000_000
    err = MetricsError(f"grade {grade!r} is not a whole number", source="q.txt", line=1, fix="use 0, 1, 2")
    text = str(err)
    assert len(text) < 300
    assert text == f"q.txt line 1: grade '{'9' * 79}… (1,000,002 characters) is not a whole number. use 0, 1, 2"
    assert str(MetricsError("x" * 120)) == "x" * 120        # up to LONGEST_WORD characters stay whole
