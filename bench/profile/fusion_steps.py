"""The Fusion page's computations on a stored workspace, step by step: wall, user and system CPU
seconds, minor faults and RSS of each.

    python bench/profile/fusion_steps.py [--home /tmp/bd] [--collection dev]

Reads the collection's first two runs as their ranked caches (as the page does), then
``fusion.prepare``, ``fusion.fuse`` (RRF, k = 60) and the fused run's evaluation on the default
measures. Run it twice in a row to see the host's part: on a virtual machine whose freed memory
goes back to the host, the second run's pages were freed moments before by the first
(RESULTS.md, round 9). Needs a workspace made by ``python bench/bench_dashboard.py --big --home DIR``
that no server has open.

numpy's arrays come in small pages, as in the servers (:func:`metrics.io.memory.no_huge_pages`);
``NUMPY_MADVISE_HUGEPAGE=1 python bench/profile/fusion_steps.py`` measures them in huge pages.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import metrics  # noqa: E402
from metrics.analysis import fusion, fusion_kernels  # noqa: E402
from metrics.io.memory import no_huge_pages  # noqa: E402
from metrics.store import Workspace  # noqa: E402


def rss_mb() -> float:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096 / 1e6


def step(label: str, work):
    before, started, rss = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter(), rss_mb()
    out = work()
    after = resource.getrusage(resource.RUSAGE_SELF)
    print(f"{label:9s} {time.perf_counter() - started:5.2f} s  user {after.ru_utime - before.ru_utime:4.2f} s  "
          f"system {after.ru_stime - before.ru_stime:4.2f} s  minor faults {after.ru_minflt - before.ru_minflt:7,d}  "
          f"RSS {rss:6,.0f} -> {rss_mb():6,.0f} MB", flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("/tmp/bd"))
    parser.add_argument("--collection", default="dev")
    args = parser.parse_args()
    no_huge_pages()
    ws = Workspace(args.home / "workspace.duckdb")
    inputs = [(r.name, r.digest) for r in ws.runs(args.collection)][:2]
    qrels = step("qrels", lambda: ws.load_qrels(args.collection))
    ranked = step("ranked", lambda: [ws.load_ranked(args.collection, n, digest=d) for n, d in inputs])
    pool = step("prepare", lambda: fusion.prepare(
        [fusion_kernels.RankedInput(n, d, r) for (n, d), r in zip(inputs, ranked)]))
    fused = step("fuse", lambda: fusion.fuse(pool, "rrf", k=60))
    measures = [metrics.with_gain(m, "exp") for m in metrics.DEFAULT_MEASURES]
    step("evaluate", lambda: metrics.evaluate(qrels, {"fused": fused.run}, measures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
