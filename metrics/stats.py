"""Paired significance tests and multiple-testing corrections over per-query values.

Every function takes aligned per-query arrays (same queries, same order).
"""
from __future__ import annotations

import numpy as np
from scipy import stats as _sp


def paired_ttest(baseline: np.ndarray, system: np.ndarray) -> float:
    """Two-sided paired t-test p-value (scipy.stats.ttest_rel); 1.0 when all differences are 0."""
    diff = np.asarray(system, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    if len(diff) < 2 or np.all(diff == diff[0]):
        return 1.0 if len(diff) < 2 or diff[0] == 0 else 0.0
    return float(_sp.ttest_rel(system, baseline).pvalue)


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


def paired_matrix(frame, measure: str, systems: list[str]):
    """(queries x systems) matrix of one measure from a tidy frame, queries aligned by qid."""
    sub = frame[frame["measure"] == measure]
    wide = sub.pivot_table(index="qid", columns="system", values="value", aggfunc="first", observed=True)
    return wide.reindex(columns=systems).fillna(0.0)


def versus_baseline(frame, baseline: str, alpha: float = 0.05):
    """Paired t-test of every system against ``baseline`` for every measure, Holm-corrected.

    Returns a frame ``system, measure, baseline_mean, mean, p_value, p_holm, significant, marker``
    where marker is "▲" (significantly better), "▼" (significantly worse) or "".
    The Holm family is all (system, measure) comparisons in ``frame``.
    """
    import pandas as pd

    measures = list(dict.fromkeys(frame["measure"]))
    systems = [s for s in dict.fromkeys(frame["system"]) if s != baseline]
    rows = []
    for measure in measures:
        wide = paired_matrix(frame, measure, [baseline, *systems])
        base = wide[baseline].to_numpy()
        for system in systems:
            values = wide[system].to_numpy()
            rows.append({"system": system, "measure": measure, "baseline_mean": float(base.mean()),
                         "mean": float(values.mean()), "p_value": paired_ttest(base, values)})
    out = pd.DataFrame(rows, columns=["system", "measure", "baseline_mean", "mean", "p_value"])
    out["p_holm"] = holm(out["p_value"].to_numpy()) if len(out) else []
    out["significant"] = out["p_holm"] < alpha
    out["marker"] = np.where(out["significant"], np.where(out["mean"] > out["baseline_mean"], "▲", "▼"), "")
    return out
