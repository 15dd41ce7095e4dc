"""Treatments of unjudged documents (zero, condensed, inferred): the leaderboard under each, how
its order changes, systems whose Judged@k is low, and how proxy labels agree with the qrels."""
from __future__ import annotations

from collections.abc import Mapping
from itertools import combinations

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS, evaluate, means
from .rows import qrels_table

STRATEGIES: dict[str, str] = {
    "zero": "unjudged = 0",
    "condensed": "condensed (judged only)",
    "inferred": "inferred (proxy labels)",
}
"""Treatments of unjudged documents: gain 0 (trec_eval's default), removed from
the list (``judged_only``, trec_eval -J), or labelled from a proxy qrels."""


BEST_GAP = 0.1
"""A system whose Judged@k is more than this below the best system's is flagged."""


MEDIAN_GAP = 0.05
"""... or more than this below the median of all compared systems."""


def strategy_table(means: Mapping[str, Mapping[str, float] | pd.Series], *,
                   reference: str | None = None) -> pd.DataFrame:
    """The leaderboard under each strategy: tidy ``system, strategy, value, rank, change``.

    ``means`` maps strategy -> {system: mean value} (e.g. a column of
    ``metrics.means``). ``rank`` is 1 for the best value; means equal to 12
    decimals share the better rank (competition ranking: 1, 2, 2, 4).
    ``change`` = rank under ``reference`` (default: the first strategy) minus
    rank here, so +1 means the system moved up one place. Systems keep the
    order of the reference strategy's input.
    """
    if not means:
        raise MetricsError("no strategies given", fix="pass {strategy: {system: value}}")
    strategies = list(means)
    reference = strategies[0] if reference is None else reference
    if reference not in means:
        raise MetricsError(f"reference strategy {reference!r} is not among {', '.join(strategies)}",
                           fix="pick one of the given strategies")
    systems = list(dict.fromkeys(str(s) for s in pd.Series(means[reference]).index))
    for strategy in strategies:
        for system in pd.Series(means[strategy]).index:
            if str(system) not in systems:
                systems.append(str(system))
    parts = []
    ranks = {}
    for strategy in strategies:
        values = pd.Series(means[strategy], dtype="float64")
        values.index = values.index.astype(str)
        values = values.reindex(systems)
        ranks[strategy] = _competition_rank(values.to_numpy())
        parts.append(values)
    rows = []
    for strategy, values in zip(strategies, parts):
        change = ranks[reference] - ranks[strategy]
        rows.append(pd.DataFrame({"system": systems, "strategy": strategy, "value": values.to_numpy(),
                                  "rank": ranks[strategy], "change": change}))
    out = pd.concat(rows, ignore_index=True)
    return out.astype({"system": "string", "strategy": "string", "rank": "Int64", "change": "Int64"})


def _competition_rank(values: np.ndarray) -> np.ndarray:
    """1 + the number of strictly better values; NaN for a missing value."""
    rounded = np.round(values.astype(np.float64), TIE_DECIMALS)
    finite = np.isfinite(rounded)
    better = (rounded[None, :] > rounded[:, None]) & finite[None, :]
    return np.where(finite, 1.0 + better.sum(axis=1), np.nan)


def rank_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """Kendall's tau-b between the system orders of every pair of strategies.

    ``table`` is :func:`strategy_table`'s frame. Returns ``strategy_a,
    strategy_b, tau, p_value, systems, changed`` (``changed``: systems whose
    rank differs). tau = 1 means the same order; NaN with fewer than 2 systems
    or when one order is all ties.
    """
    from scipy.stats import kendalltau

    strategies = list(dict.fromkeys(table["strategy"]))
    wide = table.pivot_table(index="system", columns="strategy", values="value", aggfunc="first", observed=True,
                             dropna=False)
    rank = table.pivot_table(index="system", columns="strategy", values="rank", aggfunc="first", observed=True,
                             dropna=False)
    rows = []
    for a, b in combinations(strategies, 2):
        both = wide[[a, b]].dropna()
        tau = p = np.nan
        if len(both) >= 2:
            x = np.round(both[a].to_numpy(dtype=np.float64), TIE_DECIMALS)
            y = np.round(both[b].to_numpy(dtype=np.float64), TIE_DECIMALS)
            if np.unique(x).size > 1 and np.unique(y).size > 1:
                result = kendalltau(x, y)
                tau, p = float(result.statistic), float(result.pvalue)
        changed = int((rank.loc[both.index, a] != rank.loc[both.index, b]).sum())
        rows.append({"strategy_a": a, "strategy_b": b, "tau": tau, "p_value": p, "systems": len(both),
                     "changed": changed})
    return pd.DataFrame(rows, columns=["strategy_a", "strategy_b", "tau", "p_value", "systems", "changed"])


