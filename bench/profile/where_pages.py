"""Profile the computations of the page "Where it differs" on the 7M-line dev run and a re-ranking of it.

    python bench/profile/where_pages.py [--checkout DIR] [--top 18] headroom bands detect

Reads bench/data/dev-qrels.txt, bench/data/dev-run.txt and bench/data/dev-rerank.txt (written by
``python bench/bench_dashboard.py --big``: dev-run with its top 100 of every query re-scored), then
runs each named analysis once under cProfile with the page's parameters (headroom at depth 100 on
nDCG(dcg=exp-log2)@10; rank bands to k = 100 with edges 3,10,20,100 and exponential gain; depth
detection) and prints its wall seconds, the process' peak RSS so far and the profile's top entries
by cumulative time. ``--checkout`` imports ``metrics`` from another checkout (to compare code).
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench" / "data"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("analyses", nargs="+", choices=("headroom", "bands", "detect"))
    parser.add_argument("--checkout", type=Path, default=ROOT, help="import metrics from this checkout")
    parser.add_argument("--top", type=int, default=18, help="profile entries shown (cumulative time)")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.checkout))
    from metrics import io
    from metrics.analysis import bands as bands_analysis
    from metrics.analysis import headroom as headroom_analysis
    from metrics.ranking import rank

    started = time.perf_counter()
    qrels = io.read_qrels(DATA / "dev-qrels.txt")
    first = io.read_run(DATA / "dev-run.txt", name="dev-run")
    other = io.read_run(DATA / "dev-rerank.txt", name="dev-rerank")
    print(f"read: {time.perf_counter() - started:.1f} s", flush=True)
    for analysis in args.analyses:
        profile = cProfile.Profile()
        started = time.perf_counter()
        profile.enable()
        if analysis == "headroom":
            result = headroom_analysis.headroom(qrels, first, other, depth=100, measure="nDCG(dcg=exp-log2)@10")
            shown = f"share {result.summary['share']:.6f}"
        elif analysis == "bands":
            split = bands_analysis.bands(qrels, first, other, k=100, edges=[3, 10, 20, 100], gain="exp")
            shown = f"total {split.by_band['total'].sum():.6f}, only one {len(split.only_one)}"
        else:
            shown = f"depth {headroom_analysis.detect_depth(rank(first, qrels), rank(other, qrels))}"
        profile.disable()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(f"{analysis}: {time.perf_counter() - started:.1f} s ({shown}); peak RSS so far {peak:,.0f} MB")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
