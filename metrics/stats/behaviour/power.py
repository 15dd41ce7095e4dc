"""Discriminative power, swap rates and topic-set size of a measure, from a topics x systems matrix.

- ASL (achieved significance level) of every pair of systems by Sakai's (2006) paired bootstrap
  (:func:`metrics.stats.bootstrap_pvalues`, studentised, one draw of resamples for all pairs) and
  by the randomised Tukey HSD (Carterette 2012; Sakai 2014): in each of B trials every topic's
  scores are permuted across systems, and ASL(i, j) = (1 + #{trials: max mean - min mean >=
  |mean_i - mean_j|}) / (1 + B), the rule of :mod:`metrics.stats` (never 0).
- Swap rates (Voorhees and Buckley 2002): for a topic-set size n, ``trials`` seeded draws of two
  sets of n topics; a pair of systems swaps when its mean differences on the two sets have
  opposite signs (a zero difference on either set is no swap); the rate is binned by the absolute
  difference on the first set. ``method="disjoint"`` (Voorhees and Buckley's): the two sets share
  no topic, so n <= N/2. As n nears N/2 the two sets become near-complements of each other: their
  differences average to the full set's (n d1 + n d2 = 2n d), so on a pair whose full-set
  difference d is small a lead on one half forces a deficit on the other, and the rate rises with
  n for such pairs. That rise is the split's, not the measure's. ``method="resampled"``: each set
  is n topics drawn with replacement from all N, independently of the other (n <= N); the sets
  overlap and never become complements (this variant is ours, not a published protocol).
- Topic-set size (Sakai 2016): the fewest topics n whose power reaches 1 - beta for a minimum
  detectable difference ``delta`` at ``alpha``, from the residual variance of the matrix:
  paired t-test on two systems (sigma_d^2 = 2 V_E, noncentral t with n - 1 df and
  noncentrality delta sqrt(n) / sigma_d) and one-way ANOVA on m systems (noncentral F with
  m - 1 and m (n - 1) df and noncentrality n delta^2 / (2 V_E), the least favourable
  configuration: two systems delta apart, the rest at the grand mean).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...errors import MetricsError
from ..bootstrap import bootstrap_pvalues
from ..common import DEFAULT_SEED, check_count, scipy_stats

DEFAULT_TRIALS = 1000
DEFAULT_ALPHA = 0.05
DEFAULT_POWER = 0.8
DEFAULT_DELTA = 0.02
BIN_WIDTH = 0.01
SWAP_METHODS: dict[str, str] = {
    "disjoint": "two disjoint random sets of n topics (Voorhees and Buckley 2002)",
    "resampled": "two independent draws of n topics with replacement (overlapping sets)"}
MAX_TOPICS = 100_000
# Permuted topic x system cells per block of the randomised Tukey HSD (float64): 32 MB.
_TUKEY_BLOCK = 2**22


def _matrix(values) -> np.ndarray:
    x = np.ascontiguousarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise MetricsError(f"needs a topics x systems matrix with at least 2 of each, got shape {x.shape}",
                           fix="select two or more systems evaluated on two or more topics")
    if not np.isfinite(x).all():
        raise MetricsError("the score matrix holds NaN or infinity", fix="score missing topics as 0")
    return x


def tukey_asl(values, *, trials: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED) -> np.ndarray:
    """Randomised Tukey HSD ASL of every pair (i < j, ``np.triu_indices`` order) of a topics x systems matrix."""
    x = _matrix(values)
    trials = check_count("trials", trials)
    n, m = x.shape
    rng = np.random.default_rng(seed)
    means = x.mean(axis=0)
    a, b = np.triu_indices(m, 1)
    observed = np.abs(means[a] - means[b]) * (1 - 1e-12)
    ranges = np.empty(trials)
    rows = max(1, _TUKEY_BLOCK // (n * m))
    for start in range(0, trials, rows):
        size = min(rows, trials - start)
        perm = rng.random((size, n, m)).argsort(axis=2)
        permuted = np.take_along_axis(np.broadcast_to(x, (size, n, m)), perm, axis=2).mean(axis=1)
        ranges[start:start + size] = permuted.max(axis=1) - permuted.min(axis=1)
    ranges.sort()
    extreme = trials - np.searchsorted(ranges, observed, side="left")
    return (extreme + 1.0) / (trials + 1.0)


def pair_asl(values, systems: Sequence[str] | None = None, *, resamples: int = DEFAULT_TRIALS,
             seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """ASL of every pair of systems: ``system_a, system_b, diff, bootstrap, tukey`` (diff = mean_b - mean_a)."""
    x = _matrix(values)
    m = x.shape[1]
    names = list(systems) if systems is not None else [str(i) for i in range(m)]
    a, b = np.triu_indices(m, 1)
    diffs = x[:, b] - x[:, a]
    boot = np.atleast_1d(bootstrap_pvalues(diffs, resamples=resamples, seed=seed))
    return pd.DataFrame({"system_a": [names[i] for i in a], "system_b": [names[j] for j in b],
                         "diff": diffs.mean(axis=0), "bootstrap": boot,
                         "tukey": tukey_asl(x, trials=resamples, seed=seed)})


def asl_curve(asl: pd.DataFrame, column: str = "bootstrap") -> pd.DataFrame:
    """The ASL curve of Sakai (2006): pairs sorted by ASL, ``rank, asl`` (rank 1 = most significant)."""
    values = np.sort(asl[column].to_numpy(dtype=np.float64))
    return pd.DataFrame({"rank": np.arange(1, len(values) + 1), "asl": values})


def share_significant(asl: pd.DataFrame, alpha: float = DEFAULT_ALPHA) -> dict[str, float]:
    """Share of pairs with ASL < alpha, per test (discriminative power at alpha)."""
    return {c: float((asl[c].to_numpy() < alpha).mean()) if len(asl) else float("nan")
            for c in ("bootstrap", "tukey") if c in asl.columns}


def topic_set_sizes(n_topics: int, count: int = 5) -> list[int]:
    """Topic-set sizes for swap rates: up to ``count`` evenly spaced sizes from 5 (or fewer) to n_topics // 2."""
    top = n_topics // 2
    if top < 1:
        raise MetricsError(f"swap rates need two disjoint topic sets, but there are {n_topics} topics",
                           fix="evaluate on two or more topics")
    low = min(5, top)
    return sorted({int(round(v)) for v in np.linspace(low, top, count)})


