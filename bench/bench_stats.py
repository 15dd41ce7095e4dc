"""Time metrics.stats on MS-MARCO-dev-sized comparisons, beside ranx's and scipy's randomisation tests.

    python bench/bench_stats.py                       # 7,000 queries, 4 systems, 10,000 permutations
    python bench/bench_stats.py --repeats 5 --no-peers

The target: Fisher's randomisation test with 10,000 permutations over 7,000 queries
for 4 systems against a baseline in under 2 s. Per-query values are seeded synthetic ones shaped
like MS MARCO dev's RR@10 (most queries 0 or 1/rank; systems change about a third of the queries),
so every comparison takes the sampled path (far more than 16 non-zero differences). Each row is
the median of ``--repeats`` timed calls (the peers: ``--peer-repeats``, default 1, as each takes
about a minute) after one untimed warm-up (numba JIT for ranx). The
reproducibility column calls the test twice with the same seed and says whether the p-values
agree. Prints a Markdown table; the lead records it in bench/RESULTS.md.
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

from metrics import stats  # noqa: E402


def per_query_values(n_queries: int, n_systems: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(baseline (n,), systems (n, m)): RR@10-like values; each system moves ~1/3 of the queries."""
    rng = np.random.default_rng(seed)

    def rr(size):
        rank = rng.geometric(0.35, size)
        return np.where(rank <= 10, 1.0 / rank, 0.0) * (rng.random(size) < 0.75)

    base = rr(n_queries)
    systems = np.empty((n_queries, n_systems))
    for j in range(n_systems):
        moved = rng.random(n_queries) < 0.33
        systems[:, j] = np.where(moved, rr(n_queries), base)
    return base, systems


def timed(fn, repeats: int) -> tuple[float, object]:
    fn()  # warm-up: imports, JIT, caches
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=7000)
    p.add_argument("--systems", type=int, default=4)
    p.add_argument("--permutations", type=int, default=10_000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--peer-repeats", type=int, default=1,
                   help="timed calls of the peers (each takes about a minute on 2 cores)")
    p.add_argument("--no-peers", action="store_true", help="time metrics.stats only")
    args = p.parse_args(argv)

    base, systems = per_query_values(args.queries, args.systems)
    diffs = systems - base[:, None]
    n, m, perms = args.queries, args.systems, args.permutations
    rows = []

    def row(name, seconds, p_values, reproducible, note=""):
        rows.append((name, seconds, p_values, reproducible, note))

    t, p1 = timed(lambda: stats.randomization_pvalues(diffs, permutations=perms, seed=0), args.repeats)
    p2 = stats.randomization_pvalues(diffs, permutations=perms, seed=0)
    row(f"ours: randomization_pvalues, {m} systems in one call", t, p1, bool(np.array_equal(p1, p2)),
        "one seeded sign matrix shared by all systems; byte-lookup sums")
    t, p1 = timed(lambda: [stats.randomization_pvalues(diffs[:, j], permutations=perms, seed=0) for j in range(m)],
                  args.repeats)
    row("ours: randomization_pvalues, one system at a time", t, np.array(p1), True, "same p-values as above")
    t, p1 = timed(lambda: stats.ttest_pvalues(diffs), args.repeats)
    row("ours: paired t-test", t, p1, True)
    t, p1 = timed(lambda: stats.wilcoxon_pvalues(diffs), args.repeats)
    row("ours: Wilcoxon (scipy per system)", t, p1, True)
    t, p1 = timed(lambda: stats.bootstrap_pvalues(diffs, resamples=perms, seed=0), args.repeats)
    row(f"ours: studentised bootstrap test, {perms:,} resamples", t, p1,
        bool(np.array_equal(p1, stats.bootstrap_pvalues(diffs, resamples=perms, seed=0))))
    t, _ = timed(lambda: stats.bootstrap_ci(diffs, resamples=perms, seed=0), args.repeats)
    row(f"ours: bootstrap 95% CI of the mean difference, {perms:,} resamples", t, None, True)

    if not args.no_peers:
        try:
            from ranx.statistical_tests import fisher_randomization_test

            def ranx_all():
                return np.array([fisher_randomization_test(base, systems[:, j], n_permutations=perms,
                                                           max_p=0.05, random_seed=42)[0] for j in range(m)])

            t, p1 = timed(ranx_all, args.peer_repeats)
            row("ranx: fisher_randomization_test per system", t, p1, bool(np.array_equal(p1, ranx_all())),
                f"numba, parallel over {os.cpu_count()} cores; JIT warmed up")
        except ImportError:
            row("ranx: not installed", float("nan"), None, None)
        from scipy.stats import permutation_test

        def scipy_all():
            rng = np.random.default_rng(0)
            return np.array([permutation_test((systems[:, j], base), lambda x, y, axis: np.mean(x - y, axis=axis),
                                              permutation_type="samples", n_resamples=perms, vectorized=True,
                                              batch=500, rng=rng).pvalue for j in range(m)])

        t, p1 = timed(scipy_all, args.peer_repeats)
        row("scipy: permutation_test(permutation_type='samples') per system", t, p1,
            bool(np.array_equal(p1, scipy_all())), "vectorised, batch=500")

    print(f"# metrics.stats, {n:,} queries x {m} systems vs a baseline, {perms:,} permutations, "
          f"median of {args.repeats} (peers: {args.peer_repeats})")
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}\n")
    print("| what | time (s) | p-values | same p twice (same seed) | note |")
    print("|---|---:|---|---|---|")
    for name, seconds, p_values, reproducible, note in rows:
        shown = "" if p_values is None else ", ".join(f"{v:.4f}" for v in np.ravel(p_values)[:m])
        same = "" if reproducible is None else ("yes" if reproducible else "**no**")
        print(f"| {name} | {seconds:.3f} | {shown} | {same} | {note} |")
    target = rows[0][1]
    print(f"\nTarget: randomisation test, {perms:,} permutations, {n:,} queries, {m} systems: "
          f"{target:.3f} s ({'under' if target < 2 else 'OVER'} 2 s).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
