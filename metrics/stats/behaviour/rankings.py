"""How far two system orderings agree: Kendall's tau-b, tau_ap and rank-biased overlap, and the
agreement of measures on a tidy frame (system orders, tau matrices, swapped pairs, per-query).

Orders are given as score vectors (one value per system, higher = better). Where an order must
be strict (tau_ap, RBO), ties are broken by the position of the system in the input: stated
once here, so that the same inputs always give the same order.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS, first_seen, means
from ..agreement import ranking_stability
from ..common import scipy_stats

DEFAULT_MEASURES = ("nDCG@10", "AP", "RR", "R@100", "P@10")
RBO_P = 0.9


def _scores(x, what: str) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 1:
        raise MetricsError(f"{what} needs one score per system, got shape {x.shape}",
                           fix="pass a vector of system means")
    return x


def order_of(scores) -> np.ndarray:
    """Indices of the systems from best to worst: score descending, ties by input position."""
    x = _scores(scores, "an order")
    return np.lexsort((np.arange(len(x)), -x))


def tau_ap(truth, other) -> float:
    """AP correlation of ``other``'s order against the reference order ``truth`` (Yilmaz, Aslam
    and Robertson 2008): tau_ap = 2 / (N - 1) * sum_{i=2..N} C(i) / (i - 1) - 1, where C(i) is
    the number of systems above rank i in ``other``'s order that ``truth`` also ranks above the
    system at rank i. A swap near the top costs more than one near the bottom; 1 = same order,
    -1 = reversed. Not symmetric: see :func:`tau_ap_symmetric`.
    """
    t, o = _scores(truth, "tau_ap"), _scores(other, "tau_ap")
    if t.shape != o.shape:
        raise MetricsError(f"tau_ap needs two score vectors of one length, got {t.shape} and {o.shape}",
                           fix="give one score per system on both sides")
    n = len(t)
    if n < 2:
        return float("nan")
    truth_rank = np.empty(n, dtype=np.int64)
    truth_rank[order_of(t)] = np.arange(n)
    ranks = truth_rank[order_of(o)]               # truth's rank of the system at each rank of other
    above = ranks[None, :] < ranks[:, None]       # [i, j]: truth ranks j's system above i's
    correct = np.tril(above, -1).sum(axis=1)[1:]  # C(i) for i = 2..N, over systems above i in other
    return float(2.0 / (n - 1) * (correct / np.arange(1, n)).sum() - 1.0)


def tau_ap_symmetric(x, y) -> float:
    """(tau_ap(x, y) + tau_ap(y, x)) / 2: for two orders of which neither is the reference."""
    return (tau_ap(x, y) + tau_ap(y, x)) / 2.0


def rbo(first: Sequence, second: Sequence, p: float = RBO_P) -> float:
    """Extrapolated rank-biased overlap RBO_ext of two ranked lists (Webber, Moffat and Zobel 2010, eq. 30).

    With S the shorter list (length s), L the longer (length l) and X_d the overlap of their
    top-d prefixes (for d > s, S's whole list against L's top d):
    RBO_ext = (1 - p) / p * (sum_{d=1..l} X_d / d * p^d + sum_{d=s+1..l} X_s (d - s) / (s d) p^d)
              + ((X_l - X_s) / l + X_s / s) * p^l.
    Equal lists give 1, disjoint lists 0; ``p`` is the persistence (0.9: the top 10 carry 86%).
    """
    if not 0 < p < 1:
        raise MetricsError(f"RBO persistence p must be between 0 and 1, got {p!r}", fix="for example p=0.9")
    a, b = list(first), list(second)
    if len(set(a)) != len(a) or len(set(b)) != len(b):
        raise MetricsError("RBO needs lists without repeated items", fix="give each item once per list")
    short, long_ = (a, b) if len(a) <= len(b) else (b, a)
    s, n = len(short), len(long_)
    if s == 0:
        return float("nan")
    seen_short, seen_long, x = set(), set(), np.zeros(n)
    overlap = 0
    for d in range(n):
        item_l = long_[d]
        if d < s:
            item_s = short[d]
            if item_s == item_l:
                overlap += 1
            else:
                overlap += (item_s in seen_long) + (item_l in seen_short)
            seen_short.add(item_s)
        else:
            overlap += item_l in seen_short
        seen_long.add(item_l)
        x[d] = overlap
    depth = np.arange(1, n + 1, dtype=np.float64)
    weights = p ** depth
    x_s, x_l = x[s - 1], x[n - 1]
    tail = depth > s
    total = (x / depth * weights).sum() + (x_s * (depth[tail] - s) / (s * depth[tail]) * weights[tail]).sum()
    return float((1 - p) / p * total + ((x_l - x_s) / n + x_s / s) * p ** n)


def system_orders(table: pd.DataFrame) -> pd.DataFrame:
    """Rank of each system (1 = best) under each column of a system x measure table of means,
    ties by the table's row order (:func:`order_of`)."""
    out = {}
    for measure in table.columns:
        ranks = np.empty(len(table), dtype=np.int64)
        ranks[order_of(table[measure].to_numpy(dtype=np.float64))] = np.arange(1, len(table) + 1)
        out[measure] = ranks
    return pd.DataFrame(out, index=table.index)


