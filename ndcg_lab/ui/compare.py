"""Helpers of the Compare page: cached comparisons, display tables, and opening a query."""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import metrics
from metrics import stats
from metrics.measures import REGISTRY, TREC_MEASURES, Family, expand
from metrics.report.figures import compare as figs
from metrics.report.text import TOPIC_LIMIT, format_p, percent, shorten
from ndcg_lab.ui import scores, state
from ndcg_lab.ui.paths import view
from ndcg_lab.ui.text import md

QUERY_PAGE = view("query")
# Measures offered in the picker (any other ir_measures string can be typed in).
COMMON_MEASURES = ("nDCG@10", "nDCG@5", "nDCG@20", "nDCG@100", "nDCG", "AP", "RR", "P@10", "R@100", "Rprec")
STABILITY_CUTOFFS = (1, 3, 5, 10, 20, 50, 100, 1000)


def with_systems(sel: state.Selection, names) -> state.Selection:
    """The sidebar selection narrowed (or widened) to ``names``, any run of the collection."""
    digests = {r.name: r.digest for r in state.workspace().runs(sel.collection)}
    return dataclasses.replace(sel, systems=tuple((n, digests[n]) for n in dict.fromkeys(names) if n in digests))


def run_names(sel: state.Selection) -> list[str]:
    return [r.name for r in state.workspace().runs(sel.collection)]


def canonical_measures(texts) -> tuple[list[str], list[str]]:
    """(canonical measure strings, error messages) of what the user picked or typed: any
    ir_measures-style name or trec_eval spelling, one that stands for several expanded
    (``P.5,10`` gives P@5 and P@10, ``iprec_at_recall`` the eleven IPrec levels)."""
    good, errors = [], []
    for text in texts:
        try:
            good.extend(str(m) for m in expand(str(text).strip()))
        except metrics.MetricsError as exc:
            errors.append(f"{text}: {exc}")
    return list(dict.fromkeys(good)), errors


@lru_cache(maxsize=1)
def _registry_names() -> tuple[str, ...]:
    """Every family of the registry in ir_measures syntax (at a cutoff of 10, or a recall level of
    0.5, where one is required), then trec_eval's own measure names and a few of its spellings."""
    ours = []
    for name, family in REGISTRY.items():
        if not isinstance(family, Family):
            ours.append(name)
        elif family.cutoff == "required":
            ours.append(f"{name}@{0.5 if family.cutoff_type is float else 10}")
        else:
            ours += [name, f"{name}@10"] if family.cutoff == "optional" else [name]
    trec = [name for name in TREC_MEASURES if _from_qrels(name)]
    return tuple(dict.fromkeys([*ours, *trec, "ndcg_cut.10", "P.5,10", "iprec_at_recall.0.3", "map_cut.100",
                                "recall.100", "set_F.1", "rbp.p=0.95"]))


def _from_qrels(name: str) -> bool:
    """Whether a trec_eval name is a number computed from qrels (prefs and judgment-group measures
    need judgment files of another format, and say so when expanded)."""
    try:
        return bool(expand(name))
    except metrics.MetricsError:
        return False


def suggested_measures(gain: str) -> list[str]:
    """Names offered in the measure pickers: the common ones (nDCG with the sidebar's gain) first,
    then every family of the registry and trec_eval's names; any other name can be typed."""
    common = [metrics.with_gain(m, gain) for m in COMMON_MEASURES]
    return list(dict.fromkeys([*common, "Bpref", "infAP", "IPrec@0.3", "11pt_avg", *_registry_names()]))


