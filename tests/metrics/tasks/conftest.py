"""Fixtures of the class-task tests: a task manager on a temp home with a clock the test moves,
and a task made from the legal sample (50 judged topics, 15 public, bm25 as the baseline)."""
from __future__ import annotations

from pathlib import Path

import pytest

from metrics import settings
from metrics.tasks import TaskDefinition, Tasks

ROOT = Path(__file__).resolve().parents[3]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
START = 1_796_000_000.0   # 2026-11-30T...Z, a fixed "now"


class Clock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def tasks(tmp_path, clock) -> Tasks:
    manager = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path)}), clock=clock)
    yield manager
    manager.close()


def make_task(tasks: Tasks, **options):
    """A task of the legal sample: nDCG@10 (primary) and AP, 30% public (seed 3), bm25 baseline."""
    fields = dict(title="Legal retrieval", closes=tasks.clock() + 7 * 86400, measures=("nDCG@10", "AP"),
                  public_fraction=0.3, seed=3) | options
    return tasks.create(TaskDefinition(**fields), topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                        baselines=[("bm25", LEGAL / "bm25.run")])


@pytest.fixture
def legal(tasks):
    return make_task(tasks, total=3, per_day=2)
