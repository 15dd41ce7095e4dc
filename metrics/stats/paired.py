"""Paired significance tests (t, Wilcoxon, randomisation), effect sizes and wins/ties/losses."""
from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..errors import MetricsError
from .bootstrap import bootstrap_pvalues
from .common import (
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    EXACT_MAX,
    TESTS,
    TIE_TOLERANCE,
    as_diffs,
    check_count,
    paired_diffs,
    scipy_stats,
    shaped,
)

# Bytes of packed sign patterns per block: small enough for the lookups to stay in cache.
_SIGN_BLOCK_BYTES = 2**17


# Most non-zero differences whose 2^n sign patterns may be enumerated (16M patterns).
_EXACT_LIMIT = 24


# Two test statistics this close (relative to the sum of |d|) are equal: summation-order noise.
_STAT_RTOL = 1e-10


def ttest_pvalues(diffs):
    """Two-sided paired t-test p-values per comparison: t = mean(d) / (sd(d) / sqrt n), n - 1 df.

    Equals ``scipy.stats.ttest_rel(system, baseline).pvalue``; all differences
    0 gives 1, all equal and non-zero gives 0 (scipy: NaN / 0).
    """
    d, single = as_diffs(diffs)
    n = d.shape[0]
    p = np.ones(d.shape[1])
    if n >= 2:
        mean = d.mean(axis=0)
        sd = d.std(axis=0, ddof=1)
        constant = (d == d[0]).all(axis=0)
        p[constant] = np.where(d[0, constant] == 0, 1.0, 0.0)
        ok = ~constant
        t = mean[ok] / (sd[ok] / np.sqrt(n))
        p[ok] = np.minimum(2.0 * scipy_stats().t.sf(np.abs(t), n - 1), 1.0)
    return shaped(p, single)


def paired_ttest(baseline: np.ndarray, system: np.ndarray) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel); 1.0 when all differences are 0."""
    return float(ttest_pvalues(paired_diffs(baseline, system)))


def wilcoxon_pvalues(diffs, *, zero_method: str = "wilcox", correction: bool = False, method: str = "auto"):
    """Wilcoxon signed-rank p-values per comparison: ``scipy.stats.wilcoxon(d, ...)`` column by column.

    Defaults are scipy's (see the module notes); all differences zero gives 1.
    """
    d, single = as_diffs(diffs)
    p = np.ones(d.shape[1])
    for j in range(d.shape[1]):  # one scipy call per comparison, never per query
        column = d[:, j]
        if np.count_nonzero(column) == 0:
            continue
        p[j] = scipy_stats().wilcoxon(column, zero_method=zero_method, correction=correction, method=method).pvalue
    return shaped(p, single)


def paired_wilcoxon(baseline, system, **options) -> float:
    """Wilcoxon signed-rank p-value of system against baseline (see :func:`wilcoxon_pvalues`)."""
    return float(wilcoxon_pvalues(paired_diffs(baseline, system), **options))


def sign_bytes(n_queries: int, permutations: int, seed: int = DEFAULT_SEED) -> Iterator[np.ndarray]:
    """Random sign patterns, packed: uint8 blocks of shape (rows, ceil(n / 8)), rows = permutations.

    Bit b (least significant first) of byte j says whether query 8j + b flips
    sign. The bits are the raw 64-bit outputs of ``default_rng(seed)`` in
    order, so the patterns depend on seed, query count and row only, never on
    the block size.
    """
    rng = np.random.default_rng(seed)
    words = max(1, -(-n_queries // 64))
    n_bytes = max(1, -(-n_queries // 8))
    rows = int(np.clip(_SIGN_BLOCK_BYTES // (8 * words), 1, permutations))
    for start in range(0, permutations, rows):
        size = min(rows, permutations - start)
        raw = rng.bit_generator.random_raw(size * words).astype("<u8", copy=False)
        yield raw.view(np.uint8).reshape(size, words * 8)[:, :n_bytes]


def sign_matrix(n_queries: int, permutations: int, seed: int = DEFAULT_SEED) -> np.ndarray:
    """The sign patterns of :func:`sign_bytes` unpacked: a (permutations x n) matrix of +1 / -1 (for checks)."""
    blocks = [np.unpackbits(b, axis=1, bitorder="little")[:, :n_queries] for b in sign_bytes(n_queries, permutations,
                                                                                              seed)]
    return 1 - 2 * np.vstack(blocks).astype(np.int8)


_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float64)


def _exact_randomization(d: np.ndarray) -> float:
    """p = #{sign patterns s : |s . d| >= |sum d|} / 2^n over the non-zero differences d."""
    n = len(d)
    observed = abs(d.sum())
    tol = _STAT_RTOL * np.abs(d).sum()
    extreme = 0
    block = 1 << min(n, 16)
    shifts = np.arange(n)
    for start in range(0, 1 << n, block):
        patterns = np.arange(start, start + block, dtype=np.int64)
        signs = 1.0 - 2.0 * ((patterns[:, None] >> shifts) & 1)
        extreme += int(np.count_nonzero(np.abs(signs @ d) >= observed - tol))
    return extreme / float(1 << n)