def swap_rates(values, sizes: Sequence[int] | None = None, *, trials: int = DEFAULT_TRIALS,
               seed: int = DEFAULT_SEED, bin_width: float = BIN_WIDTH, method: str = "disjoint") -> pd.DataFrame:
    """Swap rates by topic-set size and difference bin: ``topics, bin_low, bin_high, pairs, swaps, rate, method``.

    For each size n (one seeded generator, sizes in the order given), ``method="disjoint"``:
    ``trials`` draws of a random permutation of the topics; the first n topics form set 1, the next
    n set 2. ``method="resampled"``: ``rng.integers(0, N, (trials, 2n))``, the first n columns set
    1, the next n set 2. Each pair of systems in each trial is one observation, binned by |mean
    difference on set 1|.
    """
    x = _matrix(values)
    trials = check_count("trials", trials)
    if method not in SWAP_METHODS:
        raise MetricsError(f"unknown swap method {method!r}", fix="use one of " + ", ".join(SWAP_METHODS))
    if not bin_width > 0:
        raise MetricsError(f"bin width must be positive, got {bin_width!r}", fix="for example 0.01")
    n_topics, m = x.shape
    sizes = topic_set_sizes(n_topics) if sizes is None else [int(s) for s in sizes]
    largest = n_topics // 2 if method == "disjoint" else n_topics
    for s in sizes:
        if not 1 <= s <= largest:
            raise MetricsError(f"topic-set size {s} does not give two "
                               f"{'disjoint ' if method == 'disjoint' else ''}sets of {n_topics} topics",
                               fix=f"use sizes from 1 to {largest}")
    rng = np.random.default_rng(seed)
    a, b = np.triu_indices(m, 1)
    rows = []
    for s in sizes:
        if method == "disjoint":
            picks = rng.random((trials, n_topics)).argsort(axis=1)[:, :2 * s]
        else:
            picks = rng.integers(0, n_topics, (trials, 2 * s))
        first = x[picks[:, :s]].mean(axis=1)       # trials x systems
        second = x[picks[:, s:]].mean(axis=1)
        d1, d2 = first[:, b] - first[:, a], second[:, b] - second[:, a]
        swapped = (d1 * d2 < 0).ravel()
        bins = np.floor(np.abs(d1).ravel() / bin_width).astype(np.int64)
        pairs = np.bincount(bins)
        swaps = np.bincount(bins, weights=swapped, minlength=len(pairs))
        for k in np.flatnonzero(pairs):
            rows.append({"topics": s, "bin_low": k * bin_width, "bin_high": (k + 1) * bin_width,
                         "pairs": int(pairs[k]), "swaps": int(swaps[k]), "rate": swaps[k] / pairs[k],
                         "method": method})
    return pd.DataFrame(rows, columns=["topics", "bin_low", "bin_high", "pairs", "swaps", "rate", "method"])


def swap_summary(rates: pd.DataFrame, delta: float = DEFAULT_DELTA) -> pd.DataFrame:
    """Per topic-set size: the swap rate over all observations and over those with difference >= delta."""
    out = []
    for s, part in rates.groupby("topics", sort=True):
        big = part[part["bin_low"] >= delta - 1e-12]
        out.append({"topics": int(s), "swap_rate": part["swaps"].sum() / part["pairs"].sum(),
                    "swap_rate_at_delta": (big["swaps"].sum() / big["pairs"].sum()) if len(big) else float("nan")})
    return pd.DataFrame(out, columns=["topics", "swap_rate", "swap_rate_at_delta"])


