"""The sidebar and its :class:`Selection`: the collection, the systems, the baseline, the gain, the
significance test and its correction, and what every export carries (:func:`stamp`).

The page address holds the collection, the systems, the baseline and the gain
(:data:`ADDRESS`), so that a reload, a bookmark or a link shows what its sender saw.

The labels of the tests and corrections are :data:`metrics.stats.TESTS` and
:data:`metrics.stats.CORRECTIONS`, capitalised for the radio buttons.
"""
from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlencode

import streamlit as st

import metrics
from metrics import stats, store
from metrics.report.text import distinct_labels
from ndcg_lab.ui import ingest, session
from ndcg_lab.ui.text import visitor_text

DEFAULT_COLLECTION = "legal"

GAINS = {"exp": "Exponential (2^rel - 1)", "linear": "Linear (rel, as trec_eval)"}
TESTS = {key: label[0].upper() + label[1:] for key, label in stats.TESTS.items()}
CORRECTIONS = {key: label[0].upper() + label[1:] for key, label in stats.CORRECTIONS.items()}
ADDRESS = ("collection", "systems", "baseline", "gain")
"""Query parameters of the sidebar's selection: ``?collection=web&systems=hybrid&systems=neural&baseline=hybrid
&gain=linear``. Each system is a parameter of its own (a run's name may hold commas); names the
workspace lacks are ignored."""


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

HASH_FUNCS = {Selection: Selection.inputs}
"""``hash_funcs`` for every cache keyed on a :class:`Selection`: its :meth:`Selection.inputs`."""


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

def _systems_widget(collection: str, names: list[str]) -> list[str]:
    """The Systems box, drawn from the session's selection (``session_state["systems::<collection>"]``).

    As for the collection (:func:`_collection_widget`), the selection is not the widget's state:
    the box is drawn with it as its ``default`` under a key that changes whenever the app changes
    the selection itself (the address, new or removed runs), and the user's own changes reach it
    through the callback. A widget state set from the server (``session_state[key] = ...``) reaches
    the browser only with the run that set it; a browser that did not draw that run's box shows
    the widget's default, which was no systems, and its next click sends that back as the user's
    choice. That is the likely path of the emptied Systems box the browser tests met three times
    on a loaded machine (never alone); with the selection as the default, any run's box shows it."""
    ss = st.session_state
    chosen_key = f"systems::{collection}"
    key = f"_systems_select::{collection}::{ss.get('_systems_widget', 0)}"
    if key in ss and list(ss[key]) != ss[chosen_key]:
        ss["_systems_widget"] = ss.get("_systems_widget", 0) + 1
        key = f"_systems_select::{collection}::{ss['_systems_widget']}"

    def picked():
        ss[chosen_key] = list(ss[key])

    labels = distinct_labels(names)
    shown = st.sidebar.multiselect("Systems", names, default=ss[chosen_key], key=key, on_change=picked,
                                   format_func=labels.get)
    return [n for n in shown if n in names]


def _workspace_box(where, opened: store.Access | None, selected: dict) -> None:
    """Shared mode: say whose workspace this is and give its links, which open this selection;
    before the visitor's first change, that nothing of theirs is stored yet."""
    if opened is None:
        if session.pristine():
            with where.expander("Your workspace link", expanded=False):
                st.caption("Nothing of yours is stored on this server yet. Your private workspace, and the "
                           "link that returns to it, are made at your first change: an upload, a stored "
                           "fused run, a new baseline.")
        return
    if opened.read_only:
        where.info("Read-only view of a workspace: you can look at everything; changes are refused.",
                   icon=":material/visibility:")
        return
    view = "&" + urlencode(selected, doseq=True) if selected else ""
    # Drawn only while open: st.code loads the frontend's 1.5 MB syntax highlighter, which every new
    # session's first screen would otherwise fetch and run for a closed box.
    box = where.expander("Your workspace link", key="_workspace_link_open", on_change="rerun")
    if not box.open:
        return
    with box:
        st.caption("This workspace is private: only this link opens it (keep it to yourself). "
                   "A reload or a bookmark of this address returns here, to this collection, these "
                   "systems, this baseline and this gain.")
        st.code(session.link(opened.token) + view, language=None, wrap_lines=True)
        st.caption("Read-only link, to show this workspace to a class (nothing can be changed through it):")
        st.code(session.link(opened.view_token) + view, language=None, wrap_lines=True)


def _read_address(infos: dict) -> None:
    """On the session's first run that has collections: the address's selection (:data:`ADDRESS`)
    into the session state the sidebar's widgets are drawn from. A baseline other than the stored
    one is shown for this session only (the workspace is not written: an old link must not change
    the sender's baseline) until the user picks one or the stored baseline changes."""
    ss = st.session_state
    if ss.get("_address_read") or not infos:
        return
    ss["_address_read"] = True
    params = st.query_params
    if params.get("collection") in infos:
        ss["collection"] = params["collection"]
    if params.get("gain") in GAINS:
        ss["gain"] = params["gain"]
    info = infos.get(ss.get("collection"))
    if info is None:
        return
    names = [r.name for r in info.runs]
    systems = [n for n in dict.fromkeys(params.get_all("systems")) if n in names]
    if systems:
        ss[f"systems::{info.name}"] = systems
        ss[f"_known::{info.name}"] = names
    stored = info.baseline if info.baseline in names else (names[0] if names else None)
    if params.get("baseline") in names and params["baseline"] != stored:
        ss[_address_baseline_key(info.name)] = (params["baseline"], stored)


