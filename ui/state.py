"""Session state, the sidebar, and content-keyed caches around ``metrics``.

Pages read everything through these functions: the active workspace and collection, the
selected systems, the baseline and the gain. One :class:`metrics.store.Workspaces` per server
process opens the workspaces (``NDCG_LAB_MODE``): in ``personal`` mode the one workspace of
whoever runs the app; in ``shared`` mode every visitor's own, reached by the token in the URL
(``?ws=TOKEN``), with the sample collections shared read-only beneath it.

Parsed and evaluated results are cached on content digests (never on ``UploadedFile``
objects) under a *scope*: the shared samples (one entry for every session) or one workspace
(reachable only from the sessions that opened it), and evicted by count and age.
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

import metrics
from metrics import settings as settings_module
from metrics import store
from metrics.evaluate import evaluate_ranked, tidy
from metrics.ranking import Ranked
from metrics.report.text import human_bytes
from ui import ingest
from ui.paths import app_dir

SAMPLES = app_dir() / "sample_data"
SAMPLE_COLLECTIONS = ("legal", "web")
SAMPLE_BASELINES = {"legal": "bm25"}
DEFAULT_COLLECTION = "legal"
TOKEN_PARAM = "ws"
CACHE_TTL = 3600  # seconds an unused cache entry is kept
GAINS = {"exp": "Exponential (2^rel - 1)", "linear": "Linear (rel, as trec_eval)"}
TESTS = {"t": "Paired t-test", "wilcoxon": "Wilcoxon signed-rank", "randomization": "Randomisation (permutation)",
         "bootstrap": "Paired bootstrap"}
CORRECTIONS = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "Benjamini-Hochberg", "none": "None"}


def app_arguments(argv=None) -> argparse.Namespace:
    """The app's own options, after ``--`` on the streamlit command line
    (``streamlit run app.py -- --workspace PATH``); anything else there is left alone."""
    parser = argparse.ArgumentParser(prog="app.py", add_help=False)
    parser.add_argument("--workspace", type=Path, default=None, help="the workspace file (DuckDB)")
    return parser.parse_known_args(sys.argv[1:] if argv is None else argv)[0]


def samples() -> list[store.Sample]:
    """The bundled sample collections, in the order the Data page offers them."""
    return [store.Sample(name, SAMPLES / name, SAMPLE_BASELINES.get(name)) for name in SAMPLE_COLLECTIONS]


def settings() -> settings_module.Settings:
    """The operator settings of this process (``metrics.settings.load``)."""
    return settings_module.load()


@st.cache_resource(show_spinner=False)
def _manager(config: settings_module.Settings) -> store.Workspaces:
    return store.Workspaces(config, samples=samples())


def manager() -> store.Workspaces:
    """The one workspace manager of this process and these settings, shared by every session."""
    return _manager(settings())


def _session_access() -> store.Access | None:
    """Shared mode: the workspace of this session's token (``?ws=`` in the URL); a first visit
    makes one. A token no workspace has, or an expired one, gets a page that says so and stops."""
    ss = st.session_state
    token = st.query_params.get(TOKEN_PARAM)
    access = ss.get("_access")
    if access is not None and token in (None, access.token):
        if token is None:               # a page switch drops the query: put the token back
            st.query_params[TOKEN_PARAM] = access.token
        return access
    try:
        access = manager().open(token) if token else manager().create()
    except store.WorkspaceNotFound as exc:
        ss.pop("_access", None)
        _no_workspace_page(exc)
    ss["_access"] = access
    ss.pop("collection", None)
    st.query_params[TOKEN_PARAM] = access.token
    return access


def _no_workspace_page(exc: metrics.MetricsError) -> None:
    st.title("nDCG Lab")
    st.error(f"{exc.problem}. Nothing of any workspace is shown for this link.", icon="🔒")
    if exc.fix:
        st.write(exc.fix[0].upper() + exc.fix[1:] + ".")
    st.link_button("Start a new workspace", base_url())
    st.stop()


def base_url() -> str:
    """The app's address in the browser, without the query."""
    url = st.context.url or ""
    return url.split("?", 1)[0] or "/"


