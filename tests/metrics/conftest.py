"""Fixtures of the engine tests (tests/metrics/engines, tests/metrics/cli): the generated collection
and a real Dask LocalCluster."""
from __future__ import annotations

import pytest

from metrics import engines as scale
from tests.metrics.engines.collection import make_collection


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
