"""Cached computations and table formatting for the Judgments page.

Every cache is keyed on the sidebar ``Selection`` (content digests) and plain
parameters; the computations themselves live in ``metrics.analysis.judgments``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

import metrics
from metrics.analysis import judgments
from metrics.ranking import Ranked
from ndcg_lab.ui import state

POOLED = "All selected systems (pooled)"
RANKS_COLUMN = {"ranks": st.column_config.ListColumn("ranks", help="system@rank, one item per system")}
"""The ranks column of the page's tables: a list, so that no separator can be mistaken for part of a
run's name (a fused run is called ``rrf(k=60) of a, b``)."""
STRATEGY_SHORT = {"zero": "0", "condensed": "condensed", "inferred": "inferred", "Bpref": "Bpref", "infAP": "infAP"}
INCOMPLETE = {"Bpref": "Bpref (unjudged ignored)", "infAP": "infAP (estimated from the judged)"}
"""Measures built for incomplete judgments, shown in a table of their own (they are other measures, not
treatments of the chosen one): Bpref counts only judged non-relevant documents above each relevant one
(Buckley & Voorhees 2004); infAP estimates AP from the judged documents as a random sample of the pool
(Yilmaz & Aslam 2006)."""


def ranked_systems(sel: state.Selection) -> dict[str, Ranked]:
    """{system: Ranked} of the selected systems against the real qrels (proxy labels left out)."""
    return {name: state.ranked(sel, name, digest) for name, digest in sel.systems}


def strategy_labels(sel: state.Selection) -> dict[str, str]:
    labels = {**judgments.STRATEGIES, **INCOMPLETE}
    proxy = state.proxy(sel)
    if proxy is not None:
        labels["inferred"] = f"inferred (proxy: {proxy.source or proxy.name})"
    return labels


def strategy_frames(sel: state.Selection, measure: str) -> dict[str, pd.Series]:
    """{strategy: mean per system} through the app's cached evaluation: ``measure`` under each
    treatment of unjudged documents (unjudged = 0, condensed, and inferred with a proxy), and only
    ``measure``: the treatments are compared on one measure."""
    out = {
        "zero": state.means(sel, [measure])[0][measure],
        "condensed": state.means(sel, [measure], judged_only=True)[0][measure],
    }
    if sel.proxy_digest:
        out["inferred"] = state.means(sel, [measure], inferred=True)[0][measure]
    return out


def incomplete_display(sel: state.Selection, digits: int = 4) -> pd.DataFrame:
    """Bpref and infAP per system, each with its own rank (1 = best): measures of their own, never
    marked against a treatment of another measure."""
    values, _ = state.means(sel, list(INCOMPLETE))
    parts = [strategy_display(judgments.strategy_table({name: values[name]}), INCOMPLETE, digits)
             for name in INCOMPLETE]
    return pd.concat(parts, axis=1)


def all_judged(sel: state.Selection, measure: str) -> int | None:
    """The cutoff k of ``measure`` when every selected system's top k is judged on every query
    (Judged@k = 1 for all), else None: the treatments of unjudged documents then cannot differ."""
    try:
        k = metrics.parse_measure(measure).cutoff
    except metrics.MetricsError:
        return None
    if not k:
        return None
    judged = state.means(sel, [f"Judged@{k}"])[0][f"Judged@{k}"]
    return int(k) if len(judged) and bool((judged >= 1.0 - 1e-12).all()) else None


def strategy_display(table: pd.DataFrame, labels: dict[str, str], digits: int = 4) -> pd.DataFrame:
    """Strings for st.table: a value and a rank column per strategy, best (reference) first.

    Rank cells read "3 ▲1" (up one place against the first strategy) or "4 ▼1".
    """
    strategies = list(dict.fromkeys(table["strategy"]))
    reference = strategies[0]
    ref = table[table["strategy"] == reference].sort_values(["rank", "system"], kind="stable")
    systems = list(ref["system"])
    shown = pd.DataFrame(index=pd.Index(systems, name="system"))
    for strategy in strategies:
        part = table[table["strategy"] == strategy].set_index("system").reindex(systems)
        shown[labels.get(strategy, strategy)] = [f"{v:.{digits}f}" if np.isfinite(v) else "–"
                                                 for v in part["value"].to_numpy(dtype=float)]
        cells = []
        for rank, change in zip(part["rank"], part["change"]):
            if pd.isna(rank):
                cells.append("–")
            elif strategy == reference or change == 0:
                cells.append(f"{int(rank)}")
            else:
                cells.append(f"{int(rank)} {'▲' if change > 0 else '▼'}{abs(int(change))}")
        shown[f"rank ({STRATEGY_SHORT.get(strategy, strategy)})"] = cells
    return shown