def link(token: str) -> str:
    """The address that opens the workspace of ``token``."""
    return f"{base_url()}?{TOKEN_PARAM}={token}"


def access() -> store.Access | None:
    """The session's workspace access in shared mode (None in personal mode)."""
    return _session_access() if settings().shared else None


def workspace() -> store.Workspace:
    """The session's workspace: the visitor's own (shared mode), else the personal one."""
    opened = access()
    if opened is not None:
        return opened.workspace
    return manager().personal(app_arguments().workspace)


def read_only() -> bool:
    """Whether this session may only look (a read-only link): write controls are disabled."""
    return workspace().read_only


def reload_sample(name: str) -> list[store.RunInfo]:
    """Restore the sample ``name`` in the session's workspace in one transaction, keeping the runs
    added to it; the runs kept."""
    return manager().reload_sample(workspace(), name)


def scope_of(info: store.CollectionInfo) -> str:
    """Where a collection's content lives, for cache keys: the shared samples (one entry for all
    sessions) or this session's workspace (its file: a random id, never the token)."""
    if info.shared:
        return f"samples:{settings().home}"
    return f"workspace:{workspace().path}"


# -- content-keyed caches ---------------------------------------------------------------
# Every loader reads through the session's workspace; the key's scope is what the session's
# selection says, so a session reaches the entries of its own workspace and of the samples.

@st.cache_resource(show_spinner=False, max_entries=16, ttl=CACHE_TTL)  # a 7M-line run holds ~320 MB
def _cached_run(scope: str, collection: str, name: str, digest: str) -> metrics.Run:
    return workspace().load_run(collection, name, digest=digest)


@st.cache_resource(show_spinner=False, max_entries=8, ttl=CACHE_TTL)
def _cached_qrels(scope: str, collection: str, digest: str, proxy: bool) -> metrics.Qrels | None:
    ws = workspace()
    qrels = ws.load_proxy(collection) if proxy else ws.load_qrels(collection)
    if qrels is not None and qrels.digest != digest:
        raise metrics.MetricsError(f"the judgments of {collection!r} changed while they were being read",
                                   fix="reload the page to see the new ones")
    return qrels


@st.cache_resource(show_spinner=False, max_entries=16, ttl=CACHE_TTL)
def _cached_ranked(scope: str, collection: str, qrels_digest: str, run_name: str, run_digest: str,
                   proxy_digest: str | None, judged_only: bool) -> Ranked:
    """The run ordered and joined with the judgments, from the workspace's ranked cache (memory-mapped;
    built on the first call in any process): no parse, no sort, no parsed run held in memory.

    A first call parses and sorts the run; its scratch is collected here, on this cache miss, since
    the server runs no full collection after every script run (.streamlit/config.toml)."""
    ranked = workspace().load_ranked(collection, run_name, digest=run_digest, qrels_digest=qrels_digest,
                                     inferred=proxy_digest is not None, proxy_digest=proxy_digest,
                                     judged_only=judged_only)
    gc.collect()
    return ranked


@dataclass(frozen=True)
class Selection:
    """What the sidebar selected: everything a page needs to ask ``metrics`` for a frame."""

    scope: str
    collection: str
    qrels_digest: str
    proxy_digest: str | None
    systems: tuple[tuple[str, str], ...]  # (name, digest)
    baseline: str | None
    gain: str
    test: str = "t"
    correction: str = "holm"
    version: str = ""  # changes when the collection's qrels, topics or titles change

    @property
    def system_names(self) -> list[str]:
        return [name for name, _ in self.systems]

    def inputs(self) -> tuple:
        """What results computed from this selection depend on: the workspace, the collection, the
        content digests of qrels, proxy and runs, the gain and the collection's version. The
        significance test, the correction and the baseline are not in it (the functions that use
        them take them as arguments), so changing those recomputes nothing else."""
        return (self.scope, self.collection, self.qrels_digest, self.proxy_digest, self.systems, self.gain,
                self.version)

    def ranked(self, name: str, digest: str, *, inferred: bool = False, judged_only: bool = False) -> Ranked:
        proxy = self.proxy_digest if inferred else None
        return _cached_ranked(self.scope, self.collection, self.qrels_digest, name, digest, proxy, judged_only)


