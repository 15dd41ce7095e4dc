"""Server memory with several big sessions: one shared-mode server, N visitors each on a workspace of
their own holding the MS MARCO dev-shaped qrels and two 7M-line runs, every page visited once.

    python bench/bench_sessions.py                          # this checkout, 1 then 4 sessions
    python bench/bench_sessions.py --sessions 1             # one session only
    python bench/bench_sessions.py --checkout /tmp/old      # the app of another checkout (git archive)
    python bench/bench_sessions.py --pages "Leaderboard,Fusion,Judgments"   # some pages only, in this order

Each workspace is made before the server starts, through this tree's library
(``WorkspaceRegistry.create`` in shared mode; the qrels and the two runs stored in the first as the
Data page stores them, its file copied to the others; each builds its own ranked cache on its first
visit, in the server): bench/data/dev-qrels.txt, bench/data/dev-run.txt and its re-ranking at depth 100
(``reranking()`` of bench/bench_dashboard.py). Then ``streamlit run app.py`` starts in shared
mode (the harness of tests/e2e) and each visitor opens every page of :data:`PAGES` in turn with
the websocket client of bench/stclient.py (no browser: what is measured is the server), each
page with the workspace's link and the dev collection in the address, until its script run ends.

The server's memory is read from /proc: RSS of the process (and of its children), and from
``/proc/<pid>/smaps_rollup`` its PSS and the shared and private parts; file-backed pages of the
memory-mapped ranked caches count in RSS but are the page cache's. Sampled: the baseline (the
server after a first visit that loads the samples), after the first session's pages, after every
session's; the peak RSS is polled every 0.5 s. Nothing is asserted; the figures go to RESULTS.md.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = {   # title -> the page's address (Streamlit's url path of views/<name>.py)
    "Leaderboard": "", "Curves": "curves", "Compare": "compare", "Where it differs": "where", "Fusion": "fusion",
    "Query explorer": "query", "Judgments": "judgments", "Measure behaviour": "behaviour",
}
COLLECTION = "dev"
QUOTA_BYTES = str(16 * 10**9)   # a 7M-line run is about 150 MB stored; the default quota is 2 GB
PAGE_TIMEOUT = 1800.0


def load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def memory(pid: int) -> dict[str, float]:
    """MB of the server process: ``rss`` (with its children), and from smaps_rollup ``pss``,
    ``shared`` (clean + dirty), ``private`` (clean + dirty) and ``file`` (RSS backed by files:
    the memory maps)."""
    import psutil

    process = psutil.Process(pid)
    rss = sum(p.memory_info().rss for p in [process, *process.children(recursive=True)])
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        key, value = line.split(":", 1)
        fields[key] = float(value.split()[0]) / 1024
    status = {k: float(v.split()[0]) / 1024 for k, v in (line.split(":", 1) for line in
              Path(f"/proc/{pid}/status").read_text().splitlines() if line.startswith(("RssFile", "RssAnon")))}
    return {"rss": rss / 2**20, "pss": fields.get("Pss", 0.0),
            "shared": fields.get("Shared_Clean", 0.0) + fields.get("Shared_Dirty", 0.0),
            "private": fields.get("Private_Clean", 0.0) + fields.get("Private_Dirty", 0.0),
            "file": status.get("RssFile", 0.0), "anon": status.get("RssAnon", 0.0)}


def shown(m: dict[str, float]) -> str:
    return (f"RSS {m['rss']:,.0f} MiB (anonymous {m['anon']:,.0f}, file-backed {m['file']:,.0f}), "
            f"PSS {m['pss']:,.0f}, shared {m['shared']:,.0f}, private {m['private']:,.0f}")


class Peak(threading.Thread):
    """The highest RSS of the server seen while it runs, polled every half second."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.rss, self.stopped = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(0.5):
            try:
                self.rss = max(self.rss, memory(self.pid)["rss"])
            except (OSError, ValueError):
                return


def prepare(home: Path, sessions: int) -> list[str]:
    """``sessions`` shared-mode workspaces under ``home``, each with the dev collection: their tokens.

    Run in a process of its own (:func:`prepared`): a shared-mode registry holds the home's lock until
    its process ends, and the server must take it."""
    from bench_dashboard import reranking

    import metrics
    from metrics import settings as settings_module
    from metrics.store import WorkspaceRegistry
    from ndcg_lab.ui.session import samples

    data = ROOT / "bench" / "data"
    second = reranking(data / "dev-run.txt")
    config = settings_module.load({"NDCG_LAB_MODE": "shared", "NDCG_LAB_HOME": str(home),
                                   "NDCG_LAB_QUOTA_BYTES": QUOTA_BYTES})
    registry = WorkspaceRegistry(config, samples=samples())
    tokens, paths = [], []
    try:
        started = time.perf_counter()
        qrels = metrics.read_qrels(data / "dev-qrels.txt")
        for i in range(sessions):
            access = registry.create()
            tokens.append(access.token)
            paths.append(Path(access.workspace.path))
            if i == 0:
                access.workspace.create_collection(COLLECTION, qrels)
                for path in (data / "dev-run.txt", second):
                    access.workspace.add_run(COLLECTION, metrics.read_run(path, name=path.stem))
        print(f"workspace 1: dev qrels and two 7M-line runs stored in {time.perf_counter() - started:.1f} s "
              f"(load {load()})", flush=True)
    finally:
        registry.close()
    for path in paths[1:]:   # the same content in every workspace: a copy of the first one's file
        shutil.copyfile(paths[0], path)
    return tokens


