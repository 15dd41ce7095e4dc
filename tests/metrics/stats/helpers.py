"""Shared inputs of the metrics.stats tests: seeded paired samples and the Monte Carlo error bound."""
from __future__ import annotations

from math import sqrt

import numpy as np


def paired_sample(n: int, seed: int, *, shift: float = 0.03, zeros: int = 0, ties: bool = False):
    """Seeded per-query values of a baseline and a system in [0, 1], with some equal queries and tied gaps."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.1, 0.9, n)
    diff = rng.normal(shift, 0.1, n)
    if ties:
        diff = np.round(diff, 2)
    diff[:zeros] = 0.0
    return base, base + diff


def mc_error(p: float, draws: int) -> float:
    """Four standard errors of a Monte Carlo proportion, plus the +1 of the (1 + count) / (1 + draws) rule."""
    return 4 * sqrt(max(p * (1 - p), 1e-4) / draws) + 2 / draws
