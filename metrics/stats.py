"""Paired significance tests, bootstrap intervals, effect sizes and multiple-testing corrections.

Array functions take per-query values aligned by query (same queries, same
order); ``diffs`` is ``system - baseline``, one column per comparison
(a 1-D array is one comparison). Frame functions (:func:`compare`,
:func:`versus_baseline`) take the tidy ``system, qid, measure, value`` frame
of :func:`metrics.evaluate` and align queries by qid (sorted as strings), so
the same inputs always meet the same random draws.

Every random draw comes from ``numpy.random.default_rng(seed)``: the same
seed, the same queries and the same number of draws give the same p-value on
every call, whatever else is tested alongside (ranx's randomisation test is
not reproducible). One sign matrix (randomisation) and one resample-count
matrix (bootstrap) serve every comparison of a call, so a batch of systems x
measures costs one pass over the draws.

Choices, stated once:

- t-test: two-sided paired t-test, as ``scipy.stats.ttest_rel``; all
  differences zero gives p = 1, all equal and non-zero gives p = 0.
- Wilcoxon: ``scipy.stats.wilcoxon`` on the differences with
  ``zero_method="wilcox"`` (zero differences dropped, as scipy and R's
  ``wilcox.test``), no continuity correction, ``method="auto"`` (exact
  distribution up to 50 non-zero differences without ties, exhaustive
  permutations up to 13 with ties or zeros, else the tie-corrected normal
  approximation); all differences zero gives p = 1.
- Randomisation (Fisher's paired permutation test): the statistic is the
  mean difference, the null flips the sign of each query's difference.
  Up to ``exact_max`` (16) non-zero differences every one of the 2^n sign
  patterns is enumerated and p = #{|T| >= |t|} / 2^n (scipy's exact
  ``permutation_test(permutation_type="samples")``); beyond, ``permutations``
  random sign vectors give p = (1 + #{|T| >= |t|}) / (1 + permutations)
  (scipy's and Phipson & Smyth's rule, never 0).
- Bootstrap test: Sakai's (2006) studentised paired bootstrap. The
  differences are shifted to mean 0 (w = d - mean d), resampled with
  replacement, and p = (1 + #{|t*| >= |t|}) / (1 + resamples) with
  t = mean / (sd / sqrt n).
- Confidence intervals: percentile bootstrap over queries (``level``, 95%),
  of each system's mean and of the mean difference, from the same resamples.
- Effect size: paired Cohen's d = mean(d) / sd(d) (ddof = 1).
- Wins / ties / losses: d > tolerance / |d| <= tolerance / d < -tolerance.
- Corrections across the family of all (system, measure) comparisons:
  Bonferroni, Holm (step-down) and Benjamini-Hochberg (step-up, FDR).
- Tukey HSD: by default the two-way (randomised block: systems x queries)
  version, whose error term removes the query effect, as Carterette (2012)
  and Sakai (2014) use for IR; ``design="one-way"`` is
  ``scipy.stats.tukey_hsd`` on the per-query values, which ignores pairing.
- Ranking stability: Kendall's tau-b between system orderings (scipy's
  ``kendalltau`` default).
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import pandas as pd


def _scipy_stats():
    """scipy.stats, imported on first use (it costs about a second at start-up)."""
    from scipy import stats

    return stats

from .errors import MetricsError

TESTS: dict[str, str] = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank",
                         "randomization": "randomisation test", "bootstrap": "paired bootstrap test"}
CORRECTIONS: dict[str, str] = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg",
                               "none": "no correction"}
DEFAULT_SEED = 0
DEFAULT_PERMUTATIONS = 10_000
DEFAULT_RESAMPLES = 10_000
DEFAULT_LEVEL = 0.95
EXACT_MAX = 16
TIE_TOLERANCE = 1e-9
# Resample-count elements per block (rows x queries): small blocks keep bincount and matmul in cache.
_RESAMPLE_BLOCK = 2**16
# Bytes of packed sign patterns per block: small enough for the lookups to stay in cache.
_SIGN_BLOCK_BYTES = 2**17
# Most non-zero differences whose 2^n sign patterns may be enumerated (16M patterns).
_EXACT_LIMIT = 24
# Two test statistics this close (relative to the sum of |d|) are equal: summation-order noise.
_STAT_RTOL = 1e-10


# ------------------------------------------------------------------ input checks

def _as_diffs(diffs) -> tuple[np.ndarray, bool]:
    """(n_queries x n_comparisons float64 matrix, whether the input was one comparison)."""
    d = np.asarray(diffs, dtype=np.float64)
    single = d.ndim == 1
    if single:
        d = d[:, None]
    if d.ndim != 2:
        raise MetricsError(f"differences must be a vector or a queries x comparisons matrix, got {d.ndim} dimensions",
                           fix="pass system - baseline per query")
    if not np.isfinite(d).all():
        raise MetricsError("per-query values contain NaN or infinity",
                           fix="fill or drop the queries without a value (evaluate with missing='zero')")
    return d, single


def _out(values: np.ndarray, single: bool):
    return float(values[0]) if single else values


def _check_count(name: str, value, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise MetricsError(f"{name} must be an integer >= {minimum}, got {value!r}", fix=f"for example {name}=10000")
    return int(value)


def _check_level(level: float) -> float:
    if not 0 < level < 1:
        raise MetricsError(f"level must be between 0 and 1, got {level!r}", fix="for example level=0.95")
    return float(level)


def _paired(baseline, system) -> np.ndarray:
    b = np.asarray(baseline, dtype=np.float64)
    s = np.asarray(system, dtype=np.float64)
    if b.shape != s.shape:
        raise MetricsError(f"baseline has {b.shape} values and system {s.shape}",
                           fix="align both on the same queries (metrics.stats.paired_matrix)")
    return s - b


# ------------------------------------------------------------------ t-test and Wilcoxon

def ttest_pvalues(diffs):
    """Two-sided paired t-test p-values per comparison: t = mean(d) / (sd(d) / sqrt n), n - 1 df.

    Equals ``scipy.stats.ttest_rel(system, baseline).pvalue``; all differences
    0 gives 1, all equal and non-zero gives 0 (scipy: NaN / 0).
    """
    d, single = _as_diffs(diffs)
    n = d.shape[0]
    p = np.ones(d.shape[1])
    if n >= 2:
        mean = d.mean(axis=0)
        sd = d.std(axis=0, ddof=1)
        constant = (d == d[0]).all(axis=0)
        p[constant] = np.where(d[0, constant] == 0, 1.0, 0.0)
        ok = ~constant
        t = mean[ok] / (sd[ok] / np.sqrt(n))
        p[ok] = np.minimum(2.0 * _scipy_stats().t.sf(np.abs(t), n - 1), 1.0)
    return _out(p, single)


def paired_ttest(baseline: np.ndarray, system: np.ndarray) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel); 1.0 when all differences are 0."""
    return float(ttest_pvalues(_paired(baseline, system)))


