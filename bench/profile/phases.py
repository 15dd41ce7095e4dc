"""In-process phases of the 7M-line eval: read_run, read_qrels, rank, evaluate_ranked, with peaks.

    python bench/profile/phases.py [--tracemalloc]

Prints wall and CPU seconds (all threads) per phase and the process's peak RSS (ru_maxrss)
after each phase. CPU seconds are the steadier figure on a shared machine.
"""
from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

SUITE = ["nDCG@5", "nDCG@10", "nDCG@20", "nDCG@100", "nDCG@1000", "AP", "RR",
         "R@10", "R@100", "R@1000", "P@5", "P@10"]


def rss() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--run", default=str(ROOT / "bench/data/dev-run.txt"))
    p.add_argument("--qrels", default=str(ROOT / "bench/data/dev-qrels.txt"))
    p.add_argument("--tracemalloc", action="store_true")
    args = p.parse_args()
    from metrics import io
    from metrics.evaluation import evaluate_ranked
    from metrics.ranking import rank
    print(f"after import: peak RSS {rss():.0f} MB")
    if args.tracemalloc:
        import tracemalloc
        tracemalloc.start()
    clock = [time.perf_counter(), time.process_time()]
    start = list(clock)

    def phase(label: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        print(f"{label:16s} wall {wall - clock[0]:6.3f} s  cpu {cpu - clock[1]:6.3f} s  peak RSS {rss():5.0f} MB")
        clock[:] = [wall, cpu]

    qrels = io.read_qrels(args.qrels)
    phase("read_qrels")
    run = io.read_run(args.run)
    phase("read_run")
    ranked = rank(run, qrels)
    phase("rank")
    values = evaluate_ranked(ranked, SUITE)
    phase("evaluate_ranked")
    print(f"total wall {time.perf_counter() - start[0]:.3f} s, cpu {time.process_time() - start[1]:.3f} s; "
          f"mean nDCG@10 {values['nDCG@10'].mean():.6f}")
    if args.tracemalloc:
        import tracemalloc
        print(f"tracemalloc peak {tracemalloc.get_traced_memory()[1] / 2**20:.0f} MB")


if __name__ == "__main__":
    main()