HASH_FUNCS = {Selection: Selection.inputs}
"""``hash_funcs`` for every cache keyed on a :class:`Selection`: its :meth:`Selection.inputs`."""


@st.cache_data(show_spinner=False, max_entries=1024, ttl=CACHE_TTL)
def _evaluate_run(scope: str, collection: str, qrels_digest: str, proxy_digest: str | None, name: str,
                  digest: str, measures: tuple[str, ...], judged_only: bool) -> pd.DataFrame:
    """One run's tidy frame. The key is what the values depend on: the run's and the qrels' content
    digests (and the proxy's), the canonical measure strings (gain included) and judged_only; the
    workspace and collection only say where the content is. Test, correction and baseline are not
    in it: changing them re-evaluates nothing."""
    ranked = _cached_ranked(scope, collection, qrels_digest, name, digest, proxy_digest, judged_only)
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
def _run_means(scope: str, collection: str, qrels_digest: str, proxy_digest: str | None, name: str, digest: str,
               measures: tuple[str, ...], judged_only: bool) -> tuple[pd.DataFrame, np.ndarray]:
    """One run's row of means (``metrics.means`` of its tidy frame) and its distinct qids, under the
    key of :func:`_evaluate_run`: a rerun with nothing changed reads a one-row frame, never the
    run's per-query frame (7M lines: 6,980 queries x the measures)."""
    frame = _evaluate_run(scope, collection, qrels_digest, proxy_digest, name, digest, measures, judged_only)
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
def _curve(scope: str, collection: str, qrels_digest: str, name: str, digest: str, family: str,
           max_k: int | None) -> pd.DataFrame:
    ranked = _cached_ranked(scope, collection, qrels_digest, name, digest, None, False)
    return metrics.curve_ranked(ranked, family, max_k=max_k)


def curves(sel: Selection, family: str, max_k: int | None = None) -> dict[str, pd.DataFrame]:
    """{system: per-query curve (index qid, columns k)} for the selected systems."""
    return {name: _curve(sel.scope, sel.collection, sel.qrels_digest, name, digest, family, max_k)
            for name, digest in sel.systems}


# -- sidebar --------------------------------------------------------------------------

def open_collection(name: str) -> None:
    """Make ``name`` the session's collection (from a callback: the next run shows it)."""
    ss = st.session_state
    ss["collection"] = name
    ss["_collection_widget"] = ss.get("_collection_widget", 0) + 1


def _collection_widget(collections: list[str]) -> str:
    """The collection select box, valid by construction.

    The session's collection lives in ``session_state["collection"]``, not in the widget: the
    widget is drawn with that value as its ``index`` under a key that changes whenever the app
    switches collection itself (:func:`open_collection`), so a widget value the browser has not
    caught up with can never replace it behind the page's back; only the user's own change does,
    through the callback.
    """
    ss = st.session_state
    if ss.get("collection") not in collections:
        ss["collection"] = DEFAULT_COLLECTION if DEFAULT_COLLECTION in collections else collections[0]
    key = f"_collection_select::{ss.get('_collection_widget', 0)}"

    def chosen():
        if ss.get(key) in collections:
            ss["collection"] = ss[key]

    st.sidebar.selectbox("Collection", collections, index=collections.index(ss["collection"]), key=key,
                         on_change=chosen)
    return ss["collection"]