def residual_variance(values) -> float:
    """V_E: residual mean square of the two-way ANOVA without replication (topics x systems)."""
    x = _matrix(values)
    n, m = x.shape
    residual = x - x.mean(axis=1, keepdims=True) - x.mean(axis=0) + x.mean()
    return float((residual ** 2).sum() / ((n - 1) * (m - 1)))


def within_variance(values) -> float:
    """V_E of the one-way ANOVA: the mean of the systems' variances over topics (ddof = 1)."""
    return float(_matrix(values).var(axis=0, ddof=1).mean())


def _check_design(delta: float, alpha: float, power: float) -> None:
    if not delta > 0:
        raise MetricsError(f"the minimum detectable difference must be positive, got {delta!r}", fix="e.g. 0.02")
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise MetricsError(f"alpha and power must be between 0 and 1, got {alpha!r} and {power!r}",
                           fix="e.g. alpha 0.05, power 0.8")


def ttest_power(n: int, delta: float, variance: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of the two-sided paired t-test over n topics: P(|t'| > t_crit), t' noncentral t with
    n - 1 df and noncentrality delta sqrt(n) / sigma_d (``variance`` = sigma_d^2)."""
    st = scipy_stats()
    df, nc = n - 1, delta * np.sqrt(n) / np.sqrt(variance)
    crit = st.t.ppf(1 - alpha / 2, df)
    return float(st.nct.sf(crit, df, nc) + st.nct.cdf(-crit, df, nc))


def anova_power(n: int, m: int, delta: float, variance: float, alpha: float = DEFAULT_ALPHA) -> float:
    """Power of the one-way ANOVA of m systems over n topics each at the least favourable configuration."""
    st = scipy_stats()
    df1, df2 = m - 1, m * (n - 1)
    crit = st.f.ppf(1 - alpha, df1, df2)
    return float(st.ncf.sf(crit, df1, df2, n * delta ** 2 / (2 * variance)))


def _smallest(power_of, target: float) -> int:
    """Fewest n >= 2 with power_of(n) >= target: doubling, then bisection (power rises with n)."""
    low, high = 1, 2
    while power_of(high) < target:
        low, high = high, high * 2
        if high > MAX_TOPICS:
            raise MetricsError(f"more than {MAX_TOPICS:,} topics would be needed",
                               fix="raise the minimum detectable difference or lower the power")
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if power_of(mid) < target else (low, mid)
    return high


def topics_needed(values, *, delta: float = DEFAULT_DELTA, alpha: float = DEFAULT_ALPHA,
                  power: float = DEFAULT_POWER) -> pd.DataFrame:
    """Sakai's topic-set-size design from a topics x systems matrix, with its inputs:
    ``design, systems, variance, delta, alpha, power, topics, achieved_power``."""
    x = _matrix(values)
    _check_design(delta, alpha, power)
    m = x.shape[1]
    v_two, v_one = residual_variance(x), within_variance(x)
    rows = []
    for design, variance, power_of in (
            ("paired t-test", 2 * v_two, lambda n: ttest_power(n, delta, 2 * v_two, alpha)),
            ("one-way ANOVA", v_one, lambda n: anova_power(n, m, delta, v_one, alpha))):
        if variance == 0:
            n = 2
        else:
            n = _smallest(power_of, power)
        rows.append({"design": design, "systems": 2 if design == "paired t-test" else m, "variance": variance,
                     "delta": delta, "alpha": alpha, "power": power, "topics": n,
                     "achieved_power": 1.0 if variance == 0 else power_of(n)})
    return pd.DataFrame(rows)


def discriminative_power(values, systems: Sequence[str] | None = None, *, alpha: float = DEFAULT_ALPHA,
                         delta: float = DEFAULT_DELTA, power: float = DEFAULT_POWER,
                         resamples: int = DEFAULT_TRIALS, seed: int = DEFAULT_SEED,
                         sizes: Sequence[int] | None = None, method: str = "disjoint") -> dict:
    """Everything ``power`` reports for one measure: ``asl`` (per pair), ``share`` (significant at alpha),
    ``swaps`` (rates by size and bin), ``swap_summary``, ``topics`` (the designs), and the settings."""
    x = _matrix(values)
    asl = pair_asl(x, systems, resamples=resamples, seed=seed)
    rates = swap_rates(x, sizes, trials=resamples, seed=seed, method=method)
    return {"asl": asl, "share": share_significant(asl, alpha), "swaps": rates,
            "swap_summary": swap_summary(rates, delta), "topics": topics_needed(x, delta=delta, alpha=alpha,
                                                                                 power=power),
            "settings": {"seed": seed, "resamples": resamples, "swap_method": method, "alpha": alpha,
                         "delta": delta, "power": power, "n_topics": x.shape[0], "n_systems": x.shape[1]}}
