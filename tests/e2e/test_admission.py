"""Fair under a burst: 20 websocket clients (bench/stclient.py, Streamlit's own protocol) open a
lesson on one shared-mode server, one arriving after the other within about a second; script
runs are admitted in order of arrival, so the early arrivals are ready first, and the late ones
are told their place in the queue. Order statistics only, never times."""
from __future__ import annotations

import asyncio
import sys
import time

from scipy.stats import kendalltau

from tests.e2e.helpers import REPO_ROOT, run_async

sys.path.insert(0, str(REPO_ROOT / "bench"))
from stclient import AppSession  # noqa: E402

CLIENTS = 20


async def arrive_one_after_another(url: str) -> list[dict]:
    """Each client asks for its first run once the previous one has asked (and 50 ms later)."""
    asked = [asyncio.Event() for _ in range(CLIENTS)]
    t0 = time.perf_counter()

    class Student(AppSession):
        index = 0

        async def rerun(self, widget_states) -> None:
            await super().rerun(widget_states)
            asked[self.index].set()

    async def one(i: int) -> dict:
        if i:
            await asked[i - 1].wait()
            await asyncio.sleep(0.05)
        student = Student(url, timeout=600)
        student.index = i
        await student.open()
        out = {"arrival": i, "ready": time.perf_counter() - t0,
               "queued": any("in the queue" in s.text for s in student.shown),
               "exceptions": [s.text for s in student.shown if s.kind == "exception"]}
        await student.close()
        return out

    return await asyncio.gather(*(one(i) for i in range(CLIENTS)))


def test_early_arrivals_finish_first(app_server_factory):
    server = app_server_factory(env={"NDCG_LAB_MODE": "shared"})
    run_async(arrive_one_after_another(f"{server.url}/learn?lesson=discount"))      # warm: imports, caches
    students = run_async(arrive_one_after_another(f"{server.url}/learn?lesson=discount"))
    assert [s["exceptions"] for s in students if s["exceptions"]] == []
    ready_order = [s["arrival"] for s in sorted(students, key=lambda s: s["ready"])]
    tau = kendalltau(range(CLIENTS), ready_order).statistic
    assert tau > 0.8, ready_order
    assert set(ready_order[:5]) <= set(range(8)), ready_order         # the first five ready arrived early
    assert any(s["queued"] for s in students[CLIENTS // 2:])          # late arrivals were told their place
