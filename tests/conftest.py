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
