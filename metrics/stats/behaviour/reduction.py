"""Incomplete judgments: seeded reductions of the qrels and what they do to each measure's system order.

Two reductions (Buckley and Voorhees 2004; Yilmaz and Aslam 2006):

- ``keep``: x% of the judgments of every query, drawn at random: each judgment gets one seeded
  uniform key and a query keeps its ceil(x% of n) judgments with the smallest keys (at least
  one), so the kept sets are nested (10% inside 30% inside 50%) for one seed.
- ``pool``: the judgments of the documents in the top d of any of the given runs (canonical
  order: score descending, docno descending), the pool a shallower assessment would have had.

A random reduction (``keep``) is drawn ``draws`` times (seeds ``seed``, ``seed + 1``, ...; 10 by
default): a single draw over a few systems gives a tau that jumps between a handful of values (over
two systems, -1 or +1), so each level reports the mean over the draws and the band from the lowest
to the highest draw. Pool depths are not random: one draw.

Every reduced qrels is evaluated once for all runs, over its own queries (a query whose pool
holds no judged document drops out, as it would from a qrels built that way); each measure's system order under it is
compared with the same measure's order under the full qrels (Kendall's tau-b and tau_ap, the
full qrels as the reference).

Each run is ordered once and joined again with every reduced qrels (:func:`metrics.ranked_runs.evaluator`;
the canonical order does not depend on the judgments): the values are those of :func:`metrics.evaluate`
on the reduced qrels, without a sort per reduction.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...errors import MetricsError
from ...evaluation import TIE_DECIMALS, means
from ...io import read_qrels
from ...ordering import positions
from ...ranked_runs import evaluator, rankings
from ..agreement import kendall_tau
from ..common import DEFAULT_SEED, check_count
from .rankings import tau_ap

DEFAULT_MEASURES = ("nDCG@10", "nDCG(judged_only=True)@10", "Bpref", "infAP")
DEFAULT_KEEP = (10, 30, 50, 100)
DEFAULT_DEPTHS = (10, 20, 50)
DEFAULT_DRAWS = 10


def _frame(qrels) -> pd.DataFrame:
    table = read_qrels(qrels).table
    return pd.DataFrame({"qid": table["qid"].to_numpy(zero_copy_only=False).astype(str),
                         "docno": table["docno"].to_numpy(zero_copy_only=False).astype(str),
                         "rel": table["rel"].to_numpy().astype(np.int64)})


def keep_share(qrels, percent: float, *, seed: int = DEFAULT_SEED):
    """The qrels with ``percent``% of each query's judgments kept at random (see the module notes)."""
    if not 0 < percent <= 100:
        raise MetricsError(f"the share of judgments kept must be in (0, 100], got {percent!r}", fix="e.g. 30")
    frame = _frame(qrels)
    key = np.random.default_rng(seed).random(len(frame))
    order = np.lexsort((key, frame["qid"].to_numpy()))
    qid_sorted = frame["qid"].to_numpy()[order]
    starts = np.flatnonzero(np.r_[True, qid_sorted[1:] != qid_sorted[:-1]])
    sizes = np.diff(np.r_[starts, len(frame)])
    quota = np.maximum(1, np.ceil(sizes * percent / 100.0 - 1e-9)).astype(np.int64)
    within = np.arange(len(frame)) - np.repeat(starts, sizes)
    kept = order[within < np.repeat(quota, sizes)]
    return read_qrels(frame.iloc[np.sort(kept)].reset_index(drop=True), name=f"keep {percent:g}%")


def pool_depth(qrels, runs, depth: int):
    """The qrels restricted to the documents in the top ``depth`` of any run (the judged part of that pool).

    ``runs``: what :func:`metrics.evaluate` takes, or {name: :class:`metrics.ranking.Ranked`} against ``qrels``."""
    if depth < 1:
        raise MetricsError(f"pool depth must be at least 1, got {depth!r}", fix="e.g. 10")
    qrels = read_qrels(qrels)
    return _pool(qrels, rankings(qrels, runs).values(), depth)


def _pool(qrels, ranked_runs, depth: int):
    pooled = []
    for ranked in ranked_runs:
        top = np.flatnonzero(positions(ranked.offsets) < depth)
        qid = np.repeat(ranked.qids.astype(str), ranked.lengths)[top]
        docno = ranked.docnos().take(top).to_numpy(zero_copy_only=False).astype(str)
        pooled.append(pd.DataFrame({"qid": qid, "docno": docno}))
    pool = pd.concat(pooled).drop_duplicates()
    frame = _frame(qrels).merge(pool, on=["qid", "docno"], how="inner")
    return read_qrels(frame, name=f"pool depth {depth}")