def _workspace_box(opened: store.Access | None) -> None:
    """Shared mode: say whose workspace this is and give its links."""
    if opened is None:
        return
    if opened.read_only:
        st.sidebar.info("Read-only view of a workspace: you can look at everything; changes are refused.",
                        icon="👁️")
        return
    with st.sidebar.expander("Your workspace link", expanded=False):
        st.caption("This workspace is private: only this link opens it (keep it to yourself). "
                   "A reload or a bookmark of this address returns here.")
        st.code(link(opened.token), language=None, wrap_lines=True)
        st.caption("Read-only link, to show this workspace to a class (nothing can be changed through it):")
        st.code(link(opened.view_token), language=None, wrap_lines=True)


def sidebar() -> Selection | None:
    """Draw the sidebar (collection, systems, baseline, gain) and return the selection.

    A workspace error (a workspace removed after its time to live while the page was open, a
    file that cannot be read) is shown as a message and the page stops: never a traceback."""
    try:
        return _sidebar()
    except metrics.MetricsError as exc:
        st.error(ingest.md(str(exc)), icon="🚫")
        st.stop()


def _sidebar() -> Selection | None:
    ws = workspace()
    infos = {c.name: c for c in ws.collections()}  # one snapshot per rerun: names, runs and digests agree
    collections = list(infos)
    st.sidebar.title("nDCG Lab")
    _workspace_box(access() if settings().shared else None)
    if not collections:
        st.sidebar.info("The workspace is empty: load a sample or upload files on the Data page.")
        return None
    ss = st.session_state
    collection = _collection_widget(collections)
    info = infos[collection]
    names = [r.name for r in info.runs]
    chosen_key = f"systems::{collection}"
    if chosen_key not in ss or not set(ss[chosen_key]) <= set(names):
        ss[chosen_key] = [n for n in ss.get(chosen_key, names) if n in names] or names
    ss.setdefault(f"_known::{collection}", names)
    new = [n for n in names if n not in ss[f"_known::{collection}"]]
    if new:  # runs added since the last rerun are selected at once
        ss[chosen_key] = ss[chosen_key] + new
    ss[f"_known::{collection}"] = names
    systems = [n for n in st.sidebar.multiselect("Systems", names, key=chosen_key) if n in names]
    baseline = _baseline_widget(ws, collection, names, info.baseline)
    ss.setdefault("gain", "exp")
    gain = st.sidebar.radio("Gain", list(GAINS), format_func=GAINS.get, key="gain",
                            help="nDCG gain per grade. Exponential: 2^rel - 1. Linear: rel (trec_eval's ndcg_cut).")
    with st.sidebar.expander("Significance", expanded=False):
        ss.setdefault("sig_test", "t")
        ss.setdefault("sig_correction", "holm")
        test = st.radio("Test", list(TESTS), format_func=TESTS.get, key="sig_test")
        correction = st.radio("Correction", list(CORRECTIONS), format_func=CORRECTIONS.get, key="sig_correction",
                              help="Multiple-testing correction across systems x measures.")
    digests = {r.name: r.digest for r in info.runs}
    ss["_collection_info"] = info
    return Selection(
        scope=scope_of(info), collection=collection,
        qrels_digest=info.qrels_digest, proxy_digest=info.proxy_digest,
        version=_version(info),
        systems=tuple((n, digests[n]) for n in systems), baseline=baseline, gain=gain,
        test=test, correction=correction,
    )


def _baseline_widget(ws, collection: str, names: list[str], stored: str | None) -> str | None:
    """The baseline select box. The workspace holds the baseline (``stored``, from the sidebar's
    snapshot); the widget writes it only when the user changes it, so a stale tab never
    overwrites another tab's choice. Disabled on a read-only link."""
    if not names:
        return None
    key = f"baseline::{collection}"
    if stored not in names:
        stored = names[0]
    if st.session_state.get(key) != stored:
        st.session_state[key] = stored  # follow the workspace (set on the Data page or in another tab)

    def save():
        try:
            ws.set_baseline(collection, st.session_state[key])
        except metrics.MetricsError as exc:
            ingest.report("error", str(exc))

    return st.sidebar.selectbox("Baseline", names, key=key, on_change=save, disabled=ws.read_only)