def randomization_pvalues(diffs, *, permutations: int = DEFAULT_PERMUTATIONS, seed: int = DEFAULT_SEED,
                          exact_max: int = EXACT_MAX):
    """Fisher's paired randomisation test, two-sided, on the mean difference (see the module notes).

    Comparisons with at most ``exact_max`` non-zero differences are enumerated
    exactly; the others share one seeded set of ``permutations`` sign patterns
    (:func:`sign_bytes`). A permuted sum is sum(d) - 2 sum(flipped d), the
    flipped part read from per-byte lookup tables (8 queries per lookup).
    """
    d, single = as_diffs(diffs)
    permutations = check_count("permutations", permutations)
    if not 0 <= exact_max <= _EXACT_LIMIT:
        raise MetricsError(f"exact_max must be between 0 and {_EXACT_LIMIT}, got {exact_max!r}",
                           fix=f"2^{_EXACT_LIMIT} sign patterns is the most enumerated; the default is {EXACT_MAX}")
    n, m = d.shape
    p = np.ones(m)
    nonzero = np.count_nonzero(d, axis=0)
    exact = nonzero <= exact_max
    for j in np.flatnonzero(exact & (nonzero > 0)):
        column = d[:, j]
        p[j] = _exact_randomization(column[column != 0])
    sampled = np.flatnonzero(~exact)
    if len(sampled):
        # Byte lookup: for every group of 8 queries, a table of the 256 possible sums of its
        # flipped differences; a permutation's sum of flips is then n/8 lookups, not n products.
        n_bytes = -(-n // 8)
        padded = np.zeros((n_bytes * 8, len(sampled)))
        padded[:n] = d[:, sampled]
        tables = np.matmul(_BYTE_BITS[None], padded.reshape(n_bytes, 8, -1))  # (n_bytes, 256, comparisons)
        tables = np.ascontiguousarray(tables.transpose(2, 0, 1).reshape(len(sampled), -1))
        offsets = np.arange(n_bytes, dtype=np.intp) * 256
        total = padded.sum(axis=0)
        threshold = np.abs(total) - _STAT_RTOL * np.abs(padded).sum(axis=0)
        extreme = np.zeros(len(sampled), dtype=np.int64)
        for block in sign_bytes(n, permutations, seed):
            index = block + offsets
            for c in range(len(sampled)):  # a handful of comparisons; each is one gather over the block
                flipped = tables[c].take(index).sum(axis=1)
                extreme[c] += np.count_nonzero(np.abs(total[c] - 2.0 * flipped) >= threshold[c])
        p[sampled] = (extreme + 1.0) / (permutations + 1.0)
    return shaped(p, single)


def paired_randomization(baseline, system, **options) -> float:
    """Randomisation-test p-value of system against baseline (see :func:`randomization_pvalues`)."""
    return float(randomization_pvalues(paired_diffs(baseline, system), **options))


def paired_pvalues(diffs, test: str = "t", *, seed: int = DEFAULT_SEED, permutations: int = DEFAULT_PERMUTATIONS,
                   resamples: int = DEFAULT_RESAMPLES):
    """p-values of one of :data:`TESTS` ("t", "wilcoxon", "randomization", "bootstrap")."""
    if test == "t":
        return ttest_pvalues(diffs)
    if test == "wilcoxon":
        return wilcoxon_pvalues(diffs)
    if test == "randomization":
        return randomization_pvalues(diffs, permutations=permutations, seed=seed)
    if test == "bootstrap":
        return bootstrap_pvalues(diffs, resamples=resamples, seed=seed)
    raise MetricsError(f"unknown test {test!r}", fix="use one of " + ", ".join(TESTS))


def effect_size(diffs):
    """Paired Cohen's d = mean(d) / sd(d), sd with ddof = 1; 0 when all d are 0, +-inf when constant."""
    d, single = as_diffs(diffs)
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1) if d.shape[0] > 1 else np.zeros(d.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0),
                       np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return shaped(out, single)


def wins_ties_losses(diffs, tolerance: float = TIE_TOLERANCE):
    """Queries where the system is better (d > tol), tied (|d| <= tol) and worse (d < -tol)."""
    d, single = as_diffs(diffs)
    wins = np.count_nonzero(d > tolerance, axis=0)
    losses = np.count_nonzero(d < -tolerance, axis=0)
    ties = d.shape[0] - wins - losses
    if single:
        return int(wins[0]), int(ties[0]), int(losses[0])
    return wins, ties, losses