def agreement_display(agreement: pd.DataFrame, labels: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({
        "strategies": [f"{labels.get(a, a)} vs {labels.get(b, b)}"
                       for a, b in zip(agreement["strategy_a"], agreement["strategy_b"])],
        "Kendall's τ": [f"{t:.3f}" if np.isfinite(t) else "–" for t in agreement["tau"]],
        "systems that change rank": [f"{c} of {n}" for c, n in zip(agreement["changed"], agreement["systems"])],
    }).set_index("strategies")


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def judged_means(sel: state.Selection, k: int) -> pd.Series:
    return state.means(sel, [f"Judged@{k}"])[0][f"Judged@{k}"]


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def todo(sel: state.Selection, system: str, depth: int) -> pd.DataFrame:
    runs = ranked_systems(sel)
    if system == POOLED:
        return judgments.judging_pool(runs, depth, rank_lists=True)
    frame = judgments.unjudged_top({system: runs[system]}, depth)
    return frame.drop(columns="system")


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def todo_template(sel: state.Selection, system: str, depth: int, note: str) -> str:
    """:func:`metrics.analysis.judgments.qrels_template` of :func:`todo`, cached with it: a file of
    every unjudged pair of thousands of queries, which each run of the page would write again."""
    return judgments.qrels_template(todo(sel, system, depth), note=note)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def hard_negatives(sel: state.Selection, depth: int, min_grade: int, include_unjudged: bool) -> pd.DataFrame:
    return judgments.hard_negatives(ranked_systems(sel), depth, include_unjudged=include_unjudged,
                                    min_grade=min_grade, rank_lists=True)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def recall_failures(sel: state.Selection, depth: int, min_grade: int) -> pd.DataFrame:
    return judgments.recall_failures(state.qrels(sel), ranked_systems(sel), depth, min_grade=min_grade)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def training(sel: state.Selection, depth: int, per_query: int, min_grade: int, include_unjudged: bool) -> dict:
    data = judgments.training_set(state.qrels(sel), ranked_systems(sel), depth=depth, per_query=per_query,
                                  min_grade=min_grade, include_unjudged=include_unjudged)
    tsv = data.to_tsv()
    return {"tsv": tsv, "jsonl": data.to_jsonl(), "queries": len(data.queries),
            "positives": data.positives.num_rows, "negatives": data.negatives.num_rows,
            "triples": tsv.count("\n") - 1}


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def pool(sel: state.Selection, k: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    runs = ranked_systems(sel)
    first = judgments.first_unjudged(runs)
    matrix, _ = judgments.topk_jaccard(runs, k)
    return first, matrix, judgments.pool_depth(runs, k)


def pool_summary(first: pd.DataFrame, matrix: pd.DataFrame, k: int) -> pd.DataFrame:
    """Per system: queries with an unjudged document in the top k, median first unjudged rank, mean overlap."""
    rows = []
    for system, part in first.groupby("system", sort=False, observed=True):
        ranks = part["first_unjudged"].astype("Float64").to_numpy(dtype=float, na_value=np.nan)
        shallow = int(np.sum(ranks <= k))
        others = matrix.loc[system].drop(system) if system in matrix.index and len(matrix) > 1 else pd.Series()
        rows.append({
            "system": system,
            f"queries with an unjudged doc in the top {k}": f"{shallow} of {len(part)}",
            "median first unjudged rank": (f"{np.nanmedian(ranks):g}" if np.isfinite(ranks).any()
                                           else "judged throughout"),
            f"mean Jaccard@{k} with the others": f"{others.mean():.3f}" if len(others) else "–",
        })
    return pd.DataFrame(rows).set_index("system")


def with_titles(frame: pd.DataFrame, docs: pd.DataFrame, topics: pd.DataFrame | None = None) -> pd.DataFrame:
    """``frame`` with a ``title`` column after ``docno`` (and ``query`` after ``qid``) when known."""
    out = frame.copy()
    if docs is not None and len(docs) and "docno" in out.columns:
        titles = pd.Series(docs["title"].astype(str).to_numpy(), index=docs["docno"].astype(str).to_numpy())
        titles = titles[~titles.index.duplicated()]
        out.insert(out.columns.get_loc("docno") + 1, "title",
                   titles.reindex(out["docno"].astype(str).to_numpy()).fillna("").to_numpy())
    if topics is not None and len(topics) and "qid" in out.columns:
        text = pd.Series(topics["text"].astype(str).to_numpy(), index=topics["qid"].astype(str).to_numpy())
        text = text[~text.index.duplicated()]
        out.insert(out.columns.get_loc("qid") + 1, "query",
                   text.reindex(out["qid"].astype(str).to_numpy()).fillna("").to_numpy())
    return out
