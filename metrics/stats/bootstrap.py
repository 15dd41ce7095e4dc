"""Bootstrap over queries: resample counts drawn once per call, percentile intervals of means,
and Sakai's (2006) studentised paired bootstrap test."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..beside import ahead
from ..errors import MetricsError
from .common import (
    DEFAULT_LEVEL,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    as_diffs,
    check_count,
    check_level,
    paired_diffs,
    shaped,
)

# Resample-count elements per block (rows x queries): small blocks keep bincount and matmul in cache.
_RESAMPLE_BLOCK = 2**16


def resample_chunks(n_queries: int, resamples: int, seed: int = DEFAULT_SEED) -> Iterator[np.ndarray]:
    """Bootstrap resamples of the queries as multinomial count blocks (rows = resamples, float64).

    Row r holds how often each query is drawn in resample r (sum = n), so a
    resample's mean of any per-query column x is row @ x / n. Indices come
    from ``default_rng(seed).integers``, in order, independent of block size.
    """
    if n_queries < 1:
        raise MetricsError("bootstrap over zero queries", fix="evaluate at least one query")
    rows = int(np.clip(_RESAMPLE_BLOCK // n_queries, 1, resamples))
    sizes = [min(rows, resamples - start) for start in range(0, resamples, rows)]

    def draws() -> Iterator[np.ndarray]:
        rng = np.random.default_rng(seed)
        for size in sizes:
            yield rng.integers(0, n_queries, size=(size, n_queries))

    # the next blocks are drawn on a second thread while this one counts the last (the same draws)
    for size, picks in zip(sizes, ahead(n_queries * resamples, draws)):
        picks += np.arange(size)[:, None] * n_queries
        yield np.bincount(picks.ravel(), minlength=size * n_queries).reshape(size, n_queries).astype(np.float64)


def bootstrap_means(values, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples x columns) matrix of column means over bootstrap resamples of the rows (queries)."""
    x = np.asarray(values, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    return bootstrap_pass(x, None, check_count("resamples", resamples), seed)[0]


def bootstrap_ci(values, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 level: float = DEFAULT_LEVEL):
    """Percentile bootstrap interval of the mean of each column: ``(lower, upper)``.

    Pass per-query values for a system's mean, differences for the mean
    difference. Same seed, same interval.
    """
    level = check_level(level)
    x = np.asarray(values, dtype=np.float64)
    as_diffs(x)
    means = bootstrap_means(x, resamples=resamples, seed=seed)
    tail = (1.0 - level) / 2.0
    lower, upper = np.quantile(means, [tail, 1.0 - tail], axis=0)
    return (float(lower[0]), float(upper[0])) if x.ndim == 1 else (lower, upper)


def _studentised(mean: np.ndarray, var: np.ndarray, n: int) -> np.ndarray:
    """mean / sqrt(var / n), with 0/0 = 0 and x/0 = +-inf."""
    se = np.sqrt(np.maximum(var, 0.0) / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    return np.where(se > 0, t, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))


class _StudentisedBootstrap:
    """Counts resamples with |t*| >= |t| for Sakai's studentised paired bootstrap test, block by block."""

    def __init__(self, d: np.ndarray):
        n, m = d.shape
        self.n = n
        var = d.var(axis=0, ddof=1) if n > 1 else np.zeros(m)
        self.t_obs = np.abs(_studentised(d.mean(axis=0), var, n))
        w = d - d.mean(axis=0)
        # all differences equal: the shifted values are exactly zero, not rounding noise
        w[np.abs(w) <= 1e-12 * np.abs(d).max(axis=0)] = 0.0
        self.w, self.w2 = w, w * w
        self.extreme = np.zeros(m, dtype=np.int64)
        self.all_zero = ~d.any(axis=0)

    def update(self, counts: np.ndarray) -> None:
        s1 = counts @ self.w
        s2 = counts @ self.w2
        var = (s2 - s1 * s1 / self.n) / max(self.n - 1, 1)
        t = np.abs(_studentised(s1 / self.n, var, self.n))
        self.extreme += np.count_nonzero(t >= self.t_obs * (1 - 1e-12), axis=0)

    def pvalues(self, resamples: int) -> np.ndarray:
        p = (self.extreme + 1.0) / (resamples + 1.0)
        p[self.all_zero] = 1.0
        return p


def bootstrap_pass(values: np.ndarray | None, diffs: np.ndarray | None, resamples: int, seed: int):
    """One pass over the seeded resamples: (resample means of ``values`` columns, test p-values of ``diffs``).

    The inputs are made C-contiguous first: the BLAS kernel of ``counts @ values`` depends on the
    memory layout (a DataFrame's values are column-major), and with it the last bit of the sums,
    so the same numbers must always meet the same kernel.
    """
    values = None if values is None else np.ascontiguousarray(values, dtype=np.float64)
    diffs = None if diffs is None else np.ascontiguousarray(diffs, dtype=np.float64)
    if values is not None:
        n = values.shape[0]
    elif diffs is not None:
        n = diffs.shape[0]
    else:
        raise ValueError("bootstrap_pass needs values, diffs or both")
    means = np.empty((resamples, values.shape[1])) if values is not None else None
    test = _StudentisedBootstrap(diffs) if diffs is not None else None
    start = 0
    for counts in resample_chunks(n, resamples, seed):
        if means is not None:
            means[start:start + len(counts)] = counts @ values / n
        if test is not None:
            test.update(counts)
        start += len(counts)
    return means, (test.pvalues(resamples) if test is not None else None)


def bootstrap_pvalues(diffs, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED):
    """Studentised paired bootstrap test (Sakai 2006), two-sided: see the module notes.

    All differences zero gives 1.
    """
    d, single = as_diffs(diffs)
    resamples = check_count("resamples", resamples)
    _, p = bootstrap_pass(None, d, resamples, seed)
    return shaped(p, single)


def paired_bootstrap(baseline, system, **options) -> float:
    """Bootstrap-test p-value of system against baseline (see :func:`bootstrap_pvalues`)."""
    return float(bootstrap_pvalues(paired_diffs(baseline, system), **options))
