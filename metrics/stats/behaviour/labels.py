"""Agreement between two sets of graded labels: confusion matrix, Cohen's weighted kappa and
Krippendorff's alpha for ordinal data."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ...errors import MetricsError

WEIGHTS = ("none", "linear", "quadratic")


def confusion(a, b, categories=None) -> pd.DataFrame:
    """Counts of (grade under ``a``, grade under ``b``) pairs: rows ``a``, columns ``b``, over the
    union of grades (or ``categories``), sorted."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.ndim != 1:
        raise MetricsError(f"confusion needs two label vectors of one length, got {a.shape} and {b.shape}",
                           fix="pair the labels of the same items")
    cats = np.unique(np.concatenate([a, b])) if categories is None else np.asarray(sorted(categories))
    ia, ib = np.searchsorted(cats, a), np.searchsorted(cats, b)
    if len(a) and (ia.max() >= len(cats) or ib.max() >= len(cats) or (cats[ia] != a).any() or (cats[ib] != b).any()):
        raise MetricsError("a label is not among the categories given", fix="list every grade in categories")
    counts = np.zeros((len(cats), len(cats)), dtype=np.int64)
    np.add.at(counts, (ia, ib), 1)
    return pd.DataFrame(counts, index=pd.Index(cats, name="a"), columns=pd.Index(cats, name="b"))


def weighted_kappa(a, b, weights: str = "linear", categories=None) -> float:
    """Cohen's kappa with disagreement weights over the category indices i, j of the sorted grades:
    kappa = 1 - sum(w * O) / sum(w * E), E = outer(row totals, column totals) / N, w = [i != j]
    (``"none"``), |i - j| (``"linear"``) or (i - j)^2 (``"quadratic"``), as
    ``sklearn.metrics.cohen_kappa_score``. NaN when the expected disagreement is 0.
    """
    if weights not in WEIGHTS:
        raise MetricsError(f"unknown kappa weights {weights!r}", fix="use none, linear or quadratic")
    observed = confusion(a, b, categories).to_numpy(dtype=np.float64)
    k = len(observed)
    i, j = np.indices((k, k))
    w = {"none": (i != j).astype(np.float64), "linear": np.abs(i - j).astype(np.float64),
         "quadratic": ((i - j) ** 2).astype(np.float64)}[weights]
    n = observed.sum()
    if n == 0:
        return float("nan")
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / n
    denominator = (w * expected).sum()
    return float("nan") if denominator == 0 else float(1.0 - (w * observed).sum() / denominator)


def krippendorff_alpha(reliability, level: str = "ordinal") -> float:
    """Krippendorff's alpha from reliability data: a coders x units matrix, NaN where a coder gave no value.

    Coincidences o_ck = sum_u (n_uc n_uk - [c = k] n_uc) / (m_u - 1) over units with m_u >= 2
    values (n_uc: how often unit u got value c); n_c = sum_k o_ck, n = sum_c n_c;
    alpha = 1 - (n - 1) sum o_ck d_ck / sum_{c,k} n_c n_k d_ck with, for ``"ordinal"``,
    d_ck = (sum_{g from c to k} n_g - (n_c + n_k) / 2)^2, for ``"interval"`` (c - k)^2 and for
    ``"nominal"`` [c != k] (Krippendorff 2011, "Computing Krippendorff's alpha-reliability").
    """
    data = np.asarray(reliability, dtype=np.float64)
    if data.ndim != 2:
        raise MetricsError(f"reliability data must be a coders x units matrix, got {data.ndim} dimensions",
                           fix="one row per coder (judge), one column per item, NaN where unjudged")
    present = ~np.isnan(data)
    values = np.unique(data[present])
    if len(values) < 2:
        return float("nan")
    codes = np.where(present, np.searchsorted(values, np.where(present, data, values[0])), -1)
    n_units, k = data.shape[1], len(values)
    per_unit = np.zeros((n_units, k))
    coder, unit = np.nonzero(present)
    np.add.at(per_unit, (unit, codes[coder, unit]), 1)
    m = per_unit.sum(axis=1)
    pairable = m >= 2
    per_unit, m = per_unit[pairable], m[pairable]
    o = np.einsum("uc,uk->ck", per_unit / (m - 1)[:, None], per_unit) - np.diag((per_unit / (m - 1)[:, None]).sum(0))
    n_c = o.sum(axis=1)
    n = n_c.sum()
    c, kk = np.indices((k, k))
    if level == "ordinal":
        cum = np.concatenate([[0.0], np.cumsum(n_c)])
        low, high = np.minimum(c, kk), np.maximum(c, kk)
        delta = (cum[high + 1] - cum[low] - (n_c[c] + n_c[kk]) / 2.0) ** 2
    elif level == "interval":
        delta = (values[c] - values[kk]) ** 2
    elif level == "nominal":
        delta = (c != kk).astype(np.float64)
    else:
        raise MetricsError(f"unknown level of measurement {level!r}", fix="use ordinal, interval or nominal")
    expected = (np.outer(n_c, n_c) * delta).sum()
    return float("nan") if expected == 0 else float(1.0 - (n - 1) * (o * delta).sum() / expected)
