"""Session state, the sidebar, and content-keyed caches around ``metrics``.

Pages read everything through these functions: the active collection, the
selected systems, the baseline and the gain. Parsed and evaluated results are
cached on content digests (never on ``UploadedFile`` objects), so reruns and
other sessions reuse them.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

import metrics
from metrics import store
from metrics.evaluate import evaluate_ranked, tidy
from metrics.ranking import Ranked, rank
from ui.paths import app_dir

SAMPLES = app_dir() / "sample_data"
SAMPLE_COLLECTIONS = ("legal", "web")
DEFAULT_COLLECTION = "legal"
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


def workspace_path() -> Path:
    """``--workspace PATH`` of :func:`app_arguments`, else the store's default."""
    return app_arguments().workspace or store.default_path()


@st.cache_resource(show_spinner=False)
def _open_workspace(path: str) -> store.Workspace:
    ws = store.Workspace(path)
    if not ws.collections():
        for name in SAMPLE_COLLECTIONS:
            load_sample(ws, name)
    return ws


def workspace() -> store.Workspace:
    return _open_workspace(str(workspace_path()))


def sample_files(name: str) -> dict:
    folder = SAMPLES / name
    return {"qrels": folder / "qrels.txt", "topics": folder / "topics.tsv", "docs": folder / "docs.tsv",
            "proxy": folder / "proxy.txt", "runs": sorted(folder.glob("*.run"))}


def load_sample(ws: store.Workspace, name: str) -> str:
    """Add (or refresh) the bundled sample collection ``name`` in the workspace."""
    files = sample_files(name)
    qrels = metrics.read_qrels(files["qrels"])
    topics = metrics.io.read_two_columns(files["topics"], ("qid", "text")) if files["topics"].exists() else None
    docs = metrics.io.read_two_columns(files["docs"], ("docno", "title")) if files["docs"].exists() else None
    proxy = metrics.read_qrels(files["proxy"]) if files["proxy"].exists() else None
    if ws.has_collection(name):
        ws.delete_collection(name)
    ws.create_collection(name, qrels, proxy=proxy, topics=topics, docs=docs)
    for path in files["runs"]:
        ws.add_run(name, metrics.read_run(path))
    if name == "legal":
        ws.set_baseline(name, "bm25")
    return name


# -- content-keyed caches ---------------------------------------------------------------

@st.cache_resource(show_spinner=False, max_entries=16)  # a 7M-line run holds ~320 MB
def _cached_run(ws_path: str, collection: str, name: str, digest: str) -> metrics.Run:
    return workspace().load_run(collection, name)


@st.cache_resource(show_spinner=False, max_entries=8)
def _cached_qrels(ws_path: str, collection: str, digest: str, proxy: bool) -> metrics.Qrels | None:
    ws = workspace()
    return ws.load_proxy(collection) if proxy else ws.load_qrels(collection)


@st.cache_resource(show_spinner=False, max_entries=16)
def _cached_ranked(ws_path: str, collection: str, qrels_digest: str, run_name: str, run_digest: str,
                   proxy_digest: str | None, judged_only: bool) -> Ranked:
    qrels = _cached_qrels(ws_path, collection, qrels_digest, False)
    proxy = _cached_qrels(ws_path, collection, proxy_digest, True) if proxy_digest else None
    run = _cached_run(ws_path, collection, run_name, run_digest)
    ranked = rank(run, qrels, inferred=proxy, name=run_name)
    return ranked.condensed() if judged_only else ranked


@dataclass(frozen=True)
class Selection:
    """What the sidebar selected: everything a page needs to ask ``metrics`` for a frame."""

    ws_path: str
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
        return (self.ws_path, self.collection, self.qrels_digest, self.proxy_digest, self.systems, self.gain,
                self.version)

    def ranked(self, name: str, digest: str, *, inferred: bool = False, judged_only: bool = False) -> Ranked:
        proxy = self.proxy_digest if inferred else None
        return _cached_ranked(self.ws_path, self.collection, self.qrels_digest, name, digest, proxy, judged_only)


HASH_FUNCS = {Selection: Selection.inputs}
"""``hash_funcs`` for every cache keyed on a :class:`Selection`: its :meth:`Selection.inputs`."""


