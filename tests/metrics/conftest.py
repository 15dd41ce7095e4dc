"""Fixtures of the metrics tests: the generated collection and a real Dask LocalCluster (engine and
cli tests), and trec_eval 10 (its reference outputs in tests/data and the binary) for the conformance
tests and the ``trec_eval`` subcommand.

The binary's fixtures (``trec_eval_wide``, ``trec_eval_4``) are in tests/conftest.py. The
reference outputs are in the repository: the tests that read only them always run.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from metrics import engines as scale
from tests.conftest import TREC_EVAL10_DATA
from tests.metrics.engines.collection import make_collection
from tests.metrics.threads import force_threads

ROOT = Path(__file__).resolve().parents[2]
@pytest.fixture(scope="session")
def trec_eval10_data() -> Path:
    """trec_eval 10's 10-decimal references (tests/data/trec_eval10, INDEX.md there)."""
    return TREC_EVAL10_DATA


@pytest.fixture
def threaded(monkeypatch) -> list[str]:
    """Every metrics.beside.beside() call of the test on a second thread; the list names the work started."""
    return force_threads(monkeypatch)


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    return make_collection(tmp_path_factory.mktemp("collection"))


@pytest.fixture(scope="module")
def cluster():
    """A real LocalCluster: 2 worker processes, 1 thread each (started with a bare __main__, see
    metrics.engines.dask.local_cluster: earlier AppTest tests leave __main__ set to app.py)."""
    pytest.importorskip("dask.distributed")
    with scale.local_cluster(2) as local:
        yield local