def measure_picker(where, gain: str, default: str) -> list[str]:
    """The Compare page's measures, as picked or typed (canonical names come from :func:`canonical_measures`).

    A multiselect of suggestions whose Enter takes the highlighted suggestion (no "Select all
    matches" entry, so ``AP`` + Enter adds AP, not the 14 names that contain A and P), and beside it
    a text box whose Enter adds exactly the measure typed: ``P@1`` is P@1, where the multiselect
    would highlight its suggestion P@10. A name that stands for several (``P.5,10``) adds them all.
    """
    ss = st.session_state
    key, typed, extra = f"cmp_measures::{gain}", f"cmp_typed::{gain}", f"cmp_typed_options::{gain}"
    ss.setdefault(key, [default])

    def add() -> None:
        text = (ss.get(typed) or "").strip()
        ss[typed] = ""
        if not text:
            return
        names, errors = canonical_measures([text])
        ss["_cmp_typed_errors"] = errors
        ss[extra] = list(dict.fromkeys([*ss.get(extra, []), *names]))
        ss[key] = list(dict.fromkeys([*ss.get(key, []), *names]))

    offered = list(dict.fromkeys([default, *suggested_measures(gain), *ss.get(extra, [])]))
    picked = where.multiselect("Measures", offered, accept_new_options=True, select_all=False, key=key,
                               help="Pick from the suggestions (Enter takes the highlighted one), or type any "
                                    "measure in the box below.")
    where.text_input("Add a measure by name", key=typed, on_change=add,
                     placeholder="type a name and press Enter: P@1, nDCG(dcg='exp-log2')@15, NumRet(rel=1), bpref",
                     help="Enter adds exactly the measure typed, in ir_measures syntax (P(rel=2)@5, "
                          "nDCG(dcg='exp-log2')@20, Bpref, IPrec@0.3) or as trec_eval spells it (bpref, "
                          "ndcg_cut.10, P.5,10: several measures at once).")
    for message in ss.pop("_cmp_typed_errors", []):
        where.error(md(message))
    return picked


@st.cache_data(show_spinner="Testing…", max_entries=64, hash_funcs=state.HASH_FUNCS)
def comparison(sel: state.Selection, measures: tuple[str, ...], baseline: str, systems: tuple[str, ...],
               test: str, correction: str, seed: int, permutations: int, resamples: int, tolerance: float,
               alpha: float, family: str = "all", kind: str = "raw") -> pd.DataFrame:
    """metrics.stats.compare over the evaluated frame of ``sel``, raw or standardised (``kind``,
    :func:`ndcg_lab.ui.scores.frame`), cached on digests and settings."""
    frame = scores.frame(sel, measures, kind)
    return stats.compare(frame, baseline, list(systems), list(measures), test=test, correction=correction,
                         alpha=alpha, seed=seed, permutations=permutations, resamples=resamples,
                         tolerance=tolerance, family=family)


@st.cache_data(show_spinner="Bootstrapping every cutoff…", max_entries=32, hash_funcs=state.HASH_FUNCS)
def profile(sel: state.Selection, family: str, baseline: str, system: str, max_k: int, seed: int,
            resamples: int) -> pd.DataFrame:
    curves = state.curves(with_systems(sel, [baseline, system]), family, max_k=max_k)
    return stats.difference_profile(curves[baseline], curves[system], resamples=resamples, seed=seed)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def cutoff_means(sel: state.Selection, family: str, max_k: int) -> pd.DataFrame:
    """system x k table of mean values at the stability cutoffs up to ``max_k``."""
    curves = state.curves(sel, family, max_k=max_k)
    ks = [k for k in STABILITY_CUTOFFS if k <= max_k]
    table = pd.DataFrame({name: curve.reindex(columns=ks).ffill(axis=1).mean(axis=0)
                          for name, curve in curves.items()}).T
    table.columns = pd.Index([f"@{k}" for k in ks], name="cutoff")
    return table


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs=state.HASH_FUNCS)
def tukey(sel: state.Selection, measure: str, systems: tuple[str, ...], kind: str = "raw") -> pd.DataFrame:
    frame = scores.frame(sel, [measure], kind)
    return stats.tukey_hsd(stats.paired_matrix(frame, measure, list(systems)).to_numpy(), list(systems))


