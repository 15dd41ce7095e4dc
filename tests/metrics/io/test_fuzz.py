"""Random and mutated bytes through every reader: each input is read, or refused with a
MetricsError; any other exception is a bug. Bounded here; bench/bench_fuzz.py runs longer."""
from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics
from metrics.errors import MetricsError
from metrics.io.topics import read_topics
from tests.hostile_corpus import fuzz_input

READERS = {
    "run": lambda data: metrics.read_run(data, source="fuzz.run"),
    "qrels": lambda data: metrics.read_qrels(data, source="fuzz.qrels"),
    "topics": lambda data: read_topics(data, source="fuzz.topics"),
    "titles": lambda data: metrics.io.read_two_columns(data, ("docno", "title"), source="fuzz.tsv"),
}
"""Every reader of user files: runs, qrels, topics, and the doc-title (two-column) table."""

EXAMPLES = 200


@pytest.fixture(autouse=True, scope="module")
def small_inflate_limit():
    previous = os.environ.get("NDCG_LAB_INFLATE_LIMIT")
    os.environ["NDCG_LAB_INFLATE_LIMIT"] = "1MB"
    yield
    if previous is None:
        os.environ.pop("NDCG_LAB_INFLATE_LIMIT")
    else:
        os.environ["NDCG_LAB_INFLATE_LIMIT"] = previous


def read_or_refuse(kind: str, data: bytes) -> None:
    """The reader's result, or a MetricsError: anything else fails the test."""
    try:
        READERS[kind](data)
    except MetricsError as exc:
        assert str(exc) and "\n" not in exc.problem


@pytest.mark.parametrize("kind", sorted(READERS))
@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_input_is_read_or_refused_with_a_metrics_error(kind, rnd):
    read_or_refuse(kind, fuzz_input(kind, rnd))


@pytest.mark.parametrize("kind", sorted(READERS))
@settings(max_examples=EXAMPLES // 2, deadline=None, database=None)
@given(data=st.binary(max_size=512))
def test_random_bytes_are_read_or_refused_with_a_metrics_error(kind, data):
    read_or_refuse(kind, data)