def _write_address(sel: Selection) -> dict:
    """The selection into the address (other parameters, ``ws`` and a page's own, kept); returns it."""
    selected = {"collection": sel.collection, "systems": sel.system_names, "baseline": sel.baseline,
                "gain": sel.gain}
    selected = {key: value for key, value in selected.items() if value}
    params = st.query_params
    for key in ADDRESS:
        value = selected.get(key)
        if value is None:
            params.pop(key, None)
        elif params.get_all(key) != ([value] if isinstance(value, str) else list(value)):
            params[key] = value
    return selected

def sidebar() -> Selection | None:
    """Draw the sidebar (collection, systems, baseline, gain) and return the selection.

    A workspace error (a workspace removed after its time to live while the page was open, a
    file that cannot be read) is shown as a message and the page stops: never a traceback."""
    try:
        return _sidebar()
    except metrics.MetricsError as exc:
        st.error(ingest.md(visitor_text(str(exc))), icon=":material/block:")
        st.stop()

def _sidebar() -> Selection | None:
    ws = session.workspace()
    infos = {c.name: c for c in ws.collections()}  # one snapshot per rerun: names, runs and digests agree
    collections = list(infos)
    st.sidebar.title("nDCG Lab")
    box = st.sidebar.container()  # the workspace box, drawn last: its links carry this run's selection
    opened = session.access() if session.settings().shared else None
    if not collections:
        _workspace_box(box, opened, {})
        st.sidebar.info("The workspace is empty: load a sample or upload files on the Data page.")
        return None
    ss = st.session_state
    _read_address(infos)
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
    systems = _systems_widget(collection, names)
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
    selected = Selection(
        scope=session.scope_of(info), collection=collection,
        qrels_digest=info.qrels_digest, proxy_digest=info.proxy_digest,
        version=_version(info),
        systems=tuple((n, digests[n]) for n in systems), baseline=baseline, gain=gain,
        test=test, correction=correction,
    )
    _workspace_box(box, opened, _write_address(selected))
    return selected

def _baseline_widget(ws, collection: str, names: list[str], stored: str | None) -> str | None:
    """The baseline select box. The workspace holds the baseline (``stored``, from the sidebar's
    snapshot); the widget writes it only when the user changes it, so a stale tab never
    overwrites another tab's choice. Disabled on a read-only link.

    As the Systems box (:func:`_systems_widget`), the box is drawn with the baseline shown as its
    default, under a key that changes whenever the app changes what it shows (the workspace's
    baseline set elsewhere, the address's). A value set from the server would reach only a
    browser that drew that run; one that missed it would send its old value back with the next
    click on any widget, as the user's change, and the callback would store it."""
    if not names:
        return None
    ss = st.session_state
    if stored not in names:
        stored = names[0]
    shown = stored
    linked = ss.get(_address_baseline_key(collection))
    if linked is not None:
        if linked[0] in names and linked[1] == stored:
            shown = linked[0]  # the address's baseline, while the stored one is the one it was read against
        else:
            ss.pop(_address_baseline_key(collection), None)
    key = _baseline_key(collection)
    if key in ss and ss[key] != shown:  # follow the workspace (set on the Data page or in another tab)
        ss["_baseline_widget"] = ss.get("_baseline_widget", 0) + 1
        key = _baseline_key(collection)

    def save():
        ss.pop(_address_baseline_key(collection), None)
        try:
            ws.set_baseline(collection, ss[key])
        except metrics.MetricsError as exc:
            ingest.report("error", str(exc))

    return st.sidebar.selectbox("Baseline", names, index=names.index(shown), key=key, on_change=save,
                                disabled=ws.read_only)


def forget_baseline(collection: str) -> None:
    """Make the sidebar's next rerun show the baseline the workspace holds (after a page set it)."""
    st.session_state["_baseline_widget"] = st.session_state.get("_baseline_widget", 0) + 1


def _baseline_key(collection: str) -> str:
    return f"_baseline_select::{collection}::{st.session_state.get('_baseline_widget', 0)}"


def _address_baseline_key(collection: str) -> str:
    return f"_address_baseline::{collection}"


def _runs_of(sel: Selection) -> Sequence[store.RunInfo]:
    """The runs of the selected collection: the sidebar's snapshot of this rerun when it holds every
    selected run (no second read of the workspace), else as stored now."""
    snapshot = st.session_state.get("_collection_info")
    if snapshot is not None and snapshot.name == sel.collection and \
            set(sel.systems) <= {(r.name, r.digest) for r in snapshot.runs}:
        return snapshot.runs
    return session.workspace().runs(sel.collection)

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

def collection_info(sel: Selection) -> store.CollectionInfo:
    """The selected collection as listed now (the sidebar's snapshot if another tab removed it)."""
    info = next((c for c in session.workspace().collections() if c.name == sel.collection), None)
    return info if info is not None else st.session_state["_collection_info"]

def run_page(navigation) -> None:
    """Run the page; bad input or a workspace error that reaches it is a message, not a traceback."""
    try:
        navigation.run()
    except metrics.MetricsError as exc:
        st.error(ingest.md(visitor_text(str(exc))), icon=":material/block:")

def remember(selection: Selection | None) -> None:
    """Keep this rerun's selection for the page that app.py runs next."""
    st.session_state["_selection"] = selection

def selection() -> Selection | None:
    """The sidebar selection of this rerun (``None`` when the workspace is empty)."""
    return st.session_state.get("_selection")

def all_system_names(sel: Selection) -> list[str]:
    """Every run of the collection in upload order (stable colours whatever the selection)."""
    return [r.name for r in session.workspace().runs(sel.collection)]

def _version(info) -> str:
    return f"{info.created}:{info.n_topics}:{info.n_docs}:{info.qrels_digest}"
