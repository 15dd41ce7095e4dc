"""Content-keyed caches around ``metrics``: parsed runs and judgments, ranked runs, evaluations,
curves, lint findings, topics and titles.

Results are cached on content digests (never on ``UploadedFile`` objects), and evicted by count and
age. Ranked runs, evaluations and curves are keyed on what their values are made of: the digests,
and the run's name where it is in the result. The workspace and the
collection (``_scope``, ``_collection``: not hashed) only say where a miss reads the content, so the
sessions of a server that hold the same runs and qrels (four visitors who each store MS MARCO dev
and the same run) share one entry, whatever workspace they are in; a session reaches an entry only
with digests its own workspace lists. Parsed runs and judgments (they carry the name of the file
each workspace's visitor uploaded, which lint findings show), topics and titles stay keyed on the
workspace (``scope``, :func:`ndcg_lab.ui.session.scope_of`). Every loader reads through the
session's workspace (:func:`ndcg_lab.ui.session.workspace`); the public functions take the sidebar's
:class:`ndcg_lab.ui.selection.Selection`.
"""
from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import streamlit as st

import metrics
from metrics.evaluation import evaluate_ranked, tidy
from metrics.ranking import Ranked
from metrics.report.figures.curves import mean_curves as mean_curve_frames
from metrics.store.records import judgments_changed
from ndcg_lab.ui import session
from ndcg_lab.ui.selection import Selection

CACHE_TTL = 3600  # seconds an unused cache entry is kept


@st.cache_resource(show_spinner=False, max_entries=16, ttl=CACHE_TTL)  # a 7M-line run holds ~320 MB
def _cached_run(scope: str, collection: str, name: str, digest: str) -> metrics.Run:
    return session.workspace().load_run(collection, name, digest=digest)

@st.cache_resource(show_spinner=False, max_entries=8, ttl=CACHE_TTL)
def _cached_qrels(scope: str, collection: str, digest: str, proxy: bool) -> metrics.Qrels | None:
    ws = session.workspace()
    qrels = ws.load_proxy(collection) if proxy else ws.load_qrels(collection)
    if qrels is not None and qrels.digest != digest:
        raise judgments_changed(collection)
    return qrels

@st.cache_resource(show_spinner=False, max_entries=16, ttl=CACHE_TTL)
def cached_ranked(_scope: str, _collection: str, qrels_digest: str, run_name: str, run_digest: str,
                   proxy_digest: str | None, judged_only: bool) -> Ranked:
    """The run ordered and joined with the judgments, from the workspace's ranked cache (memory-mapped;
    built on the first call in any process): no parse, no sort, no parsed run held in memory.

    A first call parses and sorts the run; its scratch is collected here, on this cache miss, since
    the server runs no full collection after every script run (.streamlit/config.toml)."""
    ranked = session.workspace().load_ranked(_collection, run_name, digest=run_digest, qrels_digest=qrels_digest,
                                     inferred=proxy_digest is not None, proxy_digest=proxy_digest,
                                     judged_only=judged_only)
    gc.collect()
    return ranked

def ranked(sel: Selection, name: str, digest: str, *, inferred: bool = False, judged_only: bool = False) -> Ranked:
    """One selected run ordered and joined with the selection's judgments (the proxy's with
    ``inferred``): :func:`cached_ranked` under the selection's key."""
    proxy = sel.proxy_digest if inferred else None
    return cached_ranked(sel.scope, sel.collection, sel.qrels_digest, name, digest, proxy, judged_only)


@st.cache_data(show_spinner=False, max_entries=1024, ttl=CACHE_TTL)
def _evaluate_run(_scope: str, _collection: str, qrels_digest: str, proxy_digest: str | None, name: str,
                  digest: str, measures: tuple[str, ...], judged_only: bool) -> pd.DataFrame:
    """One run's tidy frame. The key is what the values depend on: the run's and the qrels' content
    digests (and the proxy's), the canonical measure strings (gain included), judged_only and the
    name (the frame's ``system``); the workspace and collection only say where the content is. Test,
    correction and baseline are not in it: changing them re-evaluates nothing."""
    ranked = cached_ranked(_scope, _collection, qrels_digest, name, digest, proxy_digest, judged_only)
    values = evaluate_ranked(ranked, measures)
    return tidy(name, ranked.qids, values, list(values))

def _canonical(measures) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(metrics.parse_measure(m)) for m in measures))

def evaluate(sel: Selection, measures, *, inferred: bool = False, judged_only: bool = False) -> pd.DataFrame:
    """Tidy per-query frame for the selected systems, cached per run on content digests."""
    canonical = _canonical(measures)
    proxy = sel.proxy_digest if inferred else None
    frames = [_evaluate_run(sel.scope, sel.collection, sel.qrels_digest, proxy, name, digest, canonical, judged_only)
              for name, digest in sel.systems]
    if not frames:
        return pd.DataFrame({"system": [], "qid": [], "measure": [], "value": []})
    return pd.concat(frames, ignore_index=True)

