"""metrics.measures.base: measure names parse and print back; gains rewrite a measure."""
from __future__ import annotations

import pytest

from metrics.errors import MetricsError
from metrics.measures import (
    parse,
    with_gain,
)


def test_parse_round_trip_and_errors():
    assert str(parse("nDCG(dcg='exp-log2')@10")) == "nDCG(dcg='exp-log2')@10"
    assert str(parse("nDCG(dcg=log2)@10")) == "nDCG@10"  # the default parameter is dropped
    assert str(parse("P(rel=2)@5")) == "P(rel=2)@5"
    assert parse("MAP").name == "AP"
    with pytest.raises(MetricsError, match="unknown measure"):
        parse("Foo@3")
    with pytest.raises(MetricsError, match="needs a cutoff"):
        parse("P")
    with pytest.raises(MetricsError, match="takes no cutoff"):
        parse("Rprec@5")
    with pytest.raises(MetricsError, match="must be one of"):
        parse("nDCG(dcg=cubic)@5")
    with pytest.raises(MetricsError, match="cutoff"):
        parse("nDCG@0")


def test_with_gain():
    assert with_gain("nDCG@10", "exp") == "nDCG(dcg='exp-log2')@10"
    assert with_gain("nDCG(dcg='exp-log2')@10", "linear") == "nDCG@10"
    assert with_gain("AP", "exp") == "AP"
    assert with_gain("nDCG(judged_only=True)@5", "exp") == "nDCG(dcg='exp-log2',judged_only=True)@5"
