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


@pytest.fixture(scope="session")
def legal_cli_comparison() -> dict:
    """`python -m metrics compare` of bm25_ce against bm25 on the legal sample, as JSON: the
    comparison row the Compare page must reproduce (same measure string, seed and test)."""
    import json
    import subprocess

    legal = ROOT / "sample_data" / "legal"
    out = subprocess.run(
        [sys.executable, "-m", "metrics", "compare", str(legal / "qrels.txt"), str(legal / "bm25.run"),
         str(legal / "bm25_ce.run"), "-m", "nDCG(dcg=exp-log2)@10", "--format", "json"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    (row,) = json.loads(out)["comparisons"]
    return row