def display_table(rows: pd.DataFrame, level: float = stats.DEFAULT_LEVEL) -> pd.DataFrame:
    """One measure's comparison rows as text cells for st.table (index = system)."""
    ci = f"{int(round(level * 100))}% CI of Δ"
    shown = pd.DataFrame({
        "Mean": rows["mean"].map("{:.4f}".format).to_numpy(),
        "Baseline mean": rows["baseline_mean"].map("{:.4f}".format).to_numpy(),
        "Δ": rows["diff"].map("{:+.4f}".format).to_numpy(),
        "Δ %": rows["rel_diff"].map(percent).to_numpy(),
        ci: [f"[{lo:+.4f}, {hi:+.4f}]" for lo, hi in zip(rows["diff_ci_low"], rows["diff_ci_high"])],
        "p": rows["p_value"].map(_p_cell).to_numpy(),
        "p (corrected)": rows["p_adjusted"].map(_p_cell).to_numpy(),
        "Effect size d": rows["effect_size"].map("{:+.3f}".format).to_numpy(),
        "Wins / ties / losses": [f"{w} / {t} / {lost}"
                                 for w, t, lost in zip(rows["wins"], rows["ties"], rows["losses"])],
        "Sig.": rows["marker"].to_numpy(),
    }, index=pd.Index(rows["system"].astype(str).to_numpy(), name="System"))
    return shown


NOT_TESTED = "not tested"
"""The p cells of a descriptive measure (Judged@k, NumRet, ...): shown, never tested."""


def _p_cell(p: float) -> str:
    return NOT_TESTED if p != p else format_p(p)


NUMBER_WIDTH = 72
TOPIC_WIDTH = 160
"""Pixel widths of the Helped/Hurt most tables: four numbers and the query id in 75 + 3 x 72 px and the
topic in 160, 451 px in all: a half of the page at 1400 px holds them without a horizontal scroll."""


def extremes_config(baseline: str, system: str) -> dict:
    """Column widths of the "Helped most"/"Hurt most" tables: the numbers narrow and whole (Δ and the
    query pinned, so they stay in sight on a narrow screen), the topic on one line in what is left
    (cut at TOPIC_LIMIT characters; the full text is in the expander below the table)."""
    return {"_index": st.column_config.TextColumn("Query", width="small", pinned=True),
            "Topic": st.column_config.TextColumn("Topic", width=TOPIC_WIDTH,
                                                 help="Cut to one line; the full text is below the table."),
            baseline: st.column_config.TextColumn(baseline, width=NUMBER_WIDTH),
            system: st.column_config.TextColumn(system, width=NUMBER_WIDTH),
            "Δ": st.column_config.TextColumn("Δ", width=NUMBER_WIDTH, pinned=True)}


def per_query(frame: pd.DataFrame, measure: str, baseline: str, system: str, topics: pd.DataFrame) -> pd.DataFrame:
    """metrics.stats.per_query plus the topic text (column ``text``, empty when unknown)."""
    rows = stats.per_query(frame, measure, baseline, system)
    if topics is not None and len(topics) and {"qid", "text"} <= set(topics.columns):
        text = topics.assign(qid=topics["qid"].astype(str)).drop_duplicates("qid").set_index("qid")["text"]
        rows["text"] = rows["qid"].map(text).fillna("").astype(str)
    else:
        rows["text"] = ""
    return rows


@st.cache_data(show_spinner=False, max_entries=16)
def query_figures(rows: pd.DataFrame, measure: str, baseline: str, system: str,
                  tolerance: float) -> dict[str, go.Figure]:
    """The query-by-query charts of :func:`per_query`'s rows, by their titles on the page, cached on
    the rows' content: a figure of thousands of bars and points is checked value by value by plotly
    as it is built, a second or more on every run of the page."""
    return {"Per-query difference": figs.delta_bars(rows, measure=measure, baseline=baseline, system=system,
                                                    tolerance=tolerance),
            "Paired scatter": figs.paired_scatter(rows, measure=measure, baseline=baseline, system=system,
                                                  tolerance=tolerance),
            "Distribution of differences": figs.delta_histogram(rows, measure=measure, baseline=baseline,
                                                                system=system)}


