"""What the AppTests of the class-task pages (task, course) share: a task on the legal sample made
through the library in a fresh home, and the readers of a run's outcome (no exception; its text)."""
from __future__ import annotations

import time
from pathlib import Path

from metrics import settings
from metrics.tasks import Links, TaskDefinition, Tasks

LEGAL = Path(__file__).resolve().parents[2] / "ndcg_lab" / "sample_data" / "legal"


def legal_task(home: Path, title: str, **options) -> tuple[Tasks, Links]:
    """(the library on ``home``, the links) of a task on the legal topics and qrels, open for a day,
    scored by nDCG@10 with 2 submissions a team; ``options`` add to or replace the definition's
    fields, ``baselines`` (names of the sample's runs) are stored as the task's baselines."""
    baselines = [(name, LEGAL / f"{name}.run") for name in options.pop("baselines", ())]
    fields = dict(title=title, closes=time.time() + 86400, measures=("nDCG@10",), total=2) | options
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(home)}))
    links = tasks.create(TaskDefinition(**fields), topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt",
                         baselines=baselines)
    return tasks, links


def ok(at):
    """The AppTest ``at`` after a run that raised nothing."""
    assert not at.exception, "\n".join(e.value for e in at.exception)
    return at


def texts(at) -> str:
    """Everything the run wrote as text: markdown, captions, subheaders, tables, errors, successes."""
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [s.value for s in at.subheader]
    parts += [str(t.value.to_dict()) for t in at.table] + [e.value for e in at.error] + [s.value for s in at.success]
    return "\n".join(map(str, parts))
