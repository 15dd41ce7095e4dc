"""The Fusion page's glue: fuse stored runs, evaluate and compare the fused run, store it with
its recipe, and sweep a parameter. Every cache is keyed on the inputs' content digests and the
fusion parameters, never on widget objects.

The pool and the fused run are keyed on the inputs alone (name and content digest of each, the
parameters), not on the workspace: they are a function of those, so the sessions of a server that
fuse the same runs under the same names share one pool and one fused run, and a session reaches an
entry only with inputs of that content (nothing of another workspace is read through it)."""
from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

import metrics
from metrics import stats
from metrics.analysis import fusion, fusion_kernels, fusion_tuning
from metrics.io.memory import release_memory
from ndcg_lab.ui import state

FOLD_SEED = 0


POOLS_KEPT = 1
"""Pools kept by the server (for every session together): a pool of two 7M-line runs holds about 700 MB
(five arrays of 14M rows and the candidates' docnos), so only the latest is kept; a fused run and its
evaluation are cached apart and do not need it again."""

FUSED_KEPT = 2
"""Fused runs kept by the server: the fused run of two 7M-line runs is a parsed run of about 0.3 GB
(7M candidates' qids, docnos, scores), one per setting of k, method, normalisation and weights; with
16 kept, trying settings one after another could hold 16 x 0.3, about 5 GB (computed, not measured).
Its evaluation is cached apart (:func:`_fused_frame`, a few rows), so going back to an earlier
setting fuses again and evaluates nothing again."""


@st.cache_resource(show_spinner=False, max_entries=POOLS_KEPT, ttl=state.CACHE_TTL)
def _pool(inputs: tuple, depth: int | None, _collection: str, _workspace, _ranked) -> fusion.Pool:
    # On a miss only. A run whose ranking holds every line of it (no query left out for lack of
    # judgments) is read from that ranking, memory-mapped and in canonical order already: neither
    # parsed nor sorted. Otherwise the run is read and ordered here, and not kept: the pool holds
    # what fusion needs of it, and the rest goes back to the system before the page goes on.
    lines = {r.name: r.n_lines for r in _workspace.runs(_collection)}
    rankings = [fusion_kernels.RankedInput(n, d, _ranked(n, d)) for n, d in inputs]
    if all(int(r.ranked.offsets[-1]) == lines.get(r.name) for r in rankings):
        return fusion.prepare(rankings, depth=depth)
    del rankings
    prepared = fusion.prepare([_workspace.load_run(_collection, n, digest=d) for n, d in inputs], depth=depth)
    release_memory()
    return prepared


def pool(sel: state.Selection, inputs: tuple, depth: int | None) -> fusion.Pool:
    """The inputs (``((name, digest), ...)``) prepared for fusion at ``depth`` (cached on the names and
    digests, for every session of the server); their parsed runs are not cached beside it."""
    return _pool(tuple(inputs), depth, sel.collection, state.workspace(), lambda n, d: state.ranked(sel, n, d))


@st.cache_resource(show_spinner=False, max_entries=FUSED_KEPT, ttl=state.CACHE_TTL)
def _fused(inputs: tuple, method: str, k: float, norm: str | None, weights: tuple | None, depth: int | None,
           _prepare) -> fusion.Fused:
    # the pool is asked for on a miss only (``_prepare()``): a cached fused run needs none
    return fusion.fuse(_prepare(), method, k=k, norm=norm, weights=None if weights is None else list(weights))


def fused(sel: state.Selection, inputs: tuple, method: str, *, k: float = 60, norm: str | None = None,
          weights: tuple | None = None, depth: int | None = None) -> fusion.Fused:
    """``Fused(run, recipe)`` of the inputs (cached on their digests and the parameters)."""
    return _fused(tuple(inputs), method, float(k), norm, None if weights is None else tuple(float(w) for w in weights),
                  depth, lambda: pool(sel, inputs, depth))


@st.cache_data(show_spinner=False, max_entries=32)
def _fused_frame(scope: str, collection: str, qrels_digest: str, run_digest: str, measures: tuple,
                 _result: fusion.Fused, _qrels) -> pd.DataFrame:
    return metrics.evaluate(_qrels, {label(_result.recipe): _result.run}, list(measures))