@st.cache_data(show_spinner=False, max_entries=1024)
def _evaluate_run(ws_path: str, collection: str, qrels_digest: str, proxy_digest: str | None, name: str,
                  digest: str, measures: tuple[str, ...], judged_only: bool) -> pd.DataFrame:
    """One run's tidy frame. The key is what the values depend on: the run's and the qrels' content
    digests (and the proxy's), the canonical measure strings (gain included) and judged_only; the
    workspace and collection only say where the content is. Test, correction and baseline are not
    in it: changing them re-evaluates nothing."""
    ranked = _cached_ranked(ws_path, collection, qrels_digest, name, digest, proxy_digest, judged_only)
    values = evaluate_ranked(ranked, measures)
    return tidy(name, ranked.qids, values, list(values))


def evaluate(sel: Selection, measures, *, inferred: bool = False, judged_only: bool = False) -> pd.DataFrame:
    """Tidy per-query frame for the selected systems, cached per run on content digests."""
    canonical = tuple(dict.fromkeys(str(metrics.parse_measure(m)) for m in measures))
    proxy = sel.proxy_digest if inferred else None
    frames = [_evaluate_run(sel.ws_path, sel.collection, sel.qrels_digest, proxy, name, digest, canonical, judged_only)
              for name, digest in sel.systems]
    if not frames:
        return pd.DataFrame({"system": [], "qid": [], "measure": [], "value": []})
    return pd.concat(frames, ignore_index=True)


@st.cache_data(show_spinner=False, max_entries=64)
def _curve(ws_path: str, collection: str, qrels_digest: str, name: str, digest: str, family: str,
           max_k: int | None) -> pd.DataFrame:
    ranked = _cached_ranked(ws_path, collection, qrels_digest, name, digest, None, False)
    return metrics.curve_ranked(ranked, family, max_k=max_k)


def curves(sel: Selection, family: str, max_k: int | None = None) -> dict[str, pd.DataFrame]:
    """{system: per-query curve (index qid, columns k)} for the selected systems."""
    return {name: _curve(sel.ws_path, sel.collection, sel.qrels_digest, name, digest, family, max_k)
            for name, digest in sel.systems}


# -- sidebar --------------------------------------------------------------------------

def sidebar() -> Selection | None:
    """Draw the sidebar (collection, systems, baseline, gain) and return the selection."""
    ws = workspace()
    infos = {c.name: c for c in ws.collections()}  # one workspace read per rerun
    collections = list(infos)
    st.sidebar.title("nDCG Lab")
    if not collections:
        st.sidebar.info("The workspace is empty: load a sample or upload files on the Data page.")
        return None
    ss = st.session_state
    if ss.get("collection") not in collections:
        ss["collection"] = DEFAULT_COLLECTION if DEFAULT_COLLECTION in collections else collections[0]
    collection = st.sidebar.selectbox("Collection", collections, key="collection")
    runs = ws.runs(collection)
    names = [r.name for r in runs]
    chosen_key = f"systems::{collection}"
    if chosen_key not in ss or not set(ss[chosen_key]) <= set(names):
        ss[chosen_key] = [n for n in ss.get(chosen_key, names) if n in names] or names
    ss.setdefault(f"_known::{collection}", names)
    new = [n for n in names if n not in ss[f"_known::{collection}"]]
    if new:  # runs added since the last rerun are selected at once
        ss[chosen_key] = ss[chosen_key] + new
    ss[f"_known::{collection}"] = names
    systems = st.sidebar.multiselect("Systems", names, key=chosen_key)
    baseline = _baseline_widget(ws, collection, names)
    ss.setdefault("gain", "exp")
    gain = st.sidebar.radio("Gain", list(GAINS), format_func=GAINS.get, key="gain",
                            help="nDCG gain per grade. Exponential: 2^rel - 1. Linear: rel (trec_eval's ndcg_cut).")
    with st.sidebar.expander("Significance", expanded=False):
        ss.setdefault("sig_test", "t")
        ss.setdefault("sig_correction", "holm")
        test = st.radio("Test", list(TESTS), format_func=TESTS.get, key="sig_test")
        correction = st.radio("Correction", list(CORRECTIONS), format_func=CORRECTIONS.get, key="sig_correction",
                              help="Multiple-testing correction across systems x measures.")
    digests = {r.name: r.digest for r in runs}
    return Selection(
        ws_path=str(ws.path), collection=collection,
        qrels_digest=infos[collection].qrels_digest, proxy_digest=infos[collection].proxy_digest,
        version=_version(infos[collection]),
        systems=tuple((n, digests[n]) for n in systems), baseline=baseline, gain=gain,
        test=test, correction=correction,
    )


