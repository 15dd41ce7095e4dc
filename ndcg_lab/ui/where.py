"""Glue of the page "Where it differs" and of the Query explorer's two-run waterfall.

The pair is picked among the collection's runs; :func:`default_pair` prefers a (first stage,
re-ranked run) pair that :func:`metrics.analysis.headroom.detect_depth` recognises. Every cache
is keyed on the content digests of the qrels and the two runs and on the analysis' parameters,
never on widget objects.
"""
from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future

import streamlit as st
from streamlit.runtime.scriptrunner import add_script_run_ctx, get_script_run_ctx

import metrics
from metrics.analysis import bands as bands_analysis
from metrics.analysis import headroom as headroom_analysis
from metrics.beside import beside
from metrics.report.figures import curves as figures
from metrics.report.figures import explain as fx
from metrics.report.text import format_p
from ndcg_lab.ui import state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.state import CACHE_TTL
from ndcg_lab.ui.text import md

PAIRS_TRIED = 24
"""Ordered pairs :func:`default_pair` tries at most (each a join of two runs, cached), so that a
collection of many large runs opens at once."""


def digests(sel: state.Selection) -> dict[str, str]:
    """{run name: digest} of every run of the collection, in upload order."""
    return {r.name: r.digest for r in state.workspace().runs(sel.collection)}


@st.cache_data(show_spinner=False, max_entries=256, ttl=CACHE_TTL)
def _detected(scope: str, collection: str, qrels_digest: str, first_digest: str, other_digest: str, _first,
              _other) -> int | None:
    return headroom_analysis.detect_depth(_first, _other)


def detected_depth(sel: state.Selection, first: str, other: str) -> int | None:
    """The depth k at which ``other`` re-ranks ``first``'s top k (None when it does not)."""
    known = digests(sel)
    return _detected(sel.scope, sel.collection, sel.qrels_digest, known[first], known[other],
                     state.ranked(sel, first, known[first]), state.ranked(sel, other, known[other]))


def default_pair(sel: state.Selection, names: list[str]) -> tuple[str, str]:
    """The first (first stage, re-ranked run) pair of ``names`` with a detected depth of at least 10,
    the sidebar's baseline first, then in upload order, among the first :data:`PAIRS_TRIED` pairs;
    else the first two runs. (A permutation of a run's top k detects both ways: the baseline says
    which is the first stage.)"""
    known = digests(sel)
    pairs = sorted(itertools.permutations(names, 2), key=lambda pair: pair[0] != sel.baseline)
    for first, other in pairs[:PAIRS_TRIED]:
        if known[first] != known[other] and (detected_depth(sel, first, other) or 0) >= 10:
            return first, other
    return names[0], names[1]


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def _headroom(scope: str, collection: str, qrels_digest: str, first: tuple, other: tuple, depth: int | None,
              measure: str, sweep: tuple | None, test: str, correction: str, _qrels, _first, _other):
    return headroom_analysis.headroom(_qrels, _first, _other, depth=depth, measure=measure,
                                      sweep=None if sweep is None else list(sweep), test=test, correction=correction)


def headroom(sel: state.Selection, first: str, other: str, *, depth: int | None, measure: str,
             sweep=None) -> headroom_analysis.Headroom:
    """:func:`metrics.analysis.headroom.headroom` of the two stored runs' memory-mapped rankings (no
    parsed run), with the sidebar's test and correction (cached on the digests and the parameters)."""
    known = digests(sel)
    return _headroom(sel.scope, sel.collection, sel.qrels_digest, (first, known[first]), (other, known[other]),
                     depth, str(metrics.parse_measure(measure)), None if sweep is None else tuple(sweep), sel.test,
                     sel.correction, state.qrels(sel), state.ranked(sel, first, known[first]),
                     state.ranked(sel, other, known[other]))


@st.cache_data(show_spinner=False, max_entries=32, ttl=CACHE_TTL)
def _bands(scope: str, collection: str, qrels_digest: str, a: tuple, b: tuple, k: int, edges: tuple, gain: str,
           _qrels, _a, _b):
    return bands_analysis.bands(_qrels, _a, _b, k=k, edges=list(edges), gain=gain)