def _order_agreement(full: pd.DataFrame, reduced: pd.DataFrame) -> tuple[list, list]:
    taus, taps = [], []
    for m in full.columns:
        x = np.round(full[m].to_numpy(dtype=np.float64), TIE_DECIMALS)
        y = np.round(reduced[m].reindex(full.index).fillna(0.0).to_numpy(dtype=np.float64), TIE_DECIMALS)
        taus.append(kendall_tau(x, y))
        taps.append(tau_ap(x, y) if len(x) > 1 else float("nan"))
    return taus, taps


def reduction_curves(qrels, runs, measures: Sequence[str] = DEFAULT_MEASURES, *,
                     keep: Sequence[float] | None = None, depths: Sequence[int] | None = None,
                     seed: int = DEFAULT_SEED, draws: int = DEFAULT_DRAWS, **options) -> dict:
    """Means per system and order agreement with the full qrels for each reduction.

    Exactly one of ``keep`` (percentages) and ``depths`` (pool depths). Returns ``means`` (tidy:
    ``reduction, level, system, measure, mean, judgments``; for ``keep`` the mean over the draws),
    ``tau`` (``reduction, level, measure, tau, tau_low, tau_high, tau_ap, tau_ap_low, tau_ap_high,
    draws, defined, judgments``: the mean over the ``defined`` draws that have a tau, and the lowest
    and highest draw) and ``draws`` (one ``tau``/``tau_ap`` row per draw, with its ``seed``);
    ``options`` are those of :func:`metrics.evaluate` (missing, rel_level, ...). Level 100 (keep) is the
    full qrels itself, one draw. ``runs``: what :func:`metrics.evaluate` takes, or {name:
    :class:`metrics.ranking.Ranked`} against ``qrels`` (such as a workspace's ranked cache).
    """
    if (keep is None) == (depths is None):
        raise MetricsError("give either shares to keep or pool depths", fix="e.g. keep=(10, 30, 50, 100)")
    draws = check_count("draws", draws)
    qrels = read_qrels(qrels)
    frame_of_judgments, ranked = evaluator(qrels, runs, **options)

    def evaluated(judgments, measures) -> pd.DataFrame:
        return means(frame_of_judgments(judgments, measures))

    if len(ranked) < 2:
        raise MetricsError(f"a system order needs two or more runs, got {len(ranked)}", fix="give more runs")
    measures = list(measures)
    full = evaluated(qrels, measures)
    pool_ranked = rankings(qrels, runs) if depths and (options.get("ties", "score") != "score"
                                                       or options.get("max_depth") is not None) else ranked
    reduction = "keep" if keep is not None else "pool"
    levels = list(keep if keep is not None else depths or ())
    mean_rows: list[dict[str, Any]] = []
    draw_rows: list[dict[str, Any]] = []
    for level in levels:
        random = reduction == "keep" and level < 100
        for d in range(draws if random else 1):
            draw_seed = seed + d
            if reduction == "keep":
                reduced = keep_share(qrels, level, seed=draw_seed)
            else:
                reduced = _pool(qrels, pool_ranked.values(), int(level))
            table = full if not random and reduction == "keep" else evaluated(reduced, measures)
            table = table.reindex(columns=full.columns)
            for system, row in table.iterrows():
                mean_rows.extend({"reduction": reduction, "level": level, "system": system, "measure": m,
                                  "mean": float(row[m]), "judgments": len(reduced)} for m in full.columns)
            taus, taps = _order_agreement(full, table)
            draw_rows.extend({"reduction": reduction, "level": level, "seed": draw_seed if random else None,
                              "measure": m, "tau": t, "tau_ap": ap, "judgments": len(reduced)}
                             for m, t, ap in zip(full.columns, taus, taps))
    per_draw = pd.DataFrame(draw_rows)
    keys = ["reduction", "level", "system", "measure"]
    mean_frame = pd.DataFrame(mean_rows).groupby(keys, sort=False, as_index=False).agg(
        mean=("mean", "mean"), judgments=("judgments", "first"))
    return {"means": mean_frame, "tau": _summarise_draws(per_draw), "draws": per_draw, "full": full,
            "settings": {"seed": seed, "draws": draws if reduction == "keep" else 1, "reduction": reduction,
                         "levels": levels, "judgments": len(qrels)}}


def _summarise_draws(per_draw: pd.DataFrame) -> pd.DataFrame:
    """Per (level, measure): the mean of tau and tau_ap over the draws that have one, and the lowest and
    highest draw (the band)."""
    grouped = per_draw.groupby(["reduction", "level", "measure"], sort=False)
    out = grouped.agg(tau=("tau", "mean"), tau_low=("tau", "min"), tau_high=("tau", "max"),
                      tau_ap=("tau_ap", "mean"), tau_ap_low=("tau_ap", "min"), tau_ap_high=("tau_ap", "max"),
                      draws=("tau", "size"), defined=("tau", "count"), judgments=("judgments", "first"))
    return out.reset_index()