@st.cache_data(show_spinner=False, max_entries=1024, ttl=CACHE_TTL)
def _run_means(_scope: str, _collection: str, qrels_digest: str, proxy_digest: str | None, name: str, digest: str,
               measures: tuple[str, ...], judged_only: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """One run's row of means (``metrics.means`` of its tidy frame) and its distinct qids, under the
    key of :func:`_evaluate_run`: a rerun with nothing changed reads a one-row frame, never the
    run's per-query frame (7M lines: 6,980 queries x the measures)."""
    frame = _evaluate_run(_scope, _collection, qrels_digest, proxy_digest, name, digest, measures, judged_only)
    return metrics.means(frame), pd.unique(frame["qid"].to_numpy(dtype=object))

def means(sel: Selection, measures, *, inferred: bool = False, judged_only: bool = False) -> tuple[pd.DataFrame, int]:
    """(system x measure means of the selected systems, the number of distinct queries), equal to
    ``metrics.means(evaluate(sel, measures))`` and the frame's distinct qids (the means of one
    system depend on its rows only), cached per run on content digests."""
    canonical = _canonical(measures)
    proxy = sel.proxy_digest if inferred else None
    rows = [_run_means(sel.scope, sel.collection, sel.qrels_digest, proxy, name, digest, canonical, judged_only)
            for name, digest in sel.systems]
    if not rows:
        return metrics.means(evaluate(sel, canonical)), 0
    qids = rows[0][1] if len(rows) == 1 else pd.unique(np.concatenate([q for _, q in rows]))
    return pd.concat([table for table, _ in rows]), len(qids)

@st.cache_data(show_spinner=False, max_entries=64, ttl=CACHE_TTL)
def _curve(_scope: str, _collection: str, qrels_digest: str, name: str, digest: str, family: str,
           max_k: int | None) -> pd.DataFrame:
    ranked = cached_ranked(_scope, _collection, qrels_digest, name, digest, None, False)
    return metrics.curve_ranked(ranked, family, max_k=max_k)

def curves(sel: Selection, family: str, max_k: int | None = None) -> dict[str, pd.DataFrame]:
    """{system: per-query curve (index qid, columns k)} for the selected systems."""
    return {name: _curve(sel.scope, sel.collection, sel.qrels_digest, name, digest, family, max_k)
            for name, digest in sel.systems}

@st.cache_data(show_spinner=False, max_entries=256, ttl=CACHE_TTL)
def _mean_curve(_scope: str, _collection: str, qrels_digest: str, name: str, digest: str,
                family: str) -> tuple[pd.DataFrame, int]:
    """One run's mean curve (``figures.mean_curves`` of its per-query curve) and its number of
    queries. The per-query curve is dropped once averaged: for a 7M-line run it is 6,980 queries x
    1,000 cutoffs of float64, 56 MB, which :func:`_curve` keeps pickled for the pages that need the
    queries (a band, a difference profile)."""
    ranked = cached_ranked(_scope, _collection, qrels_digest, name, digest, None, False)
    per_query = metrics.curve_ranked(ranked, family)
    return mean_curve_frames({name: per_query}), len(per_query)

def mean_curves(sel: Selection, family: str) -> tuple[pd.DataFrame, int]:
    """(tidy ``system, k, value`` mean over queries per selected system, the largest number of
    queries): ``figures.mean_curves(curves(sel, family))`` and its query count, without holding any
    per-query curve."""
    parts = [_mean_curve(sel.scope, sel.collection, sel.qrels_digest, name, digest, family)
             for name, digest in sel.systems]
    if not parts:
        return mean_curve_frames({}), 0
    return (pd.concat([frame for frame, _ in parts], ignore_index=True).astype({"system": "string", "k": "int64"}),
            max(n for _, n in parts))

@st.cache_data(show_spinner=False, max_entries=256, ttl=CACHE_TTL)
def _lint(scope: str, collection: str, qrels_digest: str, name: str, digest: str, k: int):
    qrels = _cached_qrels(scope, collection, qrels_digest, False)
    run = _cached_run(scope, collection, name, digest)
    return metrics.lint(qrels, run, k=k)

def lint(sel: Selection, name: str, digest: str, k: int = 10):
    """metrics.lint findings of one stored run against the collection's qrels (cached)."""
    return _lint(sel.scope, sel.collection, sel.qrels_digest, name, digest, k)

@st.cache_data(show_spinner=False, max_entries=16, ttl=CACHE_TTL)
def _topics(scope: str, collection: str, version: str) -> pd.DataFrame:
    return session.workspace().load_topics(collection)

@st.cache_data(show_spinner=False, max_entries=16, ttl=CACHE_TTL)
def _docs(scope: str, collection: str, version: str) -> pd.DataFrame:
    return session.workspace().load_docs(collection)

def topics(sel: Selection) -> pd.DataFrame:
    """Topics of the collection: columns qid, text (empty when none were uploaded)."""
    return _topics(sel.scope, sel.collection, sel.version)

def docs(sel: Selection) -> pd.DataFrame:
    """Document titles of the collection: columns docno, title (empty when none were uploaded)."""
    return _docs(sel.scope, sel.collection, sel.version)

def qrels(sel: Selection) -> metrics.Qrels:
    """The collection's qrels (cached on its digest)."""
    return _cached_qrels(sel.scope, sel.collection, sel.qrels_digest, False)

def proxy(sel: Selection) -> metrics.Qrels | None:
    """The collection's proxy judgments, if any (cached on their digest)."""
    return _cached_qrels(sel.scope, sel.collection, sel.proxy_digest, True) if sel.proxy_digest else None

def run(sel: Selection, name: str, digest: str) -> metrics.Run:
    """A stored run (cached on its digest)."""
    return _cached_run(sel.scope, sel.collection, name, digest)