def tau_ap_matrix(table: pd.DataFrame, *, decimals: int = TIE_DECIMALS) -> pd.DataFrame:
    """Symmetric tau_ap (:func:`tau_ap_symmetric`) between every pair of columns of a system x measure table."""
    values = np.round(table.to_numpy(dtype=np.float64), decimals)
    cols = list(table.columns)
    out = [[1.0 if a == b else tau_ap_symmetric(values[:, a], values[:, b]) for b in range(len(cols))]
           for a in range(len(cols))]
    return pd.DataFrame(np.asarray(out, dtype=np.float64).reshape(len(cols), len(cols)), index=pd.Index(cols),
                        columns=pd.Index(cols))


def swapped_pairs(table: pd.DataFrame, a: str, b: str, *, decimals: int = TIE_DECIMALS) -> pd.DataFrame:
    """Pairs of systems that measures ``a`` and ``b`` order differently: ``system_x, system_y, a_diff, b_diff``
    (diff = x - y; a pair swaps when the two differences have opposite signs, ties excluded)."""
    x = np.round(table[a].to_numpy(dtype=np.float64), decimals)
    y = np.round(table[b].to_numpy(dtype=np.float64), decimals)
    i, j = np.triu_indices(len(table), 1)
    da, db = x[i] - x[j], y[i] - y[j]
    swap = da * db < 0
    names = np.asarray(table.index, dtype=object)
    return pd.DataFrame({"system_x": names[i[swap]], "system_y": names[j[swap]], "a_diff": da[swap],
                         "b_diff": db[swap]})


def per_query_agreement(frame: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """Correlation of per-query scores under measures ``a`` and ``b``: one row per system and one for
    all (system, query) pairs pooled: ``system, n_queries, pearson, kendall_tau`` (tau-b, scipy)."""
    sub = frame[frame["measure"].isin([a, b])]
    wide = sub.pivot_table(index=["system", "qid"], columns="measure", values="value", aggfunc="first",
                           observed=True).dropna()
    if a not in wide.columns or b not in wide.columns:
        raise MetricsError(f"per-query agreement needs both {a} and {b} in the frame", fix="evaluate both measures")
    rows = []
    systems = first_seen(frame["system"])
    for system, part in [*((s, wide.xs(s, level="system")) for s in systems if s in wide.index.get_level_values(0)),
                         ("(all)", wide)]:
        x, y = part[a].to_numpy(dtype=np.float64), part[b].to_numpy(dtype=np.float64)
        constant = len(x) < 2 or np.all(x == x[0]) or np.all(y == y[0])
        pearson = float("nan") if constant else float(np.corrcoef(x, y)[0, 1])
        tau = float("nan") if constant else float(scipy_stats().kendalltau(x, y).statistic)
        rows.append({"system": system, "n_queries": len(x), "pearson": pearson, "kendall_tau": tau})
    return pd.DataFrame(rows)


def measure_agreement(frame: pd.DataFrame, measures: Sequence[str] | None = None) -> dict:
    """The agreement of measures on one tidy frame: ``means`` (system x measure), ``ranks`` (1 = best),
    ``tau`` (Kendall's tau-b matrix, :func:`metrics.stats.ranking_stability`) and ``tau_ap``
    (symmetric tau_ap matrix). Means are rounded to :data:`TIE_DECIMALS` before ordering."""
    table = means(frame)
    if measures is not None:
        table = table[list(measures)]
    if len(table) < 2:
        raise MetricsError(f"measure agreement needs two or more systems, got {len(table)}",
                           fix="select at least two runs")
    return {"means": table, "ranks": system_orders(table.round(TIE_DECIMALS)), "tau": ranking_stability(table),
            "tau_ap": tau_ap_matrix(table)}


__all__ = ["DEFAULT_MEASURES", "RBO_P", "measure_agreement", "order_of", "per_query_agreement",
           "rbo", "swapped_pairs", "system_orders", "tau_ap", "tau_ap_matrix", "tau_ap_symmetric"]