def _baseline_widget(ws, collection: str, names: list[str]) -> str | None:
    """The baseline select box. The workspace holds the baseline; the widget writes it only when
    the user changes it, so a stale tab never overwrites another tab's choice."""
    if not names:
        return None
    key = f"baseline::{collection}"
    stored = ws.baseline(collection)
    if stored not in names:
        stored = names[0]
    if st.session_state.get(key) != stored:
        st.session_state[key] = stored  # follow the workspace (set on the Data page or in another tab)

    def save():
        ws.set_baseline(collection, st.session_state[key])

    return st.sidebar.selectbox("Baseline", names, key=key, on_change=save)


def stamp(sel: Selection, measures) -> dict:
    """Settings, input hashes and the tool version, attached to every export; fused runs add
    their recipes (inputs by digest, method, parameters)."""
    selected = {name for name, _ in sel.systems}
    recipes = {r.name: r.recipe for r in workspace().runs(sel.collection) if r.recipe and r.name in selected}
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


def remember(selection: Selection | None) -> None:
    """Keep this rerun's selection for the page that app.py runs next."""
    st.session_state["_selection"] = selection


def selection() -> Selection | None:
    """The sidebar selection of this rerun (``None`` when the workspace is empty)."""
    return st.session_state.get("_selection")


def all_system_names(sel: Selection) -> list[str]:
    """Every run of the collection in upload order (stable colours whatever the selection)."""
    return [r.name for r in workspace().runs(sel.collection)]


@st.cache_data(show_spinner=False, max_entries=256)
def _lint(ws_path: str, collection: str, qrels_digest: str, name: str, digest: str, k: int):
    qrels = _cached_qrels(ws_path, collection, qrels_digest, False)
    run = _cached_run(ws_path, collection, name, digest)
    return metrics.lint(qrels, run, k=k)


def lint(sel: Selection, name: str, digest: str, k: int = 10):
    """metrics.lint findings of one stored run against the collection's qrels (cached)."""
    return _lint(sel.ws_path, sel.collection, sel.qrels_digest, name, digest, k)


@st.cache_data(show_spinner=False, max_entries=16)
def _topics(ws_path: str, collection: str, version: str) -> pd.DataFrame:
    return workspace().load_topics(collection)


@st.cache_data(show_spinner=False, max_entries=16)
def _docs(ws_path: str, collection: str, version: str) -> pd.DataFrame:
    return workspace().load_docs(collection)


def _version(info) -> str:
    return f"{info.created}:{info.n_topics}:{info.n_docs}:{info.qrels_digest}"


def topics(sel: Selection) -> pd.DataFrame:
    """Topics of the collection: columns qid, text (empty when none were uploaded)."""
    return _topics(sel.ws_path, sel.collection, sel.version)


def docs(sel: Selection) -> pd.DataFrame:
    """Document titles of the collection: columns docno, title (empty when none were uploaded)."""
    return _docs(sel.ws_path, sel.collection, sel.version)


def qrels(sel: Selection) -> metrics.Qrels:
    """The collection's qrels (cached on its digest)."""
    return _cached_qrels(sel.ws_path, sel.collection, sel.qrels_digest, False)


def proxy(sel: Selection) -> metrics.Qrels | None:
    """The collection's proxy judgments, if any (cached on their digest)."""
    return _cached_qrels(sel.ws_path, sel.collection, sel.proxy_digest, True) if sel.proxy_digest else None


def run(sel: Selection, name: str, digest: str) -> metrics.Run:
    """A stored run (cached on its digest)."""
    return _cached_run(sel.ws_path, sel.collection, name, digest)
