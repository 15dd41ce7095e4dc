"""Fair under a burst: 20 websocket clients (bench/stclient.py, Streamlit's own protocol) connect
to one shared-mode server, then ask for their first run of a page within a fraction of one run's
work (one every 20 ms, on a page whose run costs most of a second of the process). Without
admission the 20 runs share the process and finish together, in an order the scheduler draws
(Kendall's tau about 0.45); with it, runs are admitted in order of arrival, so the early arrivals
are ready first and the late ones are told their place in the queue. Order statistics only,
never times."""
from __future__ import annotations

import asyncio
import sys
import time

from scipy.stats import kendalltau

from tests.e2e.helpers import REPO_ROOT, run_async

sys.path.insert(0, str(REPO_ROOT / "bench"))
from stclient import AppSession  # noqa: E402

CLIENTS = 20
GAP = 0.02        # seconds between two arrivals: the burst lasts 0.4 s, half of one run
PAGE = "behaviour"  # Measure behaviour: each run computes its measures' curves (about 0.8 s of CPU alone)
ADMISSION: dict[str, str] = {}   # the server's default: admission on


async def burst(url: str) -> list[dict]:
    """Every client connects first; then each asks for its run, GAP after the one before."""
    students = [AppSession(url, timeout=600) for _ in range(CLIENTS)]
    await asyncio.gather(*(s.connect() for s in students))
    t0 = time.perf_counter()

    async def ready(i: int, student: AppSession) -> dict:
        await student.idle()
        return {"arrival": i, "ready": time.perf_counter() - t0,
                "queued": any("in the queue" in s.text for s in student.shown),
                "exceptions": [s.text for s in student.shown if s.kind == "exception"]}

    waiting = []
    for i, student in enumerate(students):
        await student.rerun([])
        waiting.append(asyncio.create_task(ready(i, student)))
        await asyncio.sleep(GAP)
    try:
        return list(await asyncio.gather(*waiting))
    finally:
        await asyncio.gather(*(s.close() for s in students))


async def warm(url: str) -> None:
    """One run alone: the process pays its imports and caches before the burst."""
    student = AppSession(url, timeout=600)
    await student.open()
    await student.close()


def test_early_arrivals_finish_first(app_server_factory):
    server = app_server_factory(env={"NDCG_LAB_MODE": "shared", **ADMISSION})
    url = f"{server.url}/{PAGE}"
    run_async(warm(url))
    students = run_async(burst(url))
    assert [s["exceptions"] for s in students if s["exceptions"]] == []
    ready_order = [s["arrival"] for s in sorted(students, key=lambda s: s["ready"])]
    tau = kendalltau(range(CLIENTS), ready_order).statistic
    assert tau > 0.8, ready_order
    assert set(ready_order[:5]) <= set(range(8)), ready_order         # the first five ready arrived early
    assert set(ready_order[-5:]) <= set(range(CLIENTS - 8, CLIENTS)), ready_order   # and the last five late
    assert any(s["queued"] for s in students[CLIENTS // 2:])          # late arrivals were told their place
