"""Cached curves of the Curves page: means over queries with their seeded bootstrap band.

Every cache is keyed on the sidebar ``Selection`` (content digests, ``state.HASH_FUNCS``) and plain
parameters, so toggling log k or the band only redraws what changed.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import metrics
from metrics.measures import iprec_curve
from metrics.report.figures import curves as figures
from ndcg_lab.ui import state

N_BOOT = 1000
SEED = 0
STEPS = {0.1: "11 points (0, 0.1, …, 1)", 0.05: "21 points", 0.02: "51 points", 0.01: "101 points"}


@st.cache_data(show_spinner="Computing the curves…", max_entries=32, hash_funcs=state.HASH_FUNCS)
def mean_curves(sel: state.Selection, measure: str, with_band: bool) -> tuple[pd.DataFrame, int]:
    """(mean curve over k per system, with its bootstrap band when asked, number of queries). Only a
    band, which resamples the queries, reads the per-query curves."""
    if not with_band:
        return state.mean_curves(sel, measure)
    per_query = state.curves(sel, measure)
    mean = figures.mean_curves(per_query, n_boot=N_BOOT, seed=SEED)
    return mean, max((len(c) for c in per_query.values()), default=0)


def recall_levels(step: float) -> tuple[float, ...]:
    """0, step, 2 step, ..., 1 (rounded to 10 decimals, so 0.1 gives trec_eval's eleven levels)."""
    count = int(round(1.0 / step))
    return tuple(round(i / count, 10) for i in range(count + 1))


@st.cache_data(show_spinner="Computing the precision-recall curves…", max_entries=32, hash_funcs=state.HASH_FUNCS)
def precision_recall(sel: state.Selection, levels: tuple[float, ...], with_band: bool) -> tuple[pd.DataFrame, int]:
    """(mean interpolated precision per system at each recall level, with its bootstrap band
    when asked, number of queries): the same values as ``IPrec@x`` in trec_eval 10."""
    per_query = {}
    for name, digest in sel.systems:
        ranked = state.ranked(sel, name, digest)
        per_query[name] = figures.iprec_frame(iprec_curve(ranked, levels), ranked.qids, levels)
    mean = figures.mean_curves(per_query, n_boot=N_BOOT if with_band else None, seed=SEED, x="recall")
    return mean, max((len(c) for c in per_query.values()), default=0)


def iprec_table(sel: state.Selection, recall: float) -> pd.DataFrame:
    """Per system, as text for st.table: IPrec at ``recall`` and 11pt_avg (trec_eval 10's values)."""
    measures = [str(metrics.parse_measure(f"IPrec@{float(recall)!r}")), "11pt_avg"]
    means, _ = state.means(sel, measures)
    return pd.DataFrame({m: [f"{v:.4f}" if np.isfinite(v) else "–" for v in means[m].to_numpy(dtype=float)]
                         for m in measures}, index=pd.Index(means.index.astype(str), name="system"))
