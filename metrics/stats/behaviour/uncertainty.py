"""How much a rank correlation between system orders means: a bootstrap interval over topics and
the few values it can take over a few systems.

A Kendall's tau between the system orders of two measures (or two qrels) is computed from the
systems' means over one sample of topics; another sample of topics gives another tau. The
interval here is the percentile bootstrap of Efron and Tibshirani (1993) over topics: ``resamples``
draws of n topics with replacement (``numpy.random.default_rng(seed).integers(0, n, (resamples,
n))``, the draw ``scipy.stats.bootstrap`` makes), each system's two means over the draw, rounded to
:data:`metrics.evaluate.TIE_DECIMALS`, and the tau of the two orders. A draw on which either side
is all ties has no tau (tau-b is 0/0 there); it is counted and left out of the percentiles.

Over m systems with no ties, Kendall's tau takes only m(m - 1)/2 + 1 values (one per number of
discordant pairs): 2 over two systems (-1 and 1), 4 over three, 7 over four. tau_ap takes a
similarly small set. Below :data:`FEW_SYSTEMS` systems a tau is an order, not an estimate.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import permutations
from typing import Any

import numpy as np

from ...beside import beside
from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS
from ..agreement import kendall_tau
from ..common import DEFAULT_LEVEL, DEFAULT_SEED, check_count, check_level
from .rankings import tau_ap, tau_ap_symmetric

FEW_SYSTEMS = 5
"""Below this many systems the pages warn that tau takes only a handful of values."""

DEFAULT_TAU_RESAMPLES = 1000
KINDS = {"tau": "Kendall's τ-b", "tau_ap": "τ_AP (symmetric)"}
_ENUMERATE_MAX = 8


def _statistic(kind: str):
    if kind == "tau":
        return kendall_tau
    if kind == "tau_ap":
        return tau_ap_symmetric
    raise MetricsError(f"unknown rank correlation {kind!r}", fix="use " + " or ".join(KINDS))


def order_correlation(first, second, kind: str = "tau", *, decimals: int = TIE_DECIMALS) -> float:
    """tau (Kendall's tau-b) or symmetric tau_ap between the systems' mean orders of two topics x
    systems matrices (the same topics and systems in both), means rounded to ``decimals``."""
    a, b = _pair(first, second)
    return _correlate(_statistic(kind), a.mean(axis=0), b.mean(axis=0), decimals)


def _correlate(statistic, x: np.ndarray, y: np.ndarray, decimals: int) -> float:
    x, y = np.round(x, decimals), np.round(y, decimals)
    if np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(statistic(x, y))


def _pair(first, second) -> tuple[np.ndarray, np.ndarray]:
    a = np.asarray(first, dtype=np.float64)
    b = np.asarray(second, dtype=np.float64)
    if a.ndim != 2 or a.shape != b.shape or a.shape[0] < 1 or a.shape[1] < 2:
        raise MetricsError(f"an order correlation needs two topics x systems matrices of one shape with two or "
                           f"more systems, got {a.shape} and {b.shape}",
                           fix="evaluate the same systems on the same topics under both settings")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise MetricsError("the score matrix holds NaN or infinity", fix="score missing topics as 0")
    return a, b


def tau_interval(first, second, kind: str = "tau", *, resamples: int = DEFAULT_TAU_RESAMPLES,
                 seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL, decimals: int = TIE_DECIMALS) -> dict:
    """The rank correlation of two topics x systems matrices with its percentile bootstrap interval
    over topics (see the module notes): ``value, low, high, kind, systems, topics, values`` (how many
    values the statistic can take over these systems, :func:`distinct_values`), ``resamples``,
    ``undefined`` (draws without a tau), ``seed`` and ``level``."""
    return tau_intervals(first, second, (kind,), resamples=resamples, seed=seed, level=level, decimals=decimals)[0]


def tau_intervals(first, second, kinds: Sequence[str] = tuple(KINDS), *, resamples: int = DEFAULT_TAU_RESAMPLES,
                  seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL, decimals: int = TIE_DECIMALS) -> list[dict]:
    """:func:`tau_interval` of each of ``kinds``, from one set of draws and their means (the draws
    depend only on the seed and the shape, so each result is what :func:`tau_interval` gives alone)."""
    a, b = _pair(first, second)
    statistics = [_statistic(kind) for kind in kinds]
    resamples = check_count("resamples", resamples)
    level = check_level(level)
    n, m = a.shape
    draws = np.random.default_rng(seed).integers(0, n, (resamples, n))
    later = beside(draws.size, _draw_means, b, draws)   # the second measure's means on a second thread
    mean_a = _draw_means(a, draws)
    mean_b = later.result()
    tail = (1.0 - level) / 2.0
    results = []
    for kind, statistic in zip(kinds, statistics):
        if kind == "tau":
            values = _tau_b_rows(np.round(mean_a, decimals), np.round(mean_b, decimals))
        else:
            values = np.array([_correlate(statistic, x, y, decimals) for x, y in zip(mean_a, mean_b)])
        finite = values[np.isfinite(values)]
        low, high = (np.quantile(finite, [tail, 1.0 - tail]) if len(finite) else (np.nan, np.nan))
        results.append({"value": _correlate(statistic, a.mean(axis=0), b.mean(axis=0), decimals), "low": float(low),
                        "high": float(high), "kind": kind, "systems": m, "topics": n,
                        "values": distinct_values(m, kind), "resamples": resamples,
                        "undefined": int(len(values) - len(finite)), "seed": seed, "level": level})
    return results


_DRAW_BLOCK = 2**20
"""Elements (draws x topics x systems) of one block of :func:`_draw_means`."""


def _draw_means(x: np.ndarray, draws: np.ndarray) -> np.ndarray:
    """``x[draws].mean(axis=1)`` (each draw's mean of each system), a block of draws at a time: every
    mean adds its topics in the draw's order either way, so the values are the same to the bit,
    without the draws x topics x systems array (1,000 x 7,000 x m doubles for MS MARCO dev)."""
    rows = max(1, _DRAW_BLOCK // max(x.size, 1))
    return np.concatenate([x[draws[i:i + rows]].mean(axis=1) for i in range(0, len(draws), rows)])


def _tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b of each row pair of two (draws x systems) matrices, all rows at once:
    sum sign(dx) sign(dy) / sqrt((n0 - ties_x)(n0 - ties_y)) over the m(m-1)/2 pairs; NaN where a
    row is all ties."""
    i, j = np.triu_indices(x.shape[1], 1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (sx * sy).sum(axis=1) / np.sqrt((sx != 0).sum(axis=1) * (sy != 0).sum(axis=1))
    return np.where(((sx != 0).any(axis=1)) & ((sy != 0).any(axis=1)), out, np.nan)


def distinct_values(systems: int, kind: str = "tau") -> int | None:
    """How many values ``kind`` can take between two strict orders of ``systems`` systems:
    m(m - 1)/2 + 1 for Kendall's tau; for tau_ap (symmetric) counted over every permutation up to
    8 systems (None beyond: many)."""
    m = int(systems)
    if m < 2:
        return 0
    if kind == "tau":
        return m * (m - 1) // 2 + 1
    _statistic(kind)
    if m > _ENUMERATE_MAX:
        return None
    return len(tau_values(m, kind))


def tau_values(systems: int, kind: str = "tau") -> list[float]:
    """Every value ``kind`` takes between the order 1..m and a permutation of it, ascending (rounded
    to 12 decimals): for three systems, tau is -1, -1/3, 1/3 or 1."""
    m = int(systems)
    if m > _ENUMERATE_MAX:
        raise MetricsError(f"enumerating the orders of {m} systems is too long", fix=f"use {_ENUMERATE_MAX} or fewer")
    truth = np.arange(m, 0, -1, dtype=np.float64)
    statistic: Callable[[Any, Any], float] = tau_ap if kind == "tau_ap_ref" else _statistic(kind)
    found = {round(float(statistic(truth, np.asarray(p, dtype=np.float64))), 12) for p in permutations(truth)}
    return sorted(found)


__all__ = ["DEFAULT_TAU_RESAMPLES", "FEW_SYSTEMS", "KINDS", "distinct_values", "order_correlation",
           "tau_interval", "tau_intervals", "tau_values"]
