"""Comparisons on the tidy ``system, qid, measure, value`` frame: paired matrices, per-query
differences, the comparison table against a baseline, and difference profiles over cutoffs."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..evaluation import first_seen
from .bootstrap import bootstrap_pass, resample_chunks
from .common import (
    CORRECTIONS,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    TESTS,
    TIE_TOLERANCE,
    check_count,
    check_level,
)
from .corrections import adjust_family, check_family
from .descriptive import is_descriptive
from .paired import effect_size, paired_pvalues, wins_ties_losses

BETTER = "▲"   # significantly better than the baseline
WORSE = "▼"    # significantly worse


MISSING = ("zero", "skip")


def paired_matrix(frame, measure: str, systems: list[str], missing: str = "zero"):
    """(queries x systems) matrix of one measure from a tidy frame, queries aligned by qid.

    ``missing="zero"``: a query a system lacks scores 0; ``"skip"``: only the queries every system has.
    """
    sub = frame[frame["measure"] == measure]
    wide = sub.pivot_table(index="qid", columns="system", values="value", aggfunc="first", observed=True)
    wide = wide.reindex(columns=systems)
    return wide.dropna() if _missing(missing) == "skip" else wide.fillna(0.0)


def _missing(missing: str) -> str:
    if missing not in MISSING:
        raise MetricsError(f"missing={missing!r} is not an option", fix="use missing='zero' or missing='skip'")
    return missing


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
                   "marker", "test", "correction", "family"]


def compare(frame: pd.DataFrame, baseline: str, systems: Sequence[str] | None = None,
            measures: Sequence[str] | None = None, *, test: str = "t", correction: str = "holm",
            alpha: float = 0.05, seed: int = DEFAULT_SEED, permutations: int = DEFAULT_PERMUTATIONS,
            resamples: int = DEFAULT_RESAMPLES, level: float = DEFAULT_LEVEL,
            tolerance: float = TIE_TOLERANCE, intervals: bool = True, missing: str = "zero",
            family: str = "all") -> pd.DataFrame:
    """Every system against ``baseline`` on every measure of a tidy frame: one row per (measure, system).

    Columns (:data:`COMPARE_COLUMNS`): means with bootstrap CIs, ``diff`` =
    mean - baseline_mean, ``rel_diff`` = diff / baseline_mean, the CI of the
    mean difference, the raw ``p_value`` of ``test`` and ``p_adjusted`` under
    ``correction`` within the ``family`` (``"all"``: every row together; ``"measure"``: each
    measure's rows apart, as PyTerrier), paired Cohen's d, wins/ties/losses at ``tolerance``,
    and ``marker`` "▲"/"▼" when p_adjusted < alpha. Descriptive measures
    (:func:`metrics.stats.descriptive.is_descriptive`: Judged@k, NumRet, ...) are reported but
    not tested: their p-values are NaN, they join no family and get no marker.
    ``missing="zero"``: queries are the union over the frame, sorted by qid; one a
    system lacks scores 0. ``missing="skip"``: each system is paired with the baseline
    over the queries both have (``n_queries`` per row; both means over those queries),
    and the correction still spans every row. The bootstrap CIs and the bootstrap
    test draw the same seeded resamples; the randomisation test one sign matrix for
    all rows. ``intervals=False`` skips the CIs (their columns are NaN).
    """
    if test not in TESTS:
        raise MetricsError(f"unknown test {test!r}", fix="use one of " + ", ".join(TESTS))
    if correction not in CORRECTIONS:
        raise MetricsError(f"unknown correction {correction!r}", fix="use one of " + ", ".join(CORRECTIONS))
    level = check_level(level)
    family = check_family(family)
    resamples = check_count("resamples", resamples)
    present = [str(s) for s in first_seen(frame["system"])]
    if baseline not in present:
        raise MetricsError(f"baseline {baseline!r} is not among the systems ({', '.join(present) or 'none'})",
                           fix="pick the baseline among the evaluated runs")
    systems = [s for s in (systems if systems is not None else present) if s != baseline]
    absent = [s for s in systems if s not in present]
    if absent:
        raise MetricsError(f"system(s) {', '.join(absent)} not in the frame", fix="evaluate them first")
    measures = list(dict.fromkeys(measures if measures is not None else frame["measure"].astype(str)))
    if not systems or not measures:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in COMPARE_COLUMNS})
    options = dict(test=test, correction=correction, alpha=alpha, seed=seed, permutations=permutations,
                   resamples=resamples, level=level, tolerance=tolerance, intervals=intervals, family=family)
    if _missing(missing) == "skip":
        return _compare_common_queries(frame, baseline, systems, measures, options)

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
        boot, p = bootstrap_pass(np.hstack([base, other, d]) if intervals else None,
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
    column_measures = [m for m in measures for _ in systems]
    p = np.where([is_descriptive(m) for m in column_measures], np.nan, np.asarray(p, dtype=np.float64))
    wins, ties, losses = wins_ties_losses(d, tolerance)
    base_mean, mean = base.mean(axis=0), other.mean(axis=0)
    diff = mean - base_mean
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(base_mean != 0, diff / np.where(base_mean != 0, base_mean, 1.0), np.nan)
    p_adj = adjust_family(p, correction, column_measures if family == "measure" else None)
    significant = p_adj < alpha
    out = pd.DataFrame({
        "measure": column_measures, "system": systems * len(measures),
        "baseline": baseline, "n_queries": n,
        "baseline_mean": base_mean, "baseline_ci_low": low[:k], "baseline_ci_high": high[:k],
        "mean": mean, "mean_ci_low": low[k:2 * k], "mean_ci_high": high[k:2 * k],
        "diff": diff, "rel_diff": rel, "diff_ci_low": low[2 * k:], "diff_ci_high": high[2 * k:],
        "p_value": p, "p_adjusted": p_adj, "effect_size": effect_size(d),
        "wins": wins, "ties": ties, "losses": losses, "significant": significant,
        "marker": np.where(significant, np.where(diff > 0, BETTER, WORSE), ""), "test": test, "correction": correction,
        "family": family,
    })
    return out[COMPARE_COLUMNS]


def _compare_common_queries(frame: pd.DataFrame, baseline: str, systems: list[str], measures: list[str],
                            options: dict) -> pd.DataFrame:
    """:func:`compare` with ``missing="skip"``: one comparison per (measure, system) over the
    queries that system and the baseline both have, then the correction over all rows."""
    rows = []
    for measure in measures:
        sub = frame[frame["measure"] == measure]
        for system in systems:
            pair = sub[sub["system"].isin([baseline, system])]
            both = pair.groupby("qid", observed=True)["system"].nunique()
            common = both.index[both.to_numpy() == 2]
            if len(common) == 0:
                raise MetricsError(f"{system} and {baseline} have no query in common on {measure}",
                                   fix="compare runs of the same topics, or score missing queries as 0")
            rows.append(compare(pair[pair["qid"].isin(common)], baseline, [system], [measure], **options))
    out = pd.concat(rows, ignore_index=True)
    p_adj = adjust_family(out["p_value"].to_numpy(dtype=np.float64), options["correction"],
                          out["measure"].to_numpy() if options["family"] == "measure" else None)
    significant = p_adj < options["alpha"]
    out["p_adjusted"] = p_adj
    out["significant"] = significant
    out["marker"] = np.where(significant, np.where(out["diff"].to_numpy() > 0, BETTER, WORSE), "")
    return out[COMPARE_COLUMNS]


def versus_baseline(frame, baseline: str, alpha: float = 0.05, *, test: str = "t", correction: str = "holm",
                    seed: int = DEFAULT_SEED, permutations: int = DEFAULT_PERMUTATIONS,
                    resamples: int = DEFAULT_RESAMPLES, family: str = "all"):
    """Every system against ``baseline`` for every measure, with ``test`` and ``correction``.

    Returns a frame ``system, measure, baseline_mean, mean, p_value, p_adjusted, p_holm, significant,
    marker, test, correction, family`` where marker is "▲" (significantly better), "▼" (significantly
    worse) or "", significance being ``p_adjusted < alpha``. The correction family is all (system,
    measure) comparisons in ``frame`` (``family="all"``) or each measure's (``"measure"``);
    ``p_holm`` is always the Holm-adjusted p-value in the same family. Descriptive measures are
    not tested (NaN p-values, no marker).
    """
    columns = ["system", "measure", "baseline_mean", "mean", "p_value", "p_adjusted", "p_holm", "significant",
               "marker", "test", "correction", "family"]
    systems = [s for s in dict.fromkeys(str(s) for s in first_seen(frame["system"])) if s != baseline]
    if not systems or not len(frame):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in columns})
    full = compare(frame, baseline, systems, test=test, correction=correction, alpha=alpha, seed=seed,
                   permutations=permutations, resamples=resamples, intervals=False, family=family)
    full["p_holm"] = adjust_family(full["p_value"].to_numpy(dtype=np.float64), "holm",
                                   full["measure"].to_numpy() if family == "measure" else None)
    return full[columns].reset_index(drop=True)


def difference_profile(baseline_curve, system_curve, *, resamples: int = DEFAULT_RESAMPLES,
                       seed: int = DEFAULT_SEED, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Mean difference at every cutoff with its percentile bootstrap CI.

    Returns ``k, baseline_mean, mean, diff, ci_low, ci_high``, one row per cutoff.

    Takes two per-query curves (``metrics.curve`` frames, index qid, columns
    k); queries are aligned by qid (one a system lacks scores 0) and cutoffs
    by k (a shorter curve is extended with its last value, as a measure at a
    cutoff past the ranking's depth keeps its value). All cutoffs use the same
    seeded resamples of the queries (:func:`_resample_means`).
    """
    level = check_level(level)
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
    low, high = np.quantile(_resample_means(d, check_count("resamples", resamples), seed), [tail, 1.0 - tail],
                            axis=0)
    return pd.DataFrame({"k": np.asarray(ks, dtype=np.int64), "baseline_mean": base.mean(axis=0),
                         "mean": other.mean(axis=0), "diff": d.mean(axis=0), "ci_low": low, "ci_high": high})


_PROFILE_BLOCK = 2**22
"""Resample-count elements (rows x queries) per matmul of :func:`_resample_means`."""


def _resample_means(d: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(resamples x cutoffs) means of the columns of ``d`` over the seeded bootstrap resamples of its
    rows: the counts of :func:`metrics.stats.bootstrap.resample_chunks` (the same draws as every
    other bootstrap of the package), gathered into blocks of about :data:`_PROFILE_BLOCK` elements
    before they meet ``d``. A profile has a hundred cutoffs or more; the package's small blocks
    (9 resamples at 7,000 queries) make a thin matmul per block whose BLAS threads wait on each
    other, 40x slower on a busy machine than one matmul per few hundred resamples. The sums are
    the same to rounding (the matmul's kernel, and with it the last bit, follows the block's shape
    and the BLAS threads, as before)."""
    n = d.shape[0]
    d = np.ascontiguousarray(d, dtype=np.float64)
    means = np.empty((resamples, d.shape[1]))
    rows = max(1, _PROFILE_BLOCK // max(n, 1))
    # one buffer for every block (rows plus one chunk: a block ends with the chunk that fills it),
    # not a new array per block: 7,000 queries x 10,000 resamples are 560 MB of fresh pages
    block: np.ndarray | None = None
    start, held = 0, 0
    for counts in resample_chunks(n, resamples, seed):
        if block is None:
            block = np.empty((min(rows + len(counts), resamples), n))
        block[held:held + len(counts)] = counts
        held += len(counts)
        if held >= rows or start + held == resamples:
            means[start:start + held] = block[:held] @ d / n
            start, held = start + held, 0
    return means
