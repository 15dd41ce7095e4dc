"""Tune a fusion parameter honestly: sweep a grid (RRF k or the weights), and pick it on one fold
of the queries while reporting on the other.

Tuning on the queries that one reports on overfits: the best of twenty settings looks better
than it will on new queries. :func:`split_queries` draws seeded folds; :func:`tune_on_folds`
chooses the setting on all folds but one and reports it on the one left out.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from .. import io
from ..errors import MetricsError
from ..evaluation import evaluate, means
from .fusion import Pool, fuse, method, prepare

__all__ = ["sweep", "weight_grid", "split_queries", "tune_on_folds", "DEFAULT_K_GRID"]

DEFAULT_K_GRID = (1, 5, 10, 20, 40, 60, 80, 100, 200, 500)


def weight_grid(n_inputs: int, step: float = 0.1) -> list[tuple]:
    """Every weight vector of ``n_inputs`` non-negative multiples of ``step`` summing to 1
    (the simplex grid; 2 inputs and step 0.1 give (0, 1), (0.1, 0.9), ..., (1, 0))."""
    if n_inputs < 2:
        raise MetricsError("a weight grid needs at least two runs", fix="give two or more runs")
    parts = round(1 / step)
    if parts < 1 or abs(parts * step - 1) > 1e-9:
        raise MetricsError(f"step {step!r} does not divide 1", fix="use a step such as 0.1, 0.2 or 0.25")
    grid = []
    for combo in itertools.product(range(parts + 1), repeat=n_inputs - 1):
        if sum(combo) <= parts:
            grid.append(tuple(c / parts for c in combo) + ((parts - sum(combo)) / parts,))
    return [g for g in grid if any(g)]


def sweep(qrels, runs, *, method_name: str = "rrf", k=None, weights=None, measures=("nDCG@10",),
          norm: str | None = None, depth: int | None = None, per_query: bool = False,
          **evaluate_options) -> pd.DataFrame:
    """Evaluate a fusion at every setting of a grid: a tidy frame.

    Exactly one grid: ``k`` (RRF constants) or ``weights`` (weight vectors, one weight per
    run; see :func:`weight_grid`). The other fusion options are fixed. Columns: ``parameter``
    ("k" or "weights"), ``setting`` (a label such as "60" or "0.3,0.7"), ``measure``,
    ``value`` (the mean over queries, or the per-query value with ``qid`` when
    ``per_query``), ``n_queries``, and the numeric settings: a ``k`` column, or one
    ``w:<run name>`` column per run. ``evaluate_options`` go to :func:`metrics.evaluate`.
    """
    if (k is None) == (weights is None):
        raise MetricsError("give one grid to sweep: k=[...] or weights=[...]", fix="e.g. k=[10, 60, 100]")
    qrels = io.read_qrels(qrels)
    if isinstance(runs, Pool) and depth is not None and depth != runs.depth:
        raise MetricsError(f"the pool was prepared with depth={runs.depth}, not {depth}",
                           fix="prepare the pool with the depth wanted, or leave depth out")
    pool = runs if isinstance(runs, Pool) else prepare(runs, depth=depth)
    m = method(method_name)
    if k is not None and m.name != "rrf":
        raise MetricsError(f"k is a parameter of rrf, not of {m.name}", fix="sweep weights, or use method rrf")
    grid = list(k if k is not None else weights)
    if not grid:
        raise MetricsError("the grid is empty", fix="give at least one setting")
    frames = []
    for setting in grid:
        options = {"k": setting} if k is not None else {"weights": setting}
        fused, _ = fuse(pool, m.name, norm=norm, **options)
        label = f"{float(setting):g}" if k is not None else ",".join(f"{float(w):g}" for w in setting)
        frame = evaluate(qrels, [fused], list(measures), **evaluate_options)
        if per_query:
            frame = frame.drop(columns="system")
            frame["n_queries"] = frame.groupby("measure", observed=True)["qid"].transform("size")
        else:
            n = frame.groupby("measure", sort=False, observed=True)["qid"].size()
            table = means(frame)
            frame = pd.DataFrame({"measure": list(table.columns), "value": table.iloc[0].to_numpy(dtype=float),
                                  "n_queries": [int(n[c]) for c in table.columns]})
        frame.insert(0, "setting", label)
        frame.insert(0, "parameter", "k" if k is not None else "weights")
        if k is not None:
            frame["k"] = float(setting)
        else:
            for name, w in zip(pool.names, setting):
                frame[f"w:{name}"] = float(w)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def split_queries(qids, *, seed: int = 0, folds: int = 2) -> list[np.ndarray]:
    """Seeded random folds of the distinct query ids (each sorted), sizes differing by at most one.

    The ids are sorted before the draw, so the folds depend on the set of queries and the
    seed only, never on the order the ids were given in.
    """
    unique = np.array(sorted({str(q) for q in qids}), dtype=object)
    if folds < 2 or len(unique) < folds:
        raise MetricsError(f"cannot split {len(unique)} queries into {folds} folds",
                           fix="use at least two folds and at least as many queries as folds")
    order = np.random.default_rng(seed).permutation(len(unique))
    return [np.sort(unique[part]) for part in np.array_split(order, folds)]


def tune_on_folds(per_query_sweep: pd.DataFrame, measure: str, folds: list) -> pd.DataFrame:
    """Choose the setting on all folds but one, report it on the one left out.

    ``per_query_sweep``: :func:`sweep` with ``per_query=True``. Rows: one per fold (its
    ``setting`` was chosen on the other folds, ``tuned_value`` is its mean there and
    ``reported_value`` its mean on the fold), then ``cross-validated`` (the held-out values
    of every query pooled: an honest estimate) and ``in-sample`` (the best setting on all
    queries, reported on the same queries: optimistic). Ties between settings go to the
    first in grid order.
    """
    frame = per_query_sweep[per_query_sweep["measure"] == measure]
    if frame.empty:
        raise MetricsError(f"the sweep has no measure {measure!r}",
                           fix=f"use one of {', '.join(map(str, per_query_sweep['measure'].unique()))}")
    settings = list(dict.fromkeys(frame["setting"]))
    wide = frame.pivot_table(index="qid", columns="setting", values="value", aggfunc="first")[settings]
    wide.index = wide.index.astype(str)
    rows, held_out = [], []
    for i, fold in enumerate(folds):
        in_fold = wide.index.isin([str(q) for q in fold])
        tuning, report = wide[~in_fold], wide[in_fold]
        best = _best(tuning)
        held_out.append(report[best])
        rows.append({"fold": str(i + 1), "setting": best, "tuned_on": len(tuning),
                     "tuned_value": float(tuning[best].mean()), "reported_on": len(report),
                     "reported_value": float(report[best].mean())})
    pooled = pd.concat(held_out)
    rows.append({"fold": "cross-validated", "setting": ", ".join(str(r["setting"]) for r in rows),
                 "tuned_on": np.nan, "tuned_value": np.nan, "reported_on": len(pooled),
                 "reported_value": float(pooled.mean())})
    best = _best(wide)
    rows.append({"fold": "in-sample", "setting": best, "tuned_on": len(wide), "tuned_value": float(wide[best].mean()),
                 "reported_on": len(wide), "reported_value": float(wide[best].mean())})
    out = pd.DataFrame(rows)
    out["measure"] = measure
    return out


def _best(wide: pd.DataFrame) -> str:
    """The column with the highest mean (the first of equal means)."""
    mean = wide.mean(axis=0).to_numpy(dtype=float)
    return str(wide.columns[int(np.argmax(mean))])