def bands(sel: state.Selection, a: str, b: str, *, k: int, edges) -> bands_analysis.Bands:
    """:func:`metrics.analysis.bands.bands` of the two stored runs' memory-mapped rankings under the
    sidebar's gain (cached)."""
    known = digests(sel)
    return _bands(sel.scope, sel.collection, sel.qrels_digest, (a, known[a]), (b, known[b]), int(k),
                  tuple(int(e) for e in edges), sel.gain, state.qrels(sel), state.ranked(sel, a, known[a]),
                  state.ranked(sel, b, known[b]))


def bands_soon(sel: state.Selection, a: str, b: str, *, k: int, edges) -> Future:
    """:func:`bands` as a future: for two large runs started on a second thread that carries this
    script run's context (its caches are the page's), so that the page computes its headroom
    meanwhile; for small ones computed here at once. ``.result()`` gives the bands or raises their
    error."""
    known = digests(sel)
    rows = int(state.ranked(sel, a, known[a]).offsets[-1]) + int(state.ranked(sel, b, known[b]).offsets[-1])
    ctx = get_script_run_ctx()

    def in_this_run() -> bands_analysis.Bands:
        add_script_run_ctx(threading.current_thread(), ctx)
        return bands(sel, a, b, k=k, edges=edges)

    return beside(rows, in_this_run)


MISSING = "—"
"""What a table cell or sentence shows for a value that does not exist (a rank in a run that never
retrieved the document, a p-value with nothing to test), as on the other pages."""


def p_text(p: float) -> str:
    """A p-value as the tables show it; :data:`MISSING` when there is none."""
    return MISSING if p != p else format_p(p)


def percent(value: float, sign: bool = False) -> str:
    """``value`` as a percentage to one decimal (``12.6%``, with ``sign`` ``+12.6%``); a value that
    rounds to zero reads ``0.0%`` (``+0.0%``), never ``-0.0%``."""
    shown = round(100 * value, 1) + 0.0   # adding +0.0 turns the -0.0 of a tiny negative into 0.0
    return f"{shown:+.1f}%" if sign else f"{shown:.1f}%"


def share_text(value: float) -> str:
    """A share of the headroom as a percentage (``12.6%``); ``n/a`` when undefined."""
    return "n/a" if value != value else percent(value)


def verdict_sentence(result: headroom_analysis.Headroom) -> str:
    """One plain sentence: the relative improvement over the first stage's mean, with its interval (names escaped)."""
    s = result.summary
    relative = s["relative"]
    if relative != relative:
        return f"{md(result.first)} scores 0 on {md(result.measure)}: a relative improvement is undefined."
    interval = f"{percent(s['relative_ci'][0], sign=True)} to {percent(s['relative_ci'][1], sign=True)}"
    return (f"**{md(result.reranked)}** changes {md(result.measure)} by **{percent(relative, sign=True)}** of "
            f"{md(result.first)}'s mean ({int(100 * s['level'])}% interval {interval}): relative to the first "
            "stage, so the same gain reads larger over a weaker first stage.")


def waterfall_pair(frames: dict, colors: dict | None = None) -> None:
    """The Query explorer's two-run view: one query's per-rank contributions of two of the shown runs
    and their difference, from their explain frames (same query, same depth)."""
    names = list(frames)
    if len(names) < 2:
        return
    st.markdown("**Two runs, rank by rank**: their contributions and the difference")
    c1, c2 = st.columns(2)
    shown = ",".join(names)   # a new set of shown runs starts the pickers afresh
    a = c1.selectbox("Run A", names, index=0, key=f"qe_pair_waterfall_a::{shown}")
    b = c2.selectbox("Run B", names, index=1, key=f"qe_pair_waterfall_b::{shown}")
    if a == b:
        st.info("Pick two different runs.")
        return
    plotly_chart(fx.contribution_pair(frames[a], frames[b], (a, b), colors=colors), width="stretch",
                    config=figures.FIGURE_CONFIG, key="qe_pair_waterfall")