def prepared(home: Path, sessions: int) -> list[str]:
    """:func:`prepare` in a child process (its output shown); the tokens it printed last."""
    done = subprocess.run([sys.executable, __file__, "--prepare", str(home), "--sessions", str(sessions)],
                          stdout=subprocess.PIPE, text=True, check=True)
    *lines, tokens = done.stdout.strip().splitlines()
    print("\n".join(lines), flush=True)
    return json.loads(tokens)


async def visit(url: str, token: str, pid: int, pages: dict[str, str]) -> list[tuple[str, float, list[str]]]:
    """Every page of ``pages`` once, as one visitor: (title, seconds to the end of its first script run,
    errors shown)."""
    from stclient import AppSession

    out = []
    for title, path in pages.items():
        started = time.perf_counter()
        session = await AppSession(f"{url}/{path}?ws={token}&collection={COLLECTION}", timeout=PAGE_TIMEOUT).open()
        elapsed = time.perf_counter() - started
        errors = [f"{s.kind}: {s.text[:160]}" for s in session.shown if s.kind in ("exception", "alert")]
        await session.close()
        out.append((title, elapsed, errors))
        print(f"  {title}: {elapsed:.1f} s, then RSS {memory(pid)['rss']:,.0f} MiB"
              f"{' shown: ' + ' | '.join(errors) if errors else ''} (load {load()})", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=4, help="visitors, each on a workspace of their own")
    parser.add_argument("--checkout", type=Path, default=None,
                        help="the checkout whose app is measured (default: this one)")
    parser.add_argument("--pages", default=",".join(PAGES),
                        help=f"comma-separated page titles, visited in this order (default: all, {', '.join(PAGES)})")
    parser.add_argument("--prepare", type=Path, default=None, help=argparse.SUPPRESS)   # the child of prepared()
    args = parser.parse_args()
    unknown = [t for t in args.pages.split(",") if t.strip() not in PAGES]
    if unknown:
        parser.error(f"unknown pages {unknown}: choose from {', '.join(PAGES)}")
    pages = {t.strip(): PAGES[t.strip()] for t in args.pages.split(",")}
    app_root = (args.checkout or ROOT).resolve()
    sys.path[:0] = [str(ROOT), str(ROOT / "bench"), str(ROOT / "tests" / "e2e")]
    if args.prepare is not None:
        print(json.dumps(prepare(args.prepare, args.sessions)))
        return
    from helpers import AppServer

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "no git checkout: name the commit archived"
    print(f"command: {' '.join(['python', *sys.argv])}; app: {app_root} (this tree at {commit}); "
          f"load average before: {load()}", flush=True)
    home = Path(tempfile.mkdtemp(prefix="ndcg-lab-sessions-"))
    tokens = prepared(home, args.sessions)
    server = AppServer(home=home, app=str(app_root / "app.py"),
                       env={"NDCG_LAB_MODE": "shared", "NDCG_LAB_QUOTA_BYTES": QUOTA_BYTES})
    server.start()
    try:
        pid = server.process.pid
        from stclient import AppSession

        async def first() -> None:
            session = await AppSession(f"{server.url}/", timeout=PAGE_TIMEOUT).open()
            await session.close()

        asyncio.run(first())
        time.sleep(2)
        baseline = memory(pid)
        print(f"baseline (server after a first visit of the samples): {shown(baseline)}", flush=True)
        peak = Peak(pid)
        peak.start()
        totals = []
        for i, token in enumerate(tokens):
            print(f"session {i + 1}:", flush=True)
            rows = asyncio.run(visit(server.url, token, pid, pages))
            time.sleep(2)
            now = memory(pid)
            totals.append(now)
            print(f"after session {i + 1}: {shown(now)}; over the baseline: RSS {now['rss'] - baseline['rss']:,.0f} "
                  f"MiB, PSS {now['pss'] - baseline['pss']:,.0f} MiB; peak RSS so far {peak.rss:,.0f} MiB; "
                  f"pages {sum(t for _, t, _ in rows):.0f} s", flush=True)
        peak.stopped.set()
        print("\n| sessions | RSS MiB | over baseline | PSS MiB | anonymous | file-backed | peak RSS so far |")
        print("|---:|---:|---:|---:|---:|---:|---:|")
        print(f"| 0 (baseline) | {baseline['rss']:,.0f} | 0 | {baseline['pss']:,.0f} | {baseline['anon']:,.0f} | "
              f"{baseline['file']:,.0f} | |")
        for i, m in enumerate(totals):
            print(f"| {i + 1} | {m['rss']:,.0f} | {m['rss'] - baseline['rss']:,.0f} | {m['pss']:,.0f} | "
                  f"{m['anon']:,.0f} | {m['file']:,.0f} | |")
        print(f"peak RSS: {peak.rss:,.0f} MiB; load average after: {load()}")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