def _runs_of(sel: Selection) -> Sequence[store.RunInfo]:
    """The runs of the selected collection: the sidebar's snapshot of this rerun when it holds every
    selected run (no second read of the workspace), else as stored now."""
    snapshot = st.session_state.get("_collection_info")
    if snapshot is not None and snapshot.name == sel.collection and \
            set(sel.systems) <= {(r.name, r.digest) for r in snapshot.runs}:
        return snapshot.runs
    return workspace().runs(sel.collection)


def stamp(sel: Selection, measures) -> dict:
    """Settings, input hashes and the tool version, attached to every export; fused runs add
    their recipes (inputs by digest, method, parameters)."""
    selected = {name for name, _ in sel.systems}
    recipes = {r.name: r.recipe for r in _runs_of(sel) if r.recipe and r.name in selected}
    return {
        "tool": f"nDCG Lab {metrics.__version__}",
        "exported": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "collection": sel.collection,
        "qrels_sha256": sel.qrels_digest,
        "runs_sha256": {name: digest for name, digest in sel.systems},
        "gain": sel.gain,
        "measures": list(measures),
        "order": "score desc, ties docno desc (trec_eval)",
        "missing_queries": "scored 0 (trec_eval -c)",
    } | ({"fusion_recipes": recipes} if recipes else {})


def bounded_upload(files: list) -> list:
    """The files of one upload that the operator's bounds allow (``NDCG_LAB_UPLOAD_FILES`` files,
    ``NDCG_LAB_UPLOAD_BYTES`` in all); each file refused is marked handled and named in a message."""
    config = settings()
    kept, total = [], 0
    for file in files:
        if len(kept) >= config.upload_files:
            refused = f"more than {config.upload_files} files in one upload"
            fix = "upload the rest in another batch (NDCG_LAB_UPLOAD_FILES sets the bound)"
        elif total + file.size > config.upload_bytes:
            refused = f"the upload would exceed {human_bytes(config.upload_bytes)}"
            fix = "upload fewer or smaller files at once (NDCG_LAB_UPLOAD_BYTES sets the bound)"
        else:
            kept.append(file)
            total += file.size
            continue
        ingest.mark_done(file)
        ingest.report("error", str(metrics.MetricsError(f"not read: {refused}", source=file.name, fix=fix)))
    return kept


def collection_info(sel: Selection) -> store.CollectionInfo:
    """The selected collection as listed now (the sidebar's snapshot if another tab removed it)."""
    info = next((c for c in workspace().collections() if c.name == sel.collection), None)
    return info if info is not None else st.session_state["_collection_info"]


def run_page(navigation) -> None:
    """Run the page; bad input or a workspace error that reaches it is a message, not a traceback."""
    try:
        navigation.run()
    except metrics.MetricsError as exc:
        st.error(ingest.md(str(exc)), icon="🚫")


def remember(selection: Selection | None) -> None:
    """Keep this rerun's selection for the page that app.py runs next."""
    st.session_state["_selection"] = selection


def selection() -> Selection | None:
    """The sidebar selection of this rerun (``None`` when the workspace is empty)."""
    return st.session_state.get("_selection")


def all_system_names(sel: Selection) -> list[str]:
    """Every run of the collection in upload order (stable colours whatever the selection)."""
    return [r.name for r in workspace().runs(sel.collection)]


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
    return workspace().load_topics(collection)


@st.cache_data(show_spinner=False, max_entries=16, ttl=CACHE_TTL)
def _docs(scope: str, collection: str, version: str) -> pd.DataFrame:
    return workspace().load_docs(collection)


def _version(info) -> str:
    return f"{info.created}:{info.n_topics}:{info.n_docs}:{info.qrels_digest}"


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
