"""The cap under contention: 20 submissions of one team at once leave exactly the cap stored,
from 20 threads of one process (the server) and from 20 processes (commands beside a server)."""
from __future__ import annotations

import multiprocessing
import threading

from metrics import settings
from metrics.tasks import SubmissionRefused, Tasks, views
from tests.metrics.tasks.conftest import LEGAL, make_task

CAP = 3
RUN = (LEGAL / "dense.run").read_bytes()


def _one(home: str, link: str, i: int) -> str:
    """One submission with a manager of its own (as a separate session or command would)."""
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": home}))
    try:
        tasks.open(link).submit(RUN, f"run {i}", f"run{i}.run")
        return "stored"
    except SubmissionRefused as exc:
        return "refused" if "used all" in exc.reason else f"other: {exc}"
    except Exception as exc:  # noqa: BLE001 - reported as a result, the test asserts there is none
        return f"error: {type(exc).__name__}: {exc}"
    finally:
        tasks.close()


def _child(args):
    return _one(*args)


def _stored(tasks, links) -> int:
    return len([s for s in views.view(tasks.open(links.instructor)).submissions if s.team is not None])


def test_twenty_threads_leave_exactly_the_cap(tmp_path):
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path)}))
    links = make_task(tasks, total=CAP)
    team = tasks.join(links.join, "Alpha")
    results = [None] * 20
    barrier = threading.Barrier(20)

    def go(i):
        barrier.wait()
        results[i] = _one(str(tmp_path), team, i)

    threads = [threading.Thread(target=go, args=(i,)) for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == ["refused"] * (20 - CAP) + ["stored"] * CAP
    assert _stored(tasks, links) == CAP


def test_twenty_processes_leave_exactly_the_cap(tmp_path):
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(tmp_path)}))
    links = make_task(tasks, total=CAP)
    team = tasks.join(links.join, "Alpha")
    tasks.close()
    # fork: the children start with the modules imported and no task file open
    with multiprocessing.get_context("fork").Pool(20) as pool:
        results = pool.map(_child, [(str(tmp_path), team, i) for i in range(20)])
    assert sorted(results) == ["refused"] * (20 - CAP) + ["stored"] * CAP
    assert _stored(tasks, links) == CAP