def evaluate_strategies(qrels, runs, measure: str = "nDCG@10", *, proxy=None, **options) -> pd.DataFrame:
    """:func:`strategy_table` of ``measure`` computed by ``metrics.evaluate``.

    Strategies: ``zero`` (default evaluation), ``condensed`` (``judged_only``)
    and, when a ``proxy`` qrels is given, ``inferred``. ``options`` go to
    ``metrics.evaluate`` (missing, ties, max_depth, rel_level, on_duplicate).
    """

    measure = str(measure)
    table = {
        "zero": means(evaluate(qrels, runs, [measure], **options)).iloc[:, 0],
        "condensed": means(evaluate(qrels, runs, [measure], judged_only=True, **options)).iloc[:, 0],
    }
    if proxy is not None:
        table["inferred"] = means(evaluate(qrels, runs, [measure], inferred=proxy, **options)).iloc[:, 0]
    return strategy_table(table)


def judged_warnings(judged: Mapping[str, float] | pd.Series, *, best_gap: float = BEST_GAP,
                    median_gap: float = MEDIAN_GAP) -> pd.DataFrame:
    """Systems whose Judged@k is well below the others': their scores are lower bounds.

    A system is flagged when its mean Judged@k is more than ``best_gap`` below
    the best system's, or more than ``median_gap`` below the median of all
    compared systems (itself included). Needs two or more systems. Returns
    ``system, judged, best, median, below_best, below_median, reason`` for the
    flagged systems only, lowest Judged@k first.
    """
    values = pd.Series(judged, dtype="float64").dropna()
    columns = ["system", "judged", "best", "median", "below_best", "below_median", "reason"]
    if len(values) < 2:
        return pd.DataFrame(columns=columns)
    best, median = float(values.max()), float(values.median())
    below_best, below_median = best - values, median - values
    flagged = (below_best > best_gap) | (below_median > median_gap)
    reason = np.where(below_best > best_gap, f"more than {best_gap:g} below the best",
                      f"more than {median_gap:g} below the median")
    out = pd.DataFrame({"system": values.index.astype(str), "judged": values.to_numpy(), "best": best,
                        "median": median, "below_best": below_best.to_numpy(),
                        "below_median": below_median.to_numpy(), "reason": reason})[flagged.to_numpy()]
    return out.sort_values(["judged", "system"], kind="stable").reset_index(drop=True)


def proxy_agreement(qrels, proxy) -> dict:
    """How the proxy labels relate to the real qrels.

    ``{"labels", "fills", "overlap", "exact", "within_one"}``: proxy labels in
    total, those for pairs the qrels do not judge (the ones ``inferred`` uses;
    rows of queries outside the qrels are not counted), those for judged pairs,
    and on those the share with the same grade and with grades at most one apart
    (NaN without overlap).
    """
    real, guess = qrels_table(qrels), qrels_table(proxy)
    guess = guess.filter(pc.is_in(guess["qid"], value_set=pc.unique(real["qid"])))
    joined = guess.join(real.rename_columns(["qid", "docno", "real"]), keys=["qid", "docno"], join_type="inner",
                        use_threads=False)
    diff = np.abs(joined["rel"].to_numpy() - joined["real"].to_numpy()) if joined.num_rows else np.array([])
    n = int(joined.num_rows)
    return {"labels": int(qrels_table(proxy).num_rows), "fills": int(guess.num_rows) - n, "overlap": n,
            "exact": float((diff == 0).mean()) if n else float("nan"),
            "within_one": float((diff <= 1).mean()) if n else float("nan")}