def wilcoxon_pvalues(diffs, *, zero_method: str = "wilcox", correction: bool = False, method: str = "auto"):
    """Wilcoxon signed-rank p-values per comparison: ``scipy.stats.wilcoxon(d, ...)`` column by column.

    Defaults are scipy's (see the module notes); all differences zero gives 1.
    """
    d, single = _as_diffs(diffs)
    p = np.ones(d.shape[1])
    for j in range(d.shape[1]):  # one scipy call per comparison, never per query
        column = d[:, j]
        if np.count_nonzero(column) == 0:
            continue
        p[j] = _scipy_stats().wilcoxon(column, zero_method=zero_method, correction=correction, method=method).pvalue
    return _out(p, single)


def paired_wilcoxon(baseline, system, **options) -> float:
    """Wilcoxon signed-rank p-value of system against baseline (see :func:`wilcoxon_pvalues`)."""
    return float(wilcoxon_pvalues(_paired(baseline, system), **options))


# ------------------------------------------------------------------ randomisation test

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
    d, single = _as_diffs(diffs)
    permutations = _check_count("permutations", permutations)
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
            for j in range(len(sampled)):  # a handful of comparisons; each is one gather over the block
                flipped = tables[j].take(index).sum(axis=1)
                extreme[j] += np.count_nonzero(np.abs(total[j] - 2.0 * flipped) >= threshold[j])
        p[sampled] = (extreme + 1.0) / (permutations + 1.0)
    return _out(p, single)


