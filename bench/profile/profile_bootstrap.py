"""The Compare page's cutoff profile: its resample means in the package's blocks and in the profile's.

    python bench/profile/profile_bootstrap.py

6,980 queries x 100 cutoffs (the MS MARCO dev shape, k = 1..100), 10,000 resamples, seed 42: the
seconds of ``metrics.stats.bootstrap_means`` (blocks of 2^16 counts, 9 resamples) and of
``metrics.stats.comparison._resample_means`` (the same counts in blocks of about 2^22), whether the
two agree to the bit on differences in eighths (every sum exact in any order), and how far apart
they are on random values (the last bits follow the matmul's shape).
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from metrics import stats  # noqa: E402
from metrics.stats import comparison  # noqa: E402


def main() -> None:
    rng = np.random.default_rng(5)
    d = rng.integers(-4, 5, (6980, 100)) / 8.0
    print("load", os.getloadavg())
    t = time.perf_counter()
    old = stats.bootstrap_means(d, resamples=10_000, seed=42)
    t_old = time.perf_counter() - t
    t = time.perf_counter()
    new = comparison._resample_means(d, 10_000, 42)
    t_new = time.perf_counter() - t
    print(f"old blocks of 9 resamples: {t_old:.2f} s; new blocks of {2**22 // 6980}: {t_new:.2f} s; "
          f"ratio {t_new / t_old:.3f}; identical on values in eighths: {np.array_equal(old, new)}")
    d = rng.random((6980, 100))
    new = comparison._resample_means(d, 10_000, 42)
    old = stats.bootstrap_means(d, resamples=10_000, seed=42)
    quantiles = [np.quantile(m, [0.025, 0.975], axis=0) for m in (old, new)]
    print(f"random values: max |difference| of the resample means {float(np.abs(new - old).max()):.3g}, "
          f"of their 2.5% and 97.5% quantiles {float(np.abs(quantiles[1] - quantiles[0]).max()):.3g}")
    print("load", os.getloadavg())


if __name__ == "__main__":
    main()
