"""Agreement between systems and rankings: Tukey HSD over all pairs, Kendall's tau-b, ranking stability."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..evaluation import TIE_DECIMALS
from .common import DEFAULT_LEVEL, check_level, scipy_stats


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
    level = check_level(level)
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
            p = scipy_stats().studentized_range.sf(np.abs(diff) / se, m, df)
            half = scipy_stats().studentized_range.ppf(level, m, df) * se
        else:
            p = np.where(diff == 0, 1.0, 0.0)
            half = 0.0
        low, high = diff - half, diff + half
    elif design == "one-way":
        result = scipy_stats().tukey_hsd(*x.T)
        ci = result.confidence_interval(confidence_level=level)
        # scipy's entry [i, j] is mean(i) - mean(j); ours is mean(b) - mean(a)
        p = result.pvalue[a, b]
        low, high = -ci.high[a, b], -ci.low[a, b]
    else:
        raise MetricsError(f"unknown Tukey HSD design {design!r}", fix="use 'two-way' (paired) or 'one-way'")
    return pd.DataFrame({"system_a": [names[i] for i in a], "system_b": [names[j] for j in b], "diff": diff,
                         "ci_low": low, "ci_high": high, "p_value": np.minimum(p, 1.0)})


def kendall_tau(x, y) -> float:
    """Kendall's tau-b between two orderings given as scores: ``scipy.stats.kendalltau``'s statistic.

    tau_b = (concordant - discordant) / sqrt((n0 - ties_x)(n0 - ties_y)), n0 = m(m-1)/2;
    NaN when either side is all ties.
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise MetricsError(f"Kendall's tau needs two score vectors of one length, got {x.shape} and {y.shape}",
                           fix="give one score per system on both sides")
    if len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0]):
        return float("nan")
    return float(scipy_stats().kendalltau(x, y).statistic)


def ranking_stability(table: pd.DataFrame, *, decimals: int = TIE_DECIMALS) -> pd.DataFrame:
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
