"""Cached computations and display tables of the Measure behaviour page.

Every cache is keyed on the sidebar ``Selection`` (content digests, :data:`ndcg_lab.ui.state.HASH_FUNCS`)
and plain parameters; the statistics live in :mod:`metrics.stats.behaviour`. Per-query values
come from the app's cached evaluation (:func:`ndcg_lab.ui.state.evaluate`), so the page evaluates each
run once whatever it shows.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import pyarrow.compute as pc
import streamlit as st

import metrics
from metrics.report.figures import behaviour as figs
from metrics.stats import behaviour as B
from metrics.stats import paired_matrix
from metrics.stats.behaviour.uncertainty import KINDS
from ndcg_lab.ui import compare as cmp
from ndcg_lab.ui import state
from ndcg_lab.ui.text import md

SEED = 0
RESAMPLES = 1000
KEEP_LEVELS = (10, 20, 30, 50, 70, 100)
POOL_DEPTHS = (1, 3, 5, 10, 20, 50)
DRAWS = 10
TAU_RESAMPLES = 1000


def default_measures(gain: str) -> list[str]:
    """nDCG@10 (with the sidebar's gain), AP, RR, R@100 and P@10."""
    return [metrics.with_gain(m, gain) for m in B.DEFAULT_MEASURES]


def reduction_measures(gain: str) -> list[str]:
    """nDCG@10 with unjudged = 0 and condensed (judged only), both with the sidebar's gain; Bpref; infAP."""
    return [metrics.with_gain("nDCG@10", gain), metrics.with_gain("nDCG(judged_only=True)@10", gain), "Bpref",
            "infAP"]


def measure_picker(container, offered: list[str], default: list[str], key: str) -> list[str]:
    """A "Measures" multiselect in ``container`` (any name can be typed): the canonical measure
    strings picked, each name that does not parse shown as an error."""
    picked = container.multiselect("Measures", offered, default=default, accept_new_options=True, key=key)
    measures, errors = cmp.canonical_measures(picked)
    for message in errors:
        st.error(md(message))
    return measures


def frame(sel: state.Selection, measures) -> pd.DataFrame:
    """The tidy frame of the selected systems (the app's cached evaluation)."""
    return state.evaluate(sel, list(measures))


@st.cache_data(show_spinner="Comparing measures…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def agreement(sel: state.Selection, measures: tuple[str, ...]) -> dict:
    """:func:`metrics.stats.behaviour.measure_agreement` of the selected systems."""
    return B.measure_agreement(frame(sel, measures), list(measures))


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def query_scatter(sel: state.Selection, a: str, b: str, colors: tuple[tuple[str, str], ...]) -> go.Figure:
    """The per-query scatter of measures ``a`` and ``b`` (:func:`metrics.report.figures.behaviour.query_scatter`),
    cached: a point per system and query, thousands of them, that plotly checks one by one as it
    builds the figure on every run of the page."""
    return figs.query_scatter(frame(sel, (a, b)), a, b, colors=dict(colors))


def matrix_table(matrix: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """A tau matrix as text cells with a fixed number of digits (what the page's table shows)."""
    return matrix.map(lambda v: f"{v:.{digits}f}")


@st.cache_data(show_spinner="Per-query agreement…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def per_query(sel: state.Selection, a: str, b: str) -> pd.DataFrame:
    return B.per_query_agreement(frame(sel, (a, b)), a, b)


@st.cache_data(show_spinner="Bootstrapping the topics…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def tau_intervals(sel: state.Selection, a: str, b: str, resamples: int, seed: int) -> list[dict]:
    """:func:`metrics.stats.behaviour.tau_intervals` (τ-b, then τ_AP) between the system orders under
    measures ``a`` and ``b`` over the selected systems (topics x systems matrices aligned by qid)."""
    names = sel.system_names
    data = frame(sel, (a, b))
    first = paired_matrix(data, a, names)
    second = paired_matrix(data, b, names).reindex(first.index).fillna(0.0)
    return B.tau_intervals(first.to_numpy(), second.to_numpy(), ("tau", "tau_ap"), resamples=resamples, seed=seed)


def interval_text(result: dict) -> str:
    """``τ-b = 0.733, 95% interval [0.467, 1.000] over 50 topics (1,000 resamples, seed 0)``, with the
    draws that had no τ when there were some."""
    name = KINDS[result["kind"]]
    undefined = (f"; {result['undefined']:,} draws tied every system and have no τ" if result["undefined"] else "")
    return (f"{name} = {result['value']:.3f}, {int(result['level'] * 100)}% interval [{result['low']:.3f}, "
            f"{result['high']:.3f}] over {result['topics']} topics ({result['resamples']:,} resamples of the topics, "
            f"seed {result['seed']}{undefined}); over {result['systems']} systems it can take "
            + (f"{result['values']:,} values." if result["values"] else "many values."))


@st.cache_data(show_spinner="Resampling…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def pair_asl(sel: state.Selection, measure: str, resamples: int, seed: int) -> pd.DataFrame:
    """:func:`metrics.stats.behaviour.pair_asl` of one measure over the selected systems: the
    resamples, which no level α changes (so a new α recomputes nothing)."""
    names = sel.system_names
    x = paired_matrix(frame(sel, (measure,)), measure, names).to_numpy()
    return B.pair_asl(x, names, resamples=resamples, seed=seed)


def power(sel: state.Selection, measure: str, resamples: int, seed: int, alpha: float) -> dict:
    """What the discriminative-power tab shows of :func:`metrics.stats.behaviour.discriminative_power`:
    ``asl`` (per pair, :func:`pair_asl`) and ``share`` (the pairs significant at ``alpha``), the same
    values; its swap rates and designs are the topic-set-size tab's, computed there."""
    asl = pair_asl(sel, measure, resamples, seed)
    return {"asl": asl, "share": B.share_significant(asl, alpha)}


@st.cache_data(show_spinner="Drawing topic sets…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def topic_set_size(sel: state.Selection, measure: str, trials: int, seed: int, alpha: float, delta: float,
                   target: float, method: str = "disjoint") -> dict:
    """Swap rates by topic-set size (``swaps``, ``swap_summary``; ``method`` as
    :func:`metrics.stats.behaviour.swap_rates`) and the topic-set-size designs (``topics``) of one
    measure over the selected systems, with ``n_topics``."""
    x = paired_matrix(frame(sel, (measure,)), measure, sel.system_names).to_numpy()
    rates = B.swap_rates(x, trials=trials, seed=seed, method=method)
    return {"swaps": rates, "swap_summary": B.swap_summary(rates, delta), "n_topics": x.shape[0],
            "topics": B.topics_needed(x, delta=delta, alpha=alpha, power=target)}


def _runs(sel: state.Selection) -> dict:
    return {name: state.run(sel, name, digest) for name, digest in sel.systems}


def _within(qrels_b, qrels_a) -> bool:
    """Whether ``qrels_b`` judges only queries that ``qrels_a`` judges."""
    return set(pc.unique(qrels_b.table["qid"]).to_pylist()) <= set(pc.unique(qrels_a.table["qid"]).to_pylist())


def _rankings(sel: state.Selection) -> dict:
    """{name: the run's memory-mapped ranking against the collection's qrels}: no parsed run, no sort."""
    return {name: state.ranked(sel, name, digest) for name, digest in sel.systems}


@st.cache_data(show_spinner="Reducing the qrels…", max_entries=32, hash_funcs=state.HASH_FUNCS)
def reduction(sel: state.Selection, measures: tuple[str, ...], kind: str, levels: tuple, seed: int,
              draws: int = DRAWS) -> dict:
    """:func:`metrics.stats.behaviour.reduction_curves` for the selected systems (``kind``: keep or pool),
    a random reduction drawn ``draws`` times."""
    levels = list(levels)
    return B.reduction_curves(state.qrels(sel), _rankings(sel), list(measures), seed=seed, draws=draws,
                              keep=levels if kind == "keep" else None, depths=levels if kind == "pool" else None)


@st.cache_data(show_spinner="Comparing judges…", max_entries=32, hash_funcs=state.HASH_FUNCS)
def judges(sel: state.Selection, measure: str, threshold: int, baseline: str, test: str, seed: int) -> dict:
    """Label agreement of the qrels (A) with the proxy judgments (B) and the system orders under each."""
    qrels_b = state.proxy(sel)
    labels = B.label_agreement(state.qrels(sel), qrels_b, threshold=threshold)
    qrels_a = state.qrels(sel)
    # the rankings (against A) serve B when B judges only A's queries; else the runs, evaluated under each
    runs = _rankings(sel) if _within(qrels_b, qrels_a) else _runs(sel)
    shift = B.system_shift(qrels_a, qrels_b, runs, [measure], baseline=baseline, test=test,
                           seed=seed) if len(sel.systems) >= 2 else None
    return {"labels": labels, "shift": shift}
