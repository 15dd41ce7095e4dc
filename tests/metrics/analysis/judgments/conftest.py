"""Fixtures of the judgments tests: the hand-built case of case.py, ranked."""
from __future__ import annotations

import pytest

from metrics.ranking import rank
from tests.metrics.analysis.judgments.case import RUNS, make_qrels, make_run


@pytest.fixture
def qrels():
    return make_qrels()


@pytest.fixture
def runs(qrels):
    return {name: rank(make_run(name, lists), qrels) for name, lists in RUNS.items() if name != "C"}


@pytest.fixture
def runs3(qrels):
    return {name: rank(make_run(name, lists), qrels) for name, lists in RUNS.items()}
