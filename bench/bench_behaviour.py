"""Time the measure-behaviour statistics on a 30-system, 250-topic score matrix.

    python bench/bench_behaviour.py                  # 30 systems, 250 topics, 1,000 resamples per pair
    python bench/bench_behaviour.py --repeats 3

The target: discriminative power of one measure (the paired bootstrap ASL and the randomised
Tukey HSD ASL of all 435 pairs, 1,000 resamples each), swap rates at five topic-set sizes
(1,000 trials each) and the topic-set-size designs, in under 30 s. The score matrix is seeded
synthetic nDCG-like values (a system effect, a topic effect and noise, clipped to [0, 1]).
Each row is the median of ``--repeats`` timed calls after one untimed warm-up (imports).
Prints a Markdown table for bench/RESULTS.md.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metrics.stats import behaviour  # noqa: E402


def score_matrix(topics: int, systems: int, seed: int = 0) -> np.ndarray:
    """topics x systems nDCG-like values: 0.45 + system effect (sd 0.05) + topic effect (sd 0.15) + noise (sd 0.1)."""
    rng = np.random.default_rng(seed)
    x = 0.45 + rng.normal(0, 0.05, systems)[None, :] + rng.normal(0, 0.15, topics)[:, None]
    return np.clip(x + rng.normal(0, 0.1, (topics, systems)), 0.0, 1.0)


def timed(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--topics", type=int, default=250)
    p.add_argument("--systems", type=int, default=30)
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    x = score_matrix(args.topics, args.systems, args.seed)
    names = [f"s{i}" for i in range(args.systems)]
    pairs = args.systems * (args.systems - 1) // 2
    rows = [
        ("paired bootstrap ASL, all pairs", lambda: behaviour.pair_asl(x, names, resamples=args.resamples,
                                                                        seed=args.seed)),
        ("randomised Tukey HSD ASL", lambda: behaviour.tukey_asl(x, trials=args.resamples, seed=args.seed)),
        ("swap rates, 5 topic-set sizes", lambda: behaviour.swap_rates(x, trials=args.resamples, seed=args.seed)),
        ("topic-set size (t-test, ANOVA)", lambda: behaviour.topics_needed(x)),
        ("discriminative_power (all of the above)",
         lambda: behaviour.discriminative_power(x, names, resamples=args.resamples, seed=args.seed)),
    ]
    print(f"{args.systems} systems ({pairs} pairs), {args.topics} topics, {args.resamples:,} resamples per pair, "
          f"seed {args.seed}; median of {args.repeats}")
    print(f"Machine: {os.cpu_count()} cores, Python {platform.python_version()}, numpy {np.__version__}\n")
    print("| step | seconds |\n|---|---:|")
    for label, fn in rows:
        print(f"| {label} | {timed(fn, args.repeats):.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
