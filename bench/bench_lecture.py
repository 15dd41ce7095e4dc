"""A lecture hall at once: students opening a lesson together, teams submitting within a minute,
on 1 and on 2 app processes behind nginx (``ndcg-lab app --replicas N``).

    python bench/bench_lecture.py                          # 1 and 2 processes; 100 and 300 students; 100 teams
    python bench/bench_lecture.py --processes 2 --students 20 --teams 0

Each student is a websocket session of Streamlit's own protocol (bench/stclient.py, no browser)
opening ``/learn?lesson=discount`` and waiting for its first script run to finish: "ready" is the
seconds from the burst's start to that. The supervisor warms every process before nginx opens
(:mod:`ndcg_lab.deploy.warm`: its first run imports the libraries); the bench's first session of
each process, measured apart, shows what is left of a cold start. Throughput is students per second of the
burst (count / the last one's ready time). The teams open their team links first, then submit
one run each (a cap of one) at random times within a minute (bench/bench_tasks.py's socket
class). Prints a Markdown section for bench/RESULTS.md with the machine's load. Run it alone,
under ``flock /tmp/bench.lock`` on a shared machine.
"""
from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import bench_tasks  # noqa: E402
import psutil  # noqa: E402
from bench_tasks import arrivals, socket_class  # noqa: E402
from stclient import AppSession  # noqa: E402

from metrics import settings  # noqa: E402
from metrics.tasks import TaskDefinition, Tasks  # noqa: E402
from ndcg_lab.deploy.nginx import COOKIE  # noqa: E402
from tests.e2e.replicas import Deployment  # noqa: E402

LESSON = "learn?lesson=discount"
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"


class Student(AppSession):
    """A session that records when its first run was asked for (its place in the arrivals), when
    the server started it (Streamlit's ``new_session`` message opens every run) and when the page
    itself began to arrive (its first element that is not the queue's note): the first student's
    wait split into the server reaching its run, the queue, and the page."""

    asked: float | None = None
    started: float | None = None
    paged: float | None = None

    async def rerun(self, widget_states) -> None:
        if self.asked is None:
            self.asked = time.perf_counter()
        await super().rerun(widget_states)

    def _dispatch(self, msg) -> None:
        seen = len(self.shown)
        super()._dispatch(msg)
        if self.started is None and msg.WhichOneof("type") == "new_session":
            self.started = time.perf_counter()
        if self.paged is None and any(s.kind not in ("empty", "") and "in the queue" not in s.text
                                      for s in self.shown[seen:]):
            self.paged = time.perf_counter()


async def open_one(url: str, route: str | None = None, timeout: float = 900.0) -> Student:
    student = Student(url, timeout=timeout)
    if route is not None:
        student.http.cookies.set(COOKIE, route)
    return await student.open()


async def burst(url: str, count: int, timeout: float = 900.0) -> dict:
    """``count`` students at once: each one's ready time and arrival order, errors, queue notes seen."""
    t0 = time.perf_counter()

    async def one(i: int):
        try:
            student = await open_one(url, timeout=timeout)
        except Exception as exc:   # noqa: BLE001 - a lost student is counted, not raised
            return {"error": f"{type(exc).__name__}: {exc}"}
        done = time.perf_counter() - t0
        queued = any("in the queue" in s.text for s in student.shown)
        out = {"ready": done, "asked": (student.asked or t0) - t0, "queued": queued,
               "started": (student.started or t0) - t0, "paged": (student.paged or t0) - t0,
               "exceptions": [s.text for s in student.shown if s.kind == "exception"]}
        await student.close()
        return out

    results = await asyncio.gather(*(one(i) for i in range(count)))
    ok = [r for r in results if "ready" in r]
    return {"count": count, "ok": ok, "errors": [r["error"] for r in results if "error" in r]
            + [e for r in ok for e in r["exceptions"]]}


def order_agreement(ok: list[dict]) -> float:
    """Kendall's tau between the order of arrival and the order of being ready."""
    from scipy.stats import kendalltau

    return float(kendalltau([r["asked"] for r in ok], [r["ready"] for r in ok]).statistic)


def timeline(ok: list[dict]) -> str:
    """Where the first ready student's wait went, and when the last run was asked for."""
    first = min(ok, key=lambda r: r["ready"])
    return (f"the first ready student asked at {first['asked']:.2f} s, its run started at {first['started']:.2f} s, "
            f"its page began at {first['paged']:.2f} s, ready at {first['ready']:.2f} s; the last run asked "
            f"for at {max(r['asked'] for r in ok):.2f} s, the last started at {max(r['started'] for r in ok):.2f} s")


def cpu_seconds(deployment: Deployment) -> dict[str, float]:
    """CPU seconds (user + system) so far of the deployment's app processes, and of this process
    (the bench's clients): what a student costs the server, apart from what the clients cost."""
    def spent(process: psutil.Process) -> float:
        times = process.cpu_times()
        return times.user + times.system
    return {"app": sum(spent(psutil.Process(deployment.pid_of(port))) for port in deployment.ports),
            "clients": spent(psutil.Process())}


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