def extremes(rows: pd.DataFrame, *, helped: bool, count: int, baseline: str, system: str,
             tolerance: float) -> pd.DataFrame:
    """The ``count`` queries the system helped (or hurt) most, as text cells for st.table."""
    picked = rows[rows["delta"] > tolerance] if helped else rows[rows["delta"] < -tolerance]
    picked = picked.sort_values(["delta", "qid"], ascending=[not helped, True], kind="stable").head(count)
    return pd.DataFrame({
        "Query": picked["qid"].astype(str).to_numpy(),
        "Topic": picked["text"].map(shorten).to_numpy(),
        baseline: picked["baseline"].map("{:.4f}".format).to_numpy(),
        system: picked["system"].map("{:.4f}".format).to_numpy(),
        "Δ": picked["delta"].map("{:+.4f}".format).to_numpy(),
    }).set_index("Query")


TOPIC_CHARS = 24
"""About the characters a topic cell of TOPIC_WIDTH pixels shows before the grid cuts it."""


def full_topics(rows: pd.DataFrame, qids, limit: int = TOPIC_LIMIT) -> None:
    """Under a table whose topics were cut (:func:`metrics.report.text.shorten`, or the cell's width
    at about ``limit`` characters): their full text in an expander, as plain text, one query a line."""
    text = rows.drop_duplicates("qid").set_index("qid")["text"].astype(str)
    long = [(q, text[q]) for q in qids if q in text.index and len(text[q]) > limit]
    if long:
        with st.expander(f"Full topic text ({len(long)} cut above)"):
            for qid, topic in long:
                st.markdown(f"**{md(qid)}**: {md(topic)}")


def clicked_qid(event) -> str | None:
    """The qid of the first clicked bar or point of a plotly selection event (customdata[0], else x)."""
    try:
        points = event.selection.points
    except AttributeError:
        try:
            points = event["selection"]["points"]
        except (KeyError, TypeError):
            return None
    for point in points or []:
        data = point.get("customdata")
        if isinstance(data, (list, tuple)) and data:
            return str(data[0])
        if point.get("x") is not None and point.get("curve_number", 0) == 0 and isinstance(point.get("x"), str):
            return str(point["x"])
    return None


def open_query(chart_key: str, qid: str | None, systems: list[str]) -> None:
    """Open ``qid`` in the query explorer when a chart click is new.

    A chart keeps its selection across reruns, so a click is acted on once: the
    last handled (chart, qid) is remembered until the selection is cleared.
    """
    ss = st.session_state
    handled = f"_cmp_clicked::{chart_key}"
    if qid is None:
        ss.pop(handled, None)
        return
    if ss.get(handled) == qid:
        return
    ss[handled] = qid
    ss["query_qid"] = qid
    ss["query_systems"] = list(systems)
    st.switch_page(QUERY_PAGE)


def profile_family(measure: str, gain: str) -> str:
    """The curve family of ``measure`` (its string without the cutoff) when it has a curve, else nDCG with ``gain``."""
    try:
        parsed = metrics.parse_measure(measure)
        if parsed.family.curve is not None:
            return str(parsed.at(None))
    except metrics.MetricsError:
        pass
    return metrics.with_gain("nDCG", gain)


def means_table(table: pd.DataFrame, baseline: str) -> pd.DataFrame:
    """system x measure means (baseline first) from the comparison rows."""
    measures = list(dict.fromkeys(table["measure"]))
    base = table.drop_duplicates("measure").set_index("measure")["baseline_mean"]
    wide = table.pivot(index="system", columns="measure", values="mean")
    systems = list(dict.fromkeys(table["system"]))
    out = pd.concat([pd.DataFrame([base.reindex(measures).to_numpy()], index=[baseline], columns=measures),
                     wide.reindex(index=systems, columns=measures)])
    out.index.name = "system"
    out.columns.name = None
    return out.astype(np.float64)


@st.cache_data(show_spinner=False, max_entries=64, hash_funcs=state.HASH_FUNCS)
def significance(sel: state.Selection, measures: tuple[str, ...], baseline: str, test: str,
                 correction: str, family: str = "all", kind: str = "raw") -> pd.DataFrame:
    """The leaderboard's markers: metrics.stats.versus_baseline over the selection's raw or
    standardised scores (``kind``), seed 0, cached."""
    return stats.versus_baseline(scores.frame(sel, measures, kind), baseline, test=test, correction=correction,
                                 family=family)
