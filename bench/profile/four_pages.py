"""Time and profile the dashboard's pages in AppTest on the dev run and its re-ranking.

    py-spy record --format raw -o pages.txt -- python bench/profile/four_pages.py --queries 1000 compare
    python bench/profile/four_pages.py --summary pages.txt     # the inclusive samples of the project's frames

Stores a collection "dev" of bench/data/dev-qrels.txt with bench/data/dev-run.txt and dev-rerank.txt
(``python bench/bench_dashboard.py --big`` writes it) in a personal workspace under ``--home`` (once;
``--queries N`` keeps the first N queries' lines of both runs, all when 0), then runs each named page
in AppTest as the browser does: the leaderboard first, then the page (first visit), the leaderboard and
the page again (cached), printing the seconds of each. AppTest runs the script in a thread of its
own, which cProfile does not see: run the script under ``py-spy record`` (all threads) and read the
samples with ``--summary``.
"""
from __future__ import annotations

import argparse
import collections
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"
VIEWS = {"compare": "views/compare.py", "judgments": "views/judgments.py", "query": "views/query.py",
         "curves": "views/curves.py", "where": "views/where.py", "behaviour": "views/behaviour.py",
         "fusion": "views/fusion.py", "leaderboard": "views/leaderboard.py"}


def head(source: Path, target: Path, queries: int) -> Path:
    """The lines of ``source`` of its first ``queries`` query ids (a run is grouped by query)."""
    if queries <= 0:
        return source
    seen: set[str] = set()
    with open(source) as src, open(target, "w") as out:
        for line in src:
            qid = line.split(" ", 1)[0]
            if qid not in seen:
                if len(seen) == queries:
                    break
                seen.add(qid)
            out.write(line)
    return target


def store(home: Path, queries: int) -> None:
    """The collection "dev" with the two runs in the personal workspace of ``home`` (once)."""
    from metrics import io
    from metrics.store import Workspace

    ws = Workspace(home / "workspace.duckdb")
    try:
        if ws.has_collection("dev"):
            return
        started = time.perf_counter()
        ws.create_collection("dev", io.read_qrels(DATA / "dev-qrels.txt"))
        runs = [io.read_run(head(DATA / f"{name}.txt", home / f"{name}.txt", queries), name=name)
                for name in ("dev-run", "dev-rerank")]
        ws.add_runs("dev", runs)
        print(f"stored: {time.perf_counter() - started:.1f} s", flush=True)
    finally:
        ws.close()


def timed(at, page: str) -> float:
    started = time.perf_counter()
    at.switch_page(page).run()
    if at.exception:
        raise RuntimeError(f"{page}: {at.exception}")
    return time.perf_counter() - started


def summary(path: Path, top: int) -> None:
    """Inclusive samples of each frame of metrics/ or ndcg_lab/ in a py-spy raw (collapsed) file."""
    inclusive: collections.Counter[str] = collections.Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or "ScriptRunner" not in stack and "script_runner" not in stack:
            continue
        n = int(count)
        total += n
        frames = {f.rsplit(":", 1)[0] + ")" if " (" in f else f for f in stack.split(";")}
        for frame in frames:
            if "metrics/" in frame or "ndcg_lab/" in frame or "numpy" in frame or "pandas" in frame:
                inclusive[frame] += n
    print(f"{total} samples of the script thread")
    for frame, n in inclusive.most_common(top):
        print(f"{n:7d} {100 * n / max(total, 1):5.1f}%  {frame}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("pages", nargs="*", help=", ".join(VIEWS))
    parser.add_argument("--home", type=Path, default=Path("/tmp/ndcg-lab-four-pages"))
    parser.add_argument("--queries", type=int, default=0, help="the first N queries of each run (0: all)")
    parser.add_argument("--summary", type=Path, help="print the samples of a py-spy raw file and stop")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--cached", type=int, default=1,
                        help="cached visits of each page (several, so that their samples outweigh the first's)")
    args = parser.parse_args(argv)
    if set(args.pages) - set(VIEWS):
        parser.error(f"pages are among {', '.join(VIEWS)}")
    if args.summary:
        summary(args.summary, args.top)
        return 0
    args.home.mkdir(parents=True, exist_ok=True)
    os.environ["NDCG_LAB_HOME"] = str(args.home)
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    store(args.home, args.queries)
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "ndcg_lab" / "app.py"), default_timeout=1800)
    at.query_params["collection"] = "dev"
    started = time.perf_counter()
    at.run()
    print(f"leaderboard: {time.perf_counter() - started:.1f} s", flush=True)
    for name in args.pages:
        first = timed(at, VIEWS[name])
        cached = []
        for _ in range(args.cached):
            timed(at, "views/leaderboard.py")
            cached.append(timed(at, VIEWS[name]))
        print(f"{name}: first visit {first:.1f} s, cached {', '.join(f'{c:.1f}' for c in cached)} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
