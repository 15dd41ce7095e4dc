"""Shared test helpers: paths to bundled and shared data, and the one AppTest harness of the page
and ui tests (``open_app``)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

TREC_EVAL_DATA = ROOT.parent / "shared" / "data" / "trec_eval"
APP = ROOT / "app.py"


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


def assert_ok(at: AppTest) -> None:
    assert not at.exception, "\n".join(e.value for e in at.exception)


@pytest.fixture
def open_app(monkeypatch, tmp_path):
    """open_app(page=None, *, home=None, query_params=None, run=True) -> AppTest of app.py.

    ``home`` is the NDCG_LAB_HOME (default: a folder of this test's own, so its workspace is
    private); the app runs from the repository root. With ``run=False`` the AppTest is returned
    before its first run; otherwise it has run (and switched to ``page``) without an exception.
    """
    def open_(page: str | None = None, *, home: Path | None = None, query_params: dict | None = None,
              run: bool = True) -> AppTest:
        monkeypatch.setenv("NDCG_LAB_HOME", str(home or tmp_path / "home"))
        monkeypatch.chdir(ROOT)
        at = AppTest.from_file(str(APP), default_timeout=120)
        at.query_params.update(query_params or {})
        if not run:
            return at
        at.run()
        assert_ok(at)
        if page:
            at.switch_page(page).run()
            assert_ok(at)
        return at
    return open_


@pytest.fixture(scope="module")
def shared_home(tmp_path_factory) -> Path:
    """One workspace for the tests of a module that only read it (the samples load once)."""
    return tmp_path_factory.mktemp("ndcg-lab-shared")
