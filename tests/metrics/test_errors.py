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