def label(recipe: fusion.Recipe) -> str:
    """The fused run's name on the page and in the workspace: ``rrf(k=60) of a, b``."""
    return recipe.label()


def comparison(sel: state.Selection, inputs: tuple, method: str, measures: list, *, k: float = 60,
               norm: str | None = None, weights: tuple | None = None, depth: int | None = None):
    """``(means, versus)`` for the fused run beside its inputs and the baseline.

    ``means``: the leaderboard rows (fused run first); ``versus``: :func:`metrics.stats.compare`
    of the fused run against the baseline and against the best input (by the first measure's
    mean), with the sidebar's test and correction, one row per (reference, measure).
    """
    result = fused(sel, inputs, method, k=k, norm=norm, weights=weights, depth=depth)
    fused_frame = _fused_frame(sel.scope, sel.collection, sel.qrels_digest, result.run.digest, tuple(measures),
                               result, state.qrels(sel))
    name = fused_frame["system"].iloc[0]
    stored = {r.name: r.digest for r in state.workspace().runs(sel.collection)}
    baseline = [(sel.baseline, stored[sel.baseline])] if sel.baseline in stored else []
    others = list(dict.fromkeys([*inputs, *baseline]))
    frame = pd.concat([fused_frame, state.evaluate(dataclasses.replace(sel, systems=tuple(others)), measures)],
                      ignore_index=True)
    table = metrics.means(frame)
    first = str(metrics.parse_measure(measures[0]))
    input_names = [n for n, _ in inputs]
    best = max(input_names, key=lambda n: (table.loc[n, first], -input_names.index(n)))
    references = {"best input": best}
    if sel.baseline in table.index and sel.baseline != name:
        references = {"baseline": sel.baseline, **references}
    rows = []
    for role, reference in references.items():
        result = stats.compare(frame, reference, [name], measures, test=sel.test, correction=sel.correction,
                               intervals=False)
        result.insert(0, "against", f"{role}: {reference}")
        rows.append(result)
    versus = pd.concat(rows, ignore_index=True)
    order = [name, *[n for n in table.index if n != name]]
    return table.loc[order], versus


def store(sel: state.Selection, result: fusion.Fused) -> metrics.store.RunInfo:
    """Store the fused run in the collection with its recipe (the same content is not stored twice)."""
    run = dataclasses.replace(result.run, name=label(result.recipe))
    return state.workspace().add_run(sel.collection, run, recipe=result.recipe)


@st.cache_data(show_spinner=False, max_entries=16)
def _sweep(scope: str, collection: str, qrels_digest: str, inputs: tuple, method: str, parameter: str,
           grid: tuple, norm: str | None, depth: int | None, measure: str, _prepared: fusion.Pool,
           _qrels) -> pd.DataFrame:
    options = {"k": list(grid)} if parameter == "k" else {"weights": [list(w) for w in grid]}
    return fusion_tuning.sweep(_qrels, _prepared, method_name=method, measures=(measure,), norm=norm,
                               per_query=True, **options)


def sweep(sel: state.Selection, inputs: tuple, method: str, parameter: str, grid, measure: str, *,
          norm: str | None = None, depth: int | None = None):
    """``(curve, folds)``: the mean of ``measure`` at every setting of the grid (columns ``setting``,
    ``value``, and ``k`` or ``w:<run>``), and :func:`tune_on_folds` on the seeded 2-fold split."""
    grid = tuple(float(x) for x in grid) if parameter == "k" else tuple(tuple(float(w) for w in g) for g in grid)
    inputs = tuple(inputs)
    per_query = _sweep(sel.scope, sel.collection, sel.qrels_digest, inputs, method, parameter, grid,
                       norm, depth, str(metrics.parse_measure(measure)), pool(sel, inputs, depth), state.qrels(sel))
    keys = [c for c in per_query.columns if c == "k" or c.startswith("w:")]
    curve = (per_query.groupby(["setting", *keys], sort=False, observed=True)["value"].mean().reset_index())
    folds = fusion_tuning.split_queries(per_query["qid"], seed=FOLD_SEED, folds=2)
    return curve, fusion_tuning.tune_on_folds(per_query, str(metrics.parse_measure(measure)), folds)