def paired_randomization(baseline, system, **options) -> float:
    """Randomisation-test p-value of system against baseline (see :func:`randomization_pvalues`)."""
    return float(randomization_pvalues(_paired(baseline, system), **options))


# ------------------------------------------------------------------ bootstrap

def resample_chunks(n_queries: int, resamples: int, seed: int = DEFAULT_SEED) -> Iterator[np.ndarray]:
    """Bootstrap resamples of the queries as multinomial count blocks (rows = resamples, float64).

    Row r holds how often each query is drawn in resample r (sum = n), so a
    resample's mean of any per-query column x is row @ x / n. Indices come
    from ``default_rng(seed).integers``, in order, independent of block size.
    """
    if n_queries < 1:
        raise MetricsError("bootstrap over zero queries", fix="evaluate at least one query")
    rng = np.random.default_rng(seed)
    rows = int(np.clip(_RESAMPLE_BLOCK // n_queries, 1, resamples))
    for start in range(0, resamples, rows):
        size = min(rows, resamples - start)
        picks = rng.integers(0, n_queries, size=(size, n_queries))
        picks += np.arange(size)[:, None] * n_queries
        yield np.bincount(picks.ravel(), minlength=size * n_queries).reshape(size, n_queries).astype(np.float64)


def bootstrap_means(values, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> np.ndarray:
    """(resamples x columns) matrix of column means over bootstrap resamples of the rows (queries)."""
    x = np.asarray(values, dtype=np.float64)
    x = x[:, None] if x.ndim == 1 else x
    return _bootstrap_pass(x, None, _check_count("resamples", resamples), seed)[0]


def bootstrap_ci(values, *, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
                 level: float = DEFAULT_LEVEL):
    """Percentile bootstrap interval of the mean of each column: ``(lower, upper)``.

    Pass per-query values for a system's mean, differences for the mean
    difference. Same seed, same interval.
    """
    level = _check_level(level)
    x = np.asarray(values, dtype=np.float64)
    _as_diffs(x)
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


def _bootstrap_pass(values: np.ndarray | None, diffs: np.ndarray | None, resamples: int, seed: int):
    """One pass over the seeded resamples: (resample means of ``values`` columns, test p-values of ``diffs``)."""
    n = (values if values is not None else diffs).shape[0]
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
    d, single = _as_diffs(diffs)
    resamples = _check_count("resamples", resamples)
    _, p = _bootstrap_pass(None, d, resamples, seed)
    return _out(p, single)


def paired_bootstrap(baseline, system, **options) -> float:
    """Bootstrap-test p-value of system against baseline (see :func:`bootstrap_pvalues`)."""
    return float(bootstrap_pvalues(_paired(baseline, system), **options))


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


# ------------------------------------------------------------------ effect sizes, wins and ties

def effect_size(diffs):
    """Paired Cohen's d = mean(d) / sd(d), sd with ddof = 1; 0 when all d are 0, +-inf when constant."""
    d, single = _as_diffs(diffs)
    mean = d.mean(axis=0)
    sd = d.std(axis=0, ddof=1) if d.shape[0] > 1 else np.zeros(d.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(sd > 0, mean / np.where(sd > 0, sd, 1.0),
                       np.where(mean == 0, 0.0, np.copysign(np.inf, mean)))
    return _out(out, single)


def wins_ties_losses(diffs, tolerance: float = TIE_TOLERANCE):
    """Queries where the system is better (d > tol), tied (|d| <= tol) and worse (d < -tol)."""
    d, single = _as_diffs(diffs)
    wins = np.count_nonzero(d > tolerance, axis=0)
    losses = np.count_nonzero(d < -tolerance, axis=0)
    ties = d.shape[0] - wins - losses
    if single:
        return int(wins[0]), int(ties[0]), int(losses[0])
    return wins, ties, losses


# ------------------------------------------------------------------ multiple testing

def bonferroni(pvalues) -> np.ndarray:
    """Bonferroni adjusted p-values: min(1, m p)."""
    p = np.asarray(pvalues, dtype=np.float64)
    return np.minimum(p * len(p), 1.0)


def holm(pvalues) -> np.ndarray:
    """Holm-Bonferroni step-down adjusted p-values (monotone, capped at 1)."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini-Hochberg step-up adjusted p-values (false discovery rate): min over j >= i of m p_(j) / j."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def adjust(pvalues, correction: str = "holm") -> np.ndarray:
    """Adjusted p-values under one of :data:`CORRECTIONS` ("holm", "bonferroni", "bh", "none")."""
    if correction == "holm":
        return holm(pvalues)
    if correction == "bonferroni":
        return bonferroni(pvalues)
    if correction == "bh":
        return benjamini_hochberg(pvalues)
    if correction == "none":
        return np.asarray(pvalues, dtype=np.float64).copy()
    raise MetricsError(f"unknown correction {correction!r}", fix="use one of " + ", ".join(CORRECTIONS))


# ------------------------------------------------------------------ Tukey HSD, Kendall's tau

def tukey_hsd(values, systems: Sequence[str] | None = None, *, design: str = "two-way",
              level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """All-pairs Tukey HSD over a (queries x systems) matrix: ``system_a, system_b, diff, ci_low, ci_high, p_value``.

    ``diff`` = mean(b) - mean(a). ``design="two-way"`` (default) treats queries
    as blocks: MSE is the residual mean square of the systems x queries ANOVA
    without replication, df = (n - 1)(m - 1), q = |diff| / sqrt(MSE / n) and
    p = P(studentised range(m, df) >= q). With two systems this is the paired
    t-test. ``design="one-way"`` is ``scipy.stats.tukey_hsd`` on the columns.
    """
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2 or x.shape[0] < 2:
        raise MetricsError(f"Tukey HSD needs a queries x systems matrix with at least 2 of each, got {x.shape}",
                           fix="compare two or more systems over two or more queries")
    level = _check_level(level)
    n, m = x.shape
    names = list(systems) if systems is not None else [str(i) for i in range(m)]
    a, b = np.triu_indices(m, 1)
    means = x.mean(axis=0)
    diff = means[b] - means[a]
    if design == "two-way":
        residual = x - x.mean(axis=1, keepdims=True) - means + x.mean()
        df = (n - 1) * (m - 1)
        se = np.sqrt((residual ** 2).sum() / df / n)
        if se > 0:
            p = _scipy_stats().studentized_range.sf(np.abs(diff) / se, m, df)
            half = _scipy_stats().studentized_range.ppf(level, m, df) * se
        else:
            p = np.where(diff == 0, 1.0, 0.0)
            half = 0.0
        low, high = diff - half, diff + half
    elif design == "one-way":
        result = _scipy_stats().tukey_hsd(*x.T)
        ci = result.confidence_interval(confidence_level=level)
        # scipy's entry [i, j] is mean(i) - mean(j); ours is mean(b) - mean(a)
        p = result.pvalue[a, b]
        low, high = -ci.high[a, b], -ci.low[a, b]
    else:
        raise MetricsError(f"unknown Tukey HSD design {design!r}", fix="use 'two-way' (paired) or 'one-way'")
    return pd.DataFrame({"system_a": [names[i] for i in a], "system_b": [names[j] for j in b], "diff": diff,
                         "ci_low": low, "ci_high": high, "p_value": np.minimum(p, 1.0)})


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two orderings given as scores (scipy.stats.kendalltau's statistic).

    tau_b = (concordant - discordant) / sqrt((n0 - ties_x)(n0 - ties_y)),
    n0 = m(m-1)/2; NaN when either side is all ties.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise MetricsError(f"Kendall's tau needs two score vectors of one length, got {x.shape} and {y.shape}",
                           fix="give one score per system on both sides")
    i, j = np.triu_indices(len(x), 1)
    sx, sy = np.sign(x[i] - x[j]), np.sign(y[i] - y[j])
    n0 = len(i)
    denominator = np.sqrt(float(n0 - np.count_nonzero(sx == 0)) * float(n0 - np.count_nonzero(sy == 0)))
    return float((sx * sy).sum() / denominator) if denominator > 0 else float("nan")


def ranking_stability(table: pd.DataFrame, *, decimals: int = 12) -> pd.DataFrame:
    """Kendall's tau-b between the system orderings of every pair of columns of a system x setting table.

    ``table`` is e.g. :func:`metrics.means` (columns = measures) or mean
    nDCG@k per system (columns = cutoffs). Means are rounded to ``decimals``
    first, so summation noise is a tie, not an order.
    """
    values = np.round(table.to_numpy(dtype=np.float64), decimals)
    cols = list(table.columns)
    out = np.eye(len(cols))
    for a in range(len(cols)):
        for b in range(a + 1, len(cols)):
            out[a, b] = out[b, a] = kendall_tau(values[:, a], values[:, b])
    return pd.DataFrame(out, index=pd.Index(cols, name=table.columns.name),
                        columns=pd.Index(cols, name=table.columns.name))


# ------------------------------------------------------------------ frames

def paired_matrix(frame, measure: str, systems: list[str]):
    """(queries x systems) matrix of one measure from a tidy frame, queries aligned by qid."""
    sub = frame[frame["measure"] == measure]
    wide = sub.pivot_table(index="qid", columns="system", values="value", aggfunc="first", observed=True)
    return wide.reindex(columns=systems).fillna(0.0)


def _wide(frame: pd.DataFrame, measures: list[str], systems: list[str]) -> pd.DataFrame:
    """qid x (measure, system) matrix over the union of queries, sorted by qid; absent cells 0."""
    sub = frame[frame["measure"].isin(measures) & frame["system"].isin(systems)]
    wide = sub.pivot_table(index="qid", columns=["measure", "system"], values="value", aggfunc="first",
                           observed=True)
    wide.index = wide.index.astype(str)
    columns = pd.MultiIndex.from_product([measures, systems], names=["measure", "system"])
    return wide.reindex(columns=columns).sort_index().fillna(0.0)


def per_query(frame: pd.DataFrame, measure: str, baseline: str, system: str) -> pd.DataFrame:
    """Per-query values of two systems on one measure: ``qid, baseline, system, delta`` (delta = system - baseline)."""
    wide = _wide(frame, [measure], [baseline, system])
    base = wide[(measure, baseline)].to_numpy()
    other = wide[(measure, system)].to_numpy()
    return pd.DataFrame({"qid": wide.index.to_numpy(dtype=object), "baseline": base, "system": other,
                         "delta": other - base})


COMPARE_COLUMNS = ["measure", "system", "baseline", "n_queries", "baseline_mean", "baseline_ci_low",
                   "baseline_ci_high", "mean", "mean_ci_low", "mean_ci_high", "diff", "rel_diff", "diff_ci_low",
                   "diff_ci_high", "p_value", "p_adjusted", "effect_size", "wins", "ties", "losses", "significant",
                   "marker", "test", "correction"]


def compare(frame: pd.DataFrame, baseline: str, systems: Sequence[str] | None = None,
            measures: Sequence[str] | None = None, *, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, seed: int = DEFAULT_SEED, permutations: int = DEFAULT_PERMUTATIONS,
            resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
            tolerance: float = TIE_TOLERANCE, intervals: bool = True) -> pd.DataFrame:
    """Every system against ``baseline`` on every measure of a tidy frame: one row per (measure, system).

    Columns (:data:`COMPARE_COLUMNS`): means with bootstrap CIs, ``diff`` =
    mean - baseline_mean, ``rel_diff`` = diff / baseline_mean, the CI of the
    mean difference, the raw ``p_value`` of ``test`` and ``p_adjusted`` under
    ``correction`` over all rows, paired Cohen's d, wins/ties/losses at
    ``tolerance``, and ``marker`` "▲"/"▼" when p_adjusted < alpha.
    Queries are the union over the frame, sorted by qid; one a system lacks
    scores 0. The bootstrap CIs and the bootstrap test draw the same seeded
    resamples; the randomisation test one sign matrix for all rows.
    ``intervals=False`` skips the CIs (their columns are NaN).
    """
    if test not in TESTS:
        raise MetricsError(f"unknown test {test!r}", fix="use one of " + ", ".join(TESTS))
    if correction not in CORRECTIONS:
        raise MetricsError(f"unknown correction {correction!r}", fix="use one of " + ", ".join(CORRECTIONS))
    level = _check_level(level)
    resamples = _check_count("resamples", resamples)
    present = list(dict.fromkeys(frame["system"].astype(str)))
    if baseline not in present:
        raise MetricsError(f"baseline {baseline!r} is not among the systems ({', '.join(present) or 'none'})",
                           fix="pick the baseline among the evaluated runs")
    systems = [s for s in (systems if systems is not None else present) if s != baseline]
    missing = [s for s in systems if s not in present]
    if missing:
        raise MetricsError(f"system(s) {', '.join(missing)} not in the frame", fix="evaluate them first")
    measures = list(dict.fromkeys(measures if measures is not None else frame["measure"].astype(str)))
    if not systems or not measures:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COMPARE_COLUMNS})

    wide = _wide(frame, measures, [baseline, *systems])
    n = len(wide)
    if n == 0:
        raise MetricsError("no queries to compare", fix="evaluate the runs on a qrels with at least one query")
    base = np.column_stack([wide[(m, baseline)].to_numpy() for m in measures for _ in systems])
    other = np.column_stack([wide[(m, s)].to_numpy() for m in measures for s in systems])
    d = other - base
    k = d.shape[1]

    # one pass over the bootstrap resamples: CIs of both means and of the difference (+ the bootstrap test)
    if intervals or test == "bootstrap":
        # one pass over the resamples: CIs of both means and of the difference, and the bootstrap test
        boot, p = _bootstrap_pass(np.hstack([base, other, d]) if intervals else None,
                                  d if test == "bootstrap" else None, resamples, seed)
    else:
        boot, p = None, None
    if boot is not None:
        tail = (1.0 - level) / 2.0
        low, high = np.quantile(boot, [tail, 1.0 - tail], axis=0)
    else:
        low = high = np.full(3 * k, np.nan)
    if p is None:
        p = paired_pvalues(d, test, seed=seed, permutations=permutations, resamples=resamples)
    wins, ties, losses = wins_ties_losses(d, tolerance)
    base_mean, mean = base.mean(axis=0), other.mean(axis=0)
    diff = mean - base_mean
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(base_mean != 0, diff / np.where(base_mean != 0, base_mean, 1.0), np.nan)
    p_adj = adjust(p, correction)
    significant = p_adj < alpha
    out = pd.DataFrame({
        "measure": [m for m in measures for _ in systems], "system": systems * len(measures),
        "baseline": baseline, "n_queries": n,
        "baseline_mean": base_mean, "baseline_ci_low": low[:k], "baseline_ci_high": high[:k],
        "mean": mean, "mean_ci_low": low[k:2 * k], "mean_ci_high": high[k:2 * k],
        "diff": diff, "rel_diff": rel, "diff_ci_low": low[2 * k:], "diff_ci_high": high[2 * k:],
        "p_value": p, "p_adjusted": p_adj, "effect_size": effect_size(d),
        "wins": wins, "ties": ties, "losses": losses, "significant": significant,
        "marker": np.where(significant, np.where(diff > 0, "▲", "▼"), ""), "test": test, "correction": correction,
    })
    return out[COMPARE_COLUMNS]


def versus_baseline(frame, baseline: str, alpha: float = 0.05, *, test: str = "t", correction: str = "holm",
                    seed: int = DEFAULT_SEED, permutations: int = DEFAULT_PERMUTATIONS,
                    resamples: int = DEFAULT_RESAMPLES):
    """Every system against ``baseline`` for every measure, with ``test`` and ``correction``.

    Returns a frame ``system, measure, baseline_mean, mean, p_value, p_adjusted, p_holm, significant,
    marker, test, correction`` where marker is "▲" (significantly better), "▼" (significantly worse)
    or "", significance being ``p_adjusted < alpha``. The correction family is all (system, measure)
    comparisons in ``frame``; ``p_holm`` is always the Holm-adjusted p-value.
    """
    columns = ["system", "measure", "baseline_mean", "mean", "p_value", "p_adjusted", "p_holm", "significant",
               "marker", "test", "correction"]
    systems = [s for s in dict.fromkeys(frame["system"].astype(str)) if s != baseline]
    if not systems or not len(frame):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    full = compare(frame, baseline, systems, test=test, correction=correction, alpha=alpha, seed=seed,
                   permutations=permutations, resamples=resamples, intervals=False)
    full["p_holm"] = holm(full["p_value"].to_numpy())
    return full[columns].reset_index(drop=True)


def difference_profile(baseline_curve, system_curve, *, resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Mean difference at every cutoff with its percentile bootstrap CI.

    Returns ``k, baseline_mean, mean, diff, ci_low, ci_high``, one row per cutoff.

    Takes two per-query curves (``metrics.curve`` frames, index qid, columns
    k); queries are aligned by qid (one a system lacks scores 0) and cutoffs
    by k (a shorter curve is extended with its last value, as a measure at a
    cutoff past the ranking's depth keeps its value). All cutoffs use the same
    seeded resamples of the queries, one matmul per block.
    """
    level = _check_level(level)
    b, s = (pd.DataFrame(c) for c in (baseline_curve, system_curve))
    qids = sorted(set(map(str, b.index)) | set(map(str, s.index)))
    ks = sorted(set(np.asarray(b.columns, dtype=np.int64)) | set(np.asarray(s.columns, dtype=np.int64)))

    def aligned(c: pd.DataFrame) -> np.ndarray:
        c = c.copy()
        c.index = c.index.astype(str)
        c.columns = np.asarray(c.columns, dtype=np.int64)
        return c.reindex(columns=ks).ffill(axis=1).reindex(index=qids).fillna(0.0).to_numpy(dtype=np.float64)

    base, other = aligned(b), aligned(s)
    if not len(qids):
        raise MetricsError("no queries to compare", fix="evaluate the runs on a qrels with at least one query")
    d = other - base
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(bootstrap_means(d, resamples=resamples, seed=seed), [tail, 1.0 - tail], axis=0)
    return pd.DataFrame({"k": np.asarray(ks, dtype=np.int64), "baseline_mean": base.mean(axis=0),
                         "mean": other.mean(axis=0), "diff": d.mean(axis=0), "ci_low": low, "ci_high": high})