async def warm(deployment: Deployment) -> list[float]:
    """One session per process, the first after the supervisor's warm-up: the seconds of each."""
    seconds = []
    for port in deployment.ports:
        began = time.perf_counter()
        student = await open_one(f"{deployment.url}/{LESSON}", route=str(deployment.ports.index(port)))
        seconds.append(time.perf_counter() - began)
        await student.close()
    return seconds


async def alone(url: str, times: int = 5) -> float:
    seconds = []
    for _ in range(times):
        began = time.perf_counter()
        student = await open_one(url)
        seconds.append(time.perf_counter() - began)
        await student.close()
    return statistics.median(seconds)


def teams_minute(deployment: Deployment, teams: int, folder: Path, seed: int = 7) -> dict:
    tasks = Tasks(settings.load({"NDCG_LAB_HOME": str(deployment.home), "NDCG_LAB_PUBLIC_URL": f"{deployment.url}/"}))
    links = tasks.create(TaskDefinition(title="Lecture", closes=time.time() + 3600, total=1),
                         topics=LEGAL / "topics.tsv", qrels=LEGAL / "qrels.txt")
    team_links = [tasks.join(links.join, f"T{i}") for i in range(teams)]
    runs = []
    for i in range(teams):
        path = folder / f"t{i}.run"
        path.write_text("".join(" ".join(line.split()[:5] + [f"t{i}"]) + "\n"
                                for line in (LEGAL / "dense.run").read_text().splitlines()))
        runs.append(path)
    bench_tasks.SERVER[:] = [psutil.Process(deployment.pid_of(deployment.ports[0]))]   # its CPU note
    began = time.perf_counter()
    sessions = asyncio.run(socket_class(team_links, runs, arrivals(teams, 60.0, seed), 10, 2, []))
    wall = time.perf_counter() - began
    results = [r for s in sessions for r in s["results"]]
    seconds = [x for s in sessions for x in s["seconds"]]
    stored = [s for s in __import__("metrics.tasks.views", fromlist=["view"]).view(
        tasks.open(links.instructor)).submissions if s.team is not None]
    return {"teams": teams, "stored": results.count("stored"), "refused": results.count("refused"),
            "other": results.count("other"), "kept": len(stored), "median": statistics.median(seconds),
            "max": max(seconds), "wall": wall}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--students", type=int, nargs="+", default=[100, 300])
    parser.add_argument("--teams", type=int, default=100)
    args = parser.parse_args(argv)
    lines = [f"Machine: {os.cpu_count()} cores; load average before: {load()}", "",
             "| processes | students at once | first ready s | median s | p90 s | max s | students/s | errors "
             "| queue notes | tau(arrival, ready) | load after |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    extra = []
    for processes in args.processes:
        with tempfile.TemporaryDirectory(prefix="ndcg-lab-lecture-") as scratch:
            deployment = Deployment(Path(scratch) / "home", replicas=processes).start()
            try:
                url = f"{deployment.url}/{LESSON}"
                cold = asyncio.run(warm(deployment))
                single = asyncio.run(alone(url))
                extra.append(f"- {processes} process(es): first session of each process after its warm-up "
                             f"{', '.join(f'{c:.2f}' for c in cold)} s; one student alone, warm: median {single:.2f} s")
                for count in args.students:
                    before = cpu_seconds(deployment)
                    result = asyncio.run(burst(url, count))
                    spent = {k: v - before[k] for k, v in cpu_seconds(deployment).items()}
                    ready = sorted(r["ready"] for r in result["ok"])
                    queued = sum(r["queued"] for r in result["ok"])
                    lines.append(
                        f"| {processes} | {count} | {ready[0]:.2f} | {statistics.median(ready):.2f} "
                        f"| {statistics.quantiles(ready, n=10, method='inclusive')[-1]:.2f} | {ready[-1]:.2f} "
                        f"| {len(ready) / ready[-1]:.1f} | {len(result['errors'])} "
                        f"| {queued} | {order_agreement(result['ok']):.2f} | {load()} |")
                    print(lines[-1], flush=True)
                    extra.append(f"- {processes} process(es), {count} at once: {timeline(result['ok'])}; CPU "
                                 f"seconds of the app processes {spent['app']:.1f} ({1000 * spent['app'] / count:.0f} "
                                 f"ms a student), of the bench's clients {spent['clients']:.1f}")
                    print(extra[-1], flush=True)
                    time.sleep(5)
                if args.teams:
                    t = teams_minute(deployment, args.teams, Path(scratch))
                    extra.append(f"- {processes} process(es), {t['teams']} teams submitting twice within a minute "
                                 f"(cap 1): {t['stored']} stored, {t['refused']} refused, {t['other']} other; "
                                 f"{t['kept']} kept in the task; answer median {t['median']:.2f} s, max "
                                 f"{t['max']:.2f} s; load after {load()}")
                    print(extra[-1], flush=True)
            finally:
                deployment.stop()
    print("\n".join(lines + [""] + extra))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
