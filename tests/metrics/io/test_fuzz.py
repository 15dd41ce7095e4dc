"""Random and mutated bytes through every reader: each input is read, or refused with a
MetricsError; any other exception is a bug. Bounded here; bench/bench_fuzz.py runs longer."""
from __future__ import annotations

import contextlib
import gzip
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import metrics
from metrics.errors import MetricsError
from metrics.io import read, trec
from metrics.io.topics import read_topics
from tests.hostile_corpus import GOOD_QRELS, fuzz_input


def _streaming(data: bytes):
    """The streaming engine on ``data`` as a run file (pieces, line and inflate checks, buckets)."""
    with tempfile.TemporaryDirectory(prefix="ndcg-lab-fuzz-") as folder:
        path = Path(folder) / "fuzz.run"
        path.write_bytes(data)
        return metrics.evaluate(GOOD_QRELS_TABLE, {"fuzz": str(path)}, ["nDCG@10"], engine="streaming")


GOOD_QRELS_TABLE = metrics.read_qrels(GOOD_QRELS, source="good.qrels")


@contextlib.contextmanager
def _patched(module, name: str, value):
    before = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, before)


def _outcome(data: bytes) -> tuple:
    try:
        run = metrics.read_run(data, source="fuzz.run.gz")
    except MetricsError as exc:
        return ("refused", str(exc))
    return ("read", run.table.to_pydict(), run.digest, [(f.kind, f.message, f.examples) for f in run.findings])


def _streamed(data: bytes):
    """A gzipped run read as a stream in 4 kB blocks against the whole-file path: the same run
    (columns, digest, findings) or the same one-line error, else an AssertionError."""
    raw = data if data[:2] == b"\x1f\x8b" else gzip.compress(data, 1)
    with _patched(trec, "FILE_BLOCK", 4096):
        streamed = _outcome(raw)
    with _patched(read, "_from_blocks", lambda *a: (None, False)):
        whole = _outcome(raw)
    if streamed != whole:
        raise AssertionError(f"streamed {streamed[:2]!r:.300} != whole {whole[:2]!r:.300}")
    if streamed[0] == "refused":
        raise MetricsError(streamed[1])

READERS = {
    "run": lambda data: metrics.read_run(data, source="fuzz.run"),
    "qrels": lambda data: metrics.read_qrels(data, source="fuzz.qrels"),
    "topics": lambda data: read_topics(data, source="fuzz.topics"),
    "titles": lambda data: metrics.io.read_two_columns(data, ("docno", "title"), source="fuzz.tsv"),
    "streaming": _streaming,
    "streamed": _streamed,
}
"""Every reader of user files: runs, qrels, topics, the doc-title (two-column) table, and a run
file through the streaming engine, and a gzipped run read in blocks against the whole-file path."""

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
