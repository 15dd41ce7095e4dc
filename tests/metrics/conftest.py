"""Fixtures of the metrics tests: the generated collection and a real Dask LocalCluster (engine and
cli tests), and trec_eval 10 (its reference outputs in tests/data and the binary) for the conformance
tests and the ``trec_eval`` subcommand.

The binary is built from ../shared/tools (build-trec-eval) into a cache folder
outside the repository ($XDG_CACHE_HOME or ~/.cache, under ndcg-lab/); tests
that need it skip when the script or a C compiler is absent. The reference outputs
are in the repository: the tests that read only them always run.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from metrics import engines as scale
from tests.conftest import TREC_EVAL10_DATA
from tests.metrics.engines.collection import make_collection

ROOT = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = ROOT.parent / "shared" / "tools" / "build-trec-eval"


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ndcg-lab"


def _build(wide: bool) -> Path:
    if not BUILD_SCRIPT.exists():
        pytest.skip("../shared/tools/build-trec-eval is absent")
    target = _cache_dir() / ("trec_eval_wide" if wide else "trec_eval")
    command = [str(BUILD_SCRIPT), *(["--wide"] if wide else []), str(target)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    except OSError as exc:
        pytest.skip(f"cannot run build-trec-eval: {exc}")
    if done.returncode != 0:
        pytest.skip(f"building trec_eval failed (no C compiler?): {done.stderr.strip()[:200]}")
    return Path(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def trec_eval_wide() -> Path:
    """trec_eval 10 printing values with 10 decimals."""
    return _build(wide=True)


@pytest.fixture(scope="session")
def trec_eval_4() -> Path:
    """trec_eval 10 as released (4 decimals)."""
    return _build(wide=False)


@pytest.fixture(scope="session")
def trec_eval10_data() -> Path:
    """trec_eval 10's 10-decimal references (tests/data/trec_eval10, INDEX.md there)."""
    return TREC_EVAL10_DATA


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
