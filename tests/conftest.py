"""Shared test helpers: paths to bundled and shared data."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TREC_EVAL_DATA = ROOT.parent / "shared" / "data" / "trec_eval"


@pytest.fixture
def trec_eval_data() -> Path:
    if not (TREC_EVAL_DATA / "qrels.test").exists():
        pytest.skip("../shared/data/trec_eval is absent")
    return TREC_EVAL_DATA


@pytest.fixture(autouse=True, scope="session")
def private_workspace(tmp_path_factory):
    """No test touches the user's real workspace: NDCG_LAB_HOME points at a session temp dir
    unless a test sets its own."""
    import os

    previous = os.environ.get("NDCG_LAB_HOME")
    os.environ["NDCG_LAB_HOME"] = str(tmp_path_factory.mktemp("ndcg-lab-home"))
    yield
    if previous is None:
        os.environ.pop("NDCG_LAB_HOME", None)
    else:
        os.environ["NDCG_LAB_HOME"] = previous
