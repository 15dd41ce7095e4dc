"""Raw or standardised scores on the Leaderboard and Compare: the choice, its reference and its frame.

Standardised scores (:func:`metrics.standardise`) put each topic's score as its deviation from the
mean of a reference set of runs, in (sample) standard deviations, so that hard and easy topics weigh
alike. The reference here is every run of the selected collection, named in the page's header and in
its exports. The choice is kept in the session (across pages) and in the address (``?scores=z``).
"""
from __future__ import annotations

import dataclasses

import pandas as pd
import streamlit as st

import metrics
from ndcg_lab.ui import state

PARAM = "scores"
SCORES = {"raw": "raw", "z": "standardised (z-scores)"}
_KEY, _KEPT = "scores_choice", "_scores"


def choice(where=st) -> str:
    """Draw the "Scores: raw | standardised" control and return ``"raw"`` or ``"z"``.

    The widget's own state is dropped on a page that does not draw it, so the choice is also kept
    under a key of its own; an address's ``?scores=z`` sets it on the session's first read."""
    ss = st.session_state
    if _KEPT not in ss:
        ss[_KEPT] = st.query_params.get(PARAM) if st.query_params.get(PARAM) in SCORES else "raw"
    if _KEY not in ss:
        ss[_KEY] = ss[_KEPT]
    picked = where.radio("Scores", list(SCORES), format_func=SCORES.get, horizontal=True, key=_KEY,
                         help="Standardised: each topic's score as its deviation from the mean of the "
                              "collection's runs on that topic, in sample standard deviations (z-scores).")
    ss[_KEPT] = picked
    if picked == "raw":
        st.query_params.pop(PARAM, None)
    elif st.query_params.get(PARAM) != picked:
        st.query_params[PARAM] = picked
    return picked


def reference(sel: state.Selection) -> state.Selection:
    """The selection widened to every run of its collection: the reference of the z-scores."""
    runs = state.workspace().runs(sel.collection)
    return dataclasses.replace(sel, systems=tuple((r.name, r.digest) for r in runs))


def reference_names(sel: state.Selection) -> list[str]:
    return [name for name, _ in reference(sel).systems]


def header(sel: state.Selection) -> str:
    """What a page's header says of standardised scores: the reference runs, counted and named."""
    names = reference_names(sel)
    return f"z-scores against the {len(names)} runs of {sel.collection}: {', '.join(names)}"


def stamp(sel: state.Selection) -> dict:
    """The export stamp entry naming the reference runs of the z-scores."""
    return {"scores": "z-scores per topic against: " + ", ".join(reference_names(sel))
            + " (per topic and measure: (score - mean) / sample standard deviation)"}


@st.cache_data(show_spinner=False, max_entries=64, ttl=state.CACHE_TTL, hash_funcs=state.HASH_FUNCS)
def _standardised(sel: state.Selection, ref: state.Selection, measures: tuple[str, ...]) -> pd.DataFrame:
    frame = state.evaluate(sel, measures)
    if frame.empty:
        return frame
    return metrics.standardise(frame, state.evaluate(ref, measures))


def frame(sel: state.Selection, measures, kind: str = "raw") -> pd.DataFrame:
    """The tidy per-topic frame of ``sel``: raw scores, or z-scores against the collection's runs (``kind="z"``)."""
    if kind != "z":
        return state.evaluate(sel, measures)
    return _standardised(sel, reference(sel), tuple(measures))


def means(sel: state.Selection, measures) -> pd.DataFrame:
    """system x measure means of the z-scores of the selected systems (rows in the selection's order)."""
    table = metrics.means(frame(sel, measures, "z"))
    return table.reindex(index=[n for n in sel.system_names if n in table.index])
