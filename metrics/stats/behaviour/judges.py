"""Two qrels for the same topics (human against model or crowd labels, old against corrected):
how the labels agree, and what each does to the system order and to significance.

Label agreement is computed on the (qid, docno) pairs both judge: the confusion matrix of grades
(rows A, columns B), Cohen's weighted kappa (linear and quadratic), Krippendorff's alpha for
ordinal data, and binary agreement at a threshold (grade >= threshold is relevant). Pairs only
one judges are counted, never compared. Each qrels evaluates the runs over its own queries; the
systems' orders under A and B are compared with Kendall's tau-b and tau_ap (A the reference),
and every system is tested against the baseline under each qrels (:func:`metrics.stats.compare`,
Holm-corrected over the systems).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...engines import evaluate
from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS, as_runs, means
from ...io import read_qrels
from ...ranked_runs import evaluator
from ...ranking import Ranked
from ..agreement import kendall_tau
from ..common import DEFAULT_SEED
from ..comparison import compare
from .labels import confusion, krippendorff_alpha, weighted_kappa
from .rankings import system_orders, tau_ap

DEFAULT_MEASURE = "nDCG@10"


def _pairs(qrels) -> pd.DataFrame:
    table = read_qrels(qrels).table
    return pd.DataFrame({"qid": table["qid"].to_numpy(zero_copy_only=False).astype(str),
                         "docno": table["docno"].to_numpy(zero_copy_only=False).astype(str),
                         "rel": table["rel"].to_numpy().astype(np.int64)})


def label_agreement(qrels_a, qrels_b, *, threshold: int = 1) -> dict:
    """Agreement of two qrels on their shared pairs (see the module notes).

    ``{"shared", "only_a", "only_b", "queries_shared", "confusion", "kappa_linear",
    "kappa_quadratic", "alpha_ordinal", "binary_agreement", "binary_kappa", "threshold"}``.
    """
    a, b = _pairs(qrels_a), _pairs(qrels_b)
    joined = a.merge(b, on=["qid", "docno"], how="outer", suffixes=("_a", "_b"), indicator=True)
    both = joined[joined["_merge"] == "both"]
    ra, rb = both["rel_a"].to_numpy(dtype=np.int64), both["rel_b"].to_numpy(dtype=np.int64)
    out = {"shared": int(len(both)), "only_a": int((joined["_merge"] == "left_only").sum()),
           "only_b": int((joined["_merge"] == "right_only").sum()),
           "queries_shared": int(both["qid"].nunique()), "threshold": int(threshold),
           "confusion": confusion(ra, rb)}
    if len(both) == 0:
        nan = float("nan")
        return {**out, "kappa_linear": nan, "kappa_quadratic": nan, "alpha_ordinal": nan,
                "binary_agreement": nan, "binary_kappa": nan}
    ba, bb = ra >= threshold, rb >= threshold
    return {**out, "kappa_linear": weighted_kappa(ra, rb, "linear"),
            "kappa_quadratic": weighted_kappa(ra, rb, "quadratic"),
            "alpha_ordinal": krippendorff_alpha(np.vstack([ra, rb]), "ordinal"),
            "binary_agreement": float((ba == bb).mean()), "binary_kappa": weighted_kappa(ba, bb, "none")}


def system_shift(qrels_a, qrels_b, runs, measures: Sequence[str] = (DEFAULT_MEASURE,), *,
                 baseline: str | None = None, test: str = "t", alpha: float = 0.05, seed: int = DEFAULT_SEED,
                 **options) -> dict:
    """The system order under each qrels: ``means`` (``system, measure, mean_a, mean_b, shift, rank_a,
    rank_b``), ``tau`` (``measure, tau, tau_ap``) and ``significance`` (``measure, system,
    p_a, p_b, significant_a, significant_b, changed``, against ``baseline``, default the first run).
    ``runs``: what :func:`metrics.evaluate` takes, or {name: :class:`metrics.ranking.Ranked`} against
    ``qrels_a`` when ``qrels_b`` judges only queries of ``qrels_a``."""
    qrels_a, qrels_b = read_qrels(qrels_a), read_qrels(qrels_b)
    measures = list(measures)
    # Rankings (a workspace's cache, against A) are judged again by B, so B may judge only A's queries;
    # runs are evaluated under each qrels over its own queries.
    if isinstance(runs, Mapping) and runs and all(isinstance(r, Ranked) for r in runs.values()):
        frame, ranked = evaluator(qrels_a, runs, **options)   # rankings: each ordered once, judged twice
        names = list(ranked)
        frame_a, frame_b = frame(qrels_a, measures), frame(qrels_b, measures)
    else:
        parsed = as_runs(runs)
        names = [r.name for r in parsed]
        frame_a = evaluate(qrels_a, parsed, measures, **options)
        frame_b = evaluate(qrels_b, parsed, measures, **options)
    if len(names) < 2:
        raise MetricsError(f"a system order needs two or more runs, got {len(names)}", fix="give more runs")
    table_a, table_b = means(frame_a), means(frame_b).reindex(index=means(frame_a).index)
    baseline = baseline or names[0]
    rows: list[dict[str, Any]] = []
    taus: list[dict[str, Any]] = []
    for m in table_a.columns:
        x = np.round(table_a[m].to_numpy(dtype=np.float64), TIE_DECIMALS)
        y = np.round(table_b[m].to_numpy(dtype=np.float64), TIE_DECIMALS)
        ranks = system_orders(pd.DataFrame({"a": x, "b": y}, index=table_a.index))
        rank_a, rank_b = ranks["a"], ranks["b"]
        rows.extend({"system": s, "measure": m, "mean_a": float(x[i]), "mean_b": float(y[i]),
                     "shift": float(y[i] - x[i]), "rank_a": int(rank_a.iloc[i]), "rank_b": int(rank_b.iloc[i])}
                    for i, s in enumerate(table_a.index))
        taus.append({"measure": m, "tau": kendall_tau(x, y), "tau_ap": tau_ap(x, y)})
    others = [n for n in names if n != baseline]
    sig_a = compare(frame_a, baseline, others, list(table_a.columns), test=test, alpha=alpha, seed=seed,
                    intervals=False)
    sig_b = compare(frame_b, baseline, others, list(table_a.columns), test=test, alpha=alpha, seed=seed,
                    intervals=False)
    significance = pd.DataFrame({"measure": sig_a["measure"], "system": sig_a["system"],
                                 "p_a": sig_a["p_adjusted"].to_numpy(), "p_b": sig_b["p_adjusted"].to_numpy(),
                                 "marker_a": sig_a["marker"].to_numpy(), "marker_b": sig_b["marker"].to_numpy()})
    significance["changed"] = significance["marker_a"] != significance["marker_b"]
    return {"means": pd.DataFrame(rows), "tau": pd.DataFrame(taus), "significance": significance,
            "baseline": baseline, "settings": {"seed": seed, "test": test, "alpha": alpha, "correction": "holm"}}
