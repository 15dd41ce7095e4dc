"""metrics.analysis.sandbox.lists: the list's edits, its checks and the shareable link's round trip."""
from __future__ import annotations

import pytest

from metrics.analysis import sandbox as sx
from metrics.analysis.sandbox import Sandbox
from metrics.errors import MetricsError


def test_ideal_reverse_shuffle_move():
    sb = Sandbox(grades=(1, None, 3, 0, 3), names=("a", "b", "c", "d", "e"))
    ideal = sb.ideal()
    assert ideal.grades == (3, 3, 1, None, 0) and ideal.names == ("c", "e", "a", "b", "d")  # stable ties
    assert sx.scores(ideal.replace(cutoff=5))["nDCG exp"] == 1.0
    assert sb.reversed().names == ("e", "d", "c", "b", "a")
    assert sb.shuffled(7) == sb.shuffled(7)
    assert sorted(sb.shuffled(7).names) == sorted(sb.names)
    assert sb.moved(2, -1).names == ("a", "c", "b", "d", "e")
    assert sb.moved(0, -1) == sb and sb.moved(4, 1) == sb
    assert sb.regraded(1, 4).grades == (1, 4, 3, 0, 3)
    assert sb.resized(2).names == ("a", "b")
    assert sb.resized(7).names[-2:] == ("D1", "D2") and sb.resized(7).grades[-2:] == (0, 0)


def test_validation():
    with pytest.raises(MetricsError, match="outside 0-4"):
        Sandbox(grades=(5,))
    with pytest.raises(MetricsError, match="1 to 20"):
        Sandbox(grades=(0,) * 21)
    with pytest.raises(MetricsError, match="unique"):
        Sandbox(grades=(0, 1), names=("a", "a"))


def test_url_round_trip():
    sb = Sandbox(grades=(3, None, 0, 2), names=("a", "b", "c", "d"), cutoff=3, gain="linear", missed=(2,),
                 guesses=(("b", 4),))
    params = sx.to_params(sb)
    assert params["g"] == "3,?,0,2" and params["k"] == "3" and params["gain"] == "linear"
    assert sx.from_params(params) == sb
    assert sx.from_params({"g": "1,0"}) == Sandbox(grades=(1, 0), cutoff=2)
    with pytest.raises(MetricsError):
        sx.from_params({"g": "1,x"})
    with pytest.raises(MetricsError):
        sx.from_params({})
