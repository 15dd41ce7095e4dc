"""AppTest of the leaderboard, curves and data pages: what they show equals what ``metrics`` computes.

Every expected number comes from ``metrics.evaluate`` / ``metrics.lint`` on the files in
ndcg_lab/sample_data/legal (the workspace loads them on first open), never from the app's own caches.
Tests that only read share one workspace; tests that change data get their own.
"""
from __future__ import annotations

import base64
import gzip
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

import metrics
from metrics import stats
from tests.conftest import assert_ok, baseline_box, html_tables, systems_box

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "ndcg_lab" / "app.py")
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
LEGAL_RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}
EXP_DEFAULT = ["nDCG(dcg='exp-log2')@5", "nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@20",
               "AP", "RR", "R@100", "P@10", "Judged@10"]
LINEAR_DEFAULT = ["nDCG@5", "nDCG@10", "nDCG@20", "AP", "RR", "R@100", "P@10", "Judged@10"]


# --------------------------------------------------------------------------- harness

@pytest.fixture
def viewer(open_app, shared_home):
    """open(page=None) -> AppTest on the shared, read-only workspace."""
    return lambda page=None: open_app(page, home=shared_home)


@pytest.fixture
def editor(open_app):
    """open(page=None) -> AppTest on a workspace of this test's own."""
    return lambda page=None: open_app(page)


# --------------------------------------------------------------------------- expectations

@pytest.fixture(scope="module")
def legal_means():
    """means(measures) -> system x measure frame from metrics.evaluate on the legal files."""
    cache = {}

    def means(measures):
        key = tuple(measures)
        if key not in cache:
            frame = metrics.evaluate(LEGAL / "qrels.txt", dict(LEGAL_RUNS), list(measures))
            cache[key] = metrics.means(frame)
        return cache[key]

    return means


def shown_table(at: AppTest, index: int = 0) -> pd.DataFrame:
    """The leaderboard as displayed: cell text without the ▲/▼ markers."""
    table = html_tables(at)[index]
    return table.map(lambda text: str(text).replace("▲", "").replace("▼", "").strip())


def markers(at: AppTest, index: int = 0) -> pd.DataFrame:
    table = html_tables(at)[index]
    return table.map(lambda text: "▲" if "▲" in str(text) else "▼" if "▼" in str(text) else "")


def bold_cells(at: AppTest, index: int = 0) -> set[tuple[int, int]]:
    """(row, column) positions of the cells drawn bold (class "best", ndcg_lab.ui.tables.TABLE_CSS)."""
    classes = html_tables(at, "class")[index].to_numpy()
    return {(int(r), int(c)) for r, c in zip(*np.nonzero(classes == "best"))}


def assert_values(at: AppTest, expected: pd.DataFrame) -> None:
    shown = shown_table(at)
    assert list(shown.columns) == list(expected.columns)
    assert sorted(shown.index) == sorted(expected.index)
    for system in expected.index:
        for measure in expected.columns:
            assert shown.at[system, measure] == f"{expected.at[system, measure]:.4f}", (system, measure)


def plotly_spec(at: AppTest, index: int = 0) -> dict:
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def trace_array(values) -> np.ndarray:
    """A plotly trace array from the JSON spec (plain list, or {dtype, bdata} binary encoding)."""
    if isinstance(values, dict):
        return np.frombuffer(base64.b64decode(values["bdata"]), dtype=np.dtype(values["dtype"]))
    return np.asarray(values)


def line_traces(spec: dict) -> list[dict]:
    return [t for t in spec["data"] if t.get("fill") != "toself" and t.get("showlegend") is not False]


# --------------------------------------------------------------------------- leaderboard

def test_leaderboard_default_columns_equal_metrics_evaluate(viewer, legal_means):
    at = viewer()

    assert at.header[0].value == "Leaderboard"
    shown = shown_table(at)
    assert list(shown.columns) == EXP_DEFAULT == [metrics.with_gain(m, "exp") for m in metrics.DEFAULT_MEASURES]
    assert_values(at, legal_means(EXP_DEFAULT))
    caption = at.caption[0].value
    assert "50 queries" in caption and "Exponential" in caption and "baseline: **bm25**" in caption


def test_leaderboard_marks_the_best_value_of_each_column(viewer, legal_means):
    at = viewer()

    expected = legal_means(EXP_DEFAULT)
    rows = list(html_tables(at)[0].index)
    best = {(rows.index(system), j)
            for j, measure in enumerate(expected.columns)
            for system in expected.index[expected[measure] == expected[measure].max()]}
    assert bold_cells(at) == best
    # bm25_ce, the reranker, leads on nDCG@10 (the sample's story)
    assert (rows.index("bm25_ce"), EXP_DEFAULT.index("nDCG(dcg='exp-log2')@10")) in best


def test_leaderboard_markers_are_the_paired_tests_against_the_baseline(viewer):
    at = viewer()

    frame = metrics.evaluate(LEGAL / "qrels.txt", dict(LEGAL_RUNS), EXP_DEFAULT)
    tests = stats.versus_baseline(frame, "bm25")
    shown = markers(at)
    for row in tests.itertuples():
        assert shown.at[row.system, row.measure] == row.marker, (row.system, row.measure)
    assert (shown.loc["bm25"] == "").all()
    assert shown.at["bm25_ce", "nDCG(dcg='exp-log2')@10"] == "▲"


def test_linear_gain_changes_headers_and_values(viewer, legal_means):
    at = viewer()
    exp_shown = shown_table(at)

    at.sidebar.radio(key="gain").set_value("linear").run()
    assert_ok(at)

    assert list(shown_table(at).columns) == LINEAR_DEFAULT
    assert_values(at, legal_means(LINEAR_DEFAULT))
    linear_shown = shown_table(at)
    # the grades go to 3, so 2^rel - 1 and rel differ: every nDCG column moves, the others stay
    for exp_name, linear_name in zip(EXP_DEFAULT[:3], LINEAR_DEFAULT[:3]):
        assert (exp_shown[exp_name] != linear_shown[linear_name]).any()
    for name in EXP_DEFAULT[3:]:
        assert (exp_shown[name] == linear_shown[name]).all()
    assert "Linear" in at.caption[0].value


def add_measure(at: AppTest, text: str) -> AppTest:
    if not ("add_measure_open" in at.session_state and at.session_state["add_measure_open"]):
        at.session_state["add_measure_open"] = True   # the box's form is drawn only while it is open
        at.run()
    next(t for t in at.text_input if t.label == "Measure (ir_measures syntax)").input(text)
    at.button(key="FormSubmitter:add_measure-Add").click().run()
    assert_ok(at)
    return at


def test_adding_a_measure_adds_a_column(viewer, legal_means):
    at = viewer()

    add_measure(at, "P(rel=2)@5")
    assert list(shown_table(at).columns) == EXP_DEFAULT + ["P(rel=2)@5"]
    add_measure(at, "nDCG@100")  # nDCG follows the sidebar's gain, and says so in the header
    assert list(shown_table(at).columns) == EXP_DEFAULT + ["P(rel=2)@5", "nDCG(dcg='exp-log2')@100"]
    assert_values(at, legal_means(EXP_DEFAULT + ["P(rel=2)@5", "nDCG(dcg='exp-log2')@100"]))
    assert not at.error

    reset = next(b for b in at.button if b.label == "Reset to the default columns")
    reset.click().run()
    assert_ok(at)
    assert list(shown_table(at).columns) == EXP_DEFAULT


@pytest.mark.parametrize("text, words", [
    ("nDCG@x", ["nDCG@x", "cutoff"]),
    ("Foo@0.5", ["unknown measure", "Foo", "known measures"]),
    ("P(rel=a)@5", ["rel", "int"]),
])
def test_a_bad_measure_shows_a_clear_error(viewer, text, words):
    at = viewer()

    add_measure(at, text)
    assert len(at.error) == 1
    message = at.error[0].value
    for word in words:
        assert word in message
    assert list(shown_table(at).columns) == EXP_DEFAULT


# --------------------------------------------------------------------------- curves

def test_curves_chart_has_one_trace_per_system_with_the_engines_means(viewer, legal_means):
    at = viewer("views/curves.py")

    assert at.header[0].value == "Curves over k"
    spec = plotly_spec(at)
    lines = line_traces(spec)
    assert [t["name"] for t in lines] == list(LEGAL_RUNS)
    assert spec["layout"]["yaxis"]["title"]["text"] == "nDCG(dcg='exp-log2')@k"
    expected = legal_means(["nDCG(dcg='exp-log2')@10", "nDCG(dcg='exp-log2')@100"])
    for trace in lines:
        k, value = trace_array(trace["x"]), trace_array(trace["y"])
        assert k[0] == 1 and k[-1] == 100
        assert value[k == 10][0] == pytest.approx(expected.at[trace["name"], "nDCG(dcg='exp-log2')@10"], abs=1e-12)
        assert value[k == 100][0] == pytest.approx(expected.at[trace["name"], "nDCG(dcg='exp-log2')@100"], abs=1e-12)
    assert "k = 1..100" in at.caption[0].value and "50 queries" in at.caption[0].value


def test_curves_toggles_measure_and_gain(viewer):
    at = viewer("views/curves.py")
    assert plotly_spec(at)["layout"]["xaxis"]["type"] == "linear"

    at.toggle(key="curve_log_x").set_value(True).run()
    assert_ok(at)
    assert plotly_spec(at)["layout"]["xaxis"]["type"] == "log"

    at.toggle(key="curve_band").set_value(True).run()
    assert_ok(at)
    spec = plotly_spec(at)
    bands = [t for t in spec["data"] if t.get("fill") == "toself"]
    assert sorted(t["name"] for t in bands) == sorted(f"{name} 95% CI" for name in LEGAL_RUNS)
    assert len(line_traces(spec)) == len(LEGAL_RUNS)

    at.radio(key="curve_family").set_value("P").run()
    assert_ok(at)
    assert plotly_spec(at)["layout"]["yaxis"]["title"]["text"] == "P@k"

    at.radio(key="curve_family").set_value("nDCG").run()
    at.sidebar.radio(key="gain").set_value("linear").run()
    assert_ok(at)
    assert plotly_spec(at)["layout"]["yaxis"]["title"]["text"] == "nDCG@k"


def test_curves_follow_the_sidebars_systems(viewer):
    at = viewer("views/curves.py")

    systems_box(at).unselect("dense").unselect("bm25_qe").run()
    assert_ok(at)
    assert [t["name"] for t in line_traces(plotly_spec(at))] == ["bm25", "bm25_ce"]


# --------------------------------------------------------------------------- data

def plain(markdown: str) -> str:
    """The text a person reads: messages quoting names are markdown-escaped by the page."""
    return re.sub(r"\\(.)", r"\1", markdown)


def runs_listed(at: AppTest) -> list[str]:
    return [name.replace(" (baseline)", "") for name in at.table[0].value["name"]]


def baseline_listed(at: AppTest) -> str:
    return next(n.replace(" (baseline)", "") for n in at.table[0].value["name"] if n.endswith(" (baseline)"))


def submit(at: AppTest, form: str, button: str) -> AppTest:
    at.button(key=f"FormSubmitter:{form}-{button}").click().run()
    assert_ok(at)
    return at


def test_data_page_lists_the_sample_runs_and_their_lint_report(viewer):
    at = viewer("views/data.py")

    assert at.header[0].value == "Data"
    assert runs_listed(at) == list(LEGAL_RUNS)
    assert baseline_listed(at) == "bm25"
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    labels = [e.label for e in at.expander]
    body = "\n".join(m.value for m in at.markdown)
    for name, path in LEGAL_RUNS.items():
        findings = metrics.lint(qrels, metrics.read_run(path), k=10)
        judged = next(f for f in findings if f.kind == "judged")
        problems = [f for f in findings if f.kind != "judged"]
        assert f"{name}: {len(problems)} finding(s) · Judged@10 = {judged.value:.3f}" in labels
        for finding in findings:
            assert f"**{finding.kind}**: {finding.message}" in body
    # the bm25 sample has tied scores: the lint names the tie rule, that ranx may order those ties
    # otherwise, and where pytrec_eval's 9.0.8 IPrec cut-offs differ
    assert any(label.startswith("bm25: 3 finding(s)") for label in labels)
    assert "ties are broken by docno descending" in body
    assert "**parity_ranx_unstable**" in body and "**parity_iprec**" in body


def test_loading_a_sample_opens_it(editor):
    at = editor("views/data.py")
    assert at.session_state["collection"] == "legal"

    at.button(key="sample_web").click().run()
    assert_ok(at)

    assert at.session_state["collection"] == "web"
    assert [s.value for s in at.success] == ["Loaded the web sample collection."]
    assert runs_listed(at) == ["hybrid", "lexical", "neural"]
    at.run()                       # the run that drew the message ended: the next does not draw it
    assert not at.success


def test_reloading_a_sample_restores_it_and_keeps_added_runs(editor, tmp_path):
    at = editor("views/data.py")
    at.selectbox(key="delete_which").select("dense")
    submit(at, "delete_run", "Delete")
    assert "dense" not in runs_listed(at)
    extra = b"1 Q0 doc-x 1 3.5 mine\n"
    at.file_uploader(key="runs_upload").upload("mine.run", extra).run()
    assert_ok(at)
    assert "mine" in runs_listed(at)

    at.button(key="sample_legal").click().run()
    assert_ok(at)

    assert runs_listed(at) == list(LEGAL_RUNS) + ["mine"]
    assert "kept 1 run(s)" in at.success[0].value


def test_rename_delete_and_baseline(editor):
    at = editor("views/data.py")

    at.selectbox(key="rename_old").select("bm25_qe")
    at.text_input(key="rename_new").input("bm25 + RM3")
    submit(at, "rename_run", "Rename")
    assert runs_listed(at) == ["bm25", "bm25_ce", "bm25 + RM3", "dense"]
    assert "bm25 + RM3" in systems_box(at).value

    at.selectbox(key="rename_old").select("dense")
    at.text_input(key="rename_new").input("bm25_ce")
    submit(at, "rename_run", "Rename")
    assert "already has a run named 'bm25_ce'" in plain(at.error[0].value)
    assert runs_listed(at) == ["bm25", "bm25_ce", "bm25 + RM3", "dense"]

    at.selectbox(key="delete_which").select("dense")
    submit(at, "delete_run", "Delete")
    assert runs_listed(at) == ["bm25", "bm25_ce", "bm25 + RM3"]
    assert "dense" not in systems_box(at).options

    at.selectbox(key="baseline_pick").select("bm25_ce")
    submit(at, "pick_baseline", "Set baseline")
    assert baseline_listed(at) == "bm25_ce"
    assert baseline_box(at).value == "bm25_ce"

    at.switch_page("views/leaderboard.py").run()
    assert_ok(at)
    assert sorted(html_tables(at)[0].index) == ["bm25", "bm25 + RM3", "bm25_ce"]
    assert "baseline: **bm25_ce**" in at.caption[0].value
    assert (markers(at).loc["bm25_ce"] == "").all()


QRELS = b"q1 0 d1 2\nq1 0 d2 1\nq1 0 d3 0\nq2 0 d4 1\nq2 0 d5 3\n"
RUN_A = b"q1 Q0 d1 1 3.0 a\nq1 Q0 d3 2 2.0 a\nq1 Q0 d2 3 1.0 a\nq2 Q0 d5 1 2.0 a\nq2 Q0 d4 2 1.0 a\n"
RUN_B = b"q1 Q0 d3 1 3.0 b\nq1 Q0 d2 2 2.0 b\nq1 Q0 d9 3 1.0 b\nq2 Q0 d4 1 2.0 b\n"


def test_new_collection_uploads_and_a_malformed_run(editor, tmp_path):
    at = editor("views/data.py")

    at.text_input(key="new_collection_name").input("tiny")
    at.button(key="create_collection").click().run()
    assert_ok(at)
    assert "Upload the qrels file" in plain(at.error[0].value)

    at.file_uploader(key="new_collection_qrels::0").upload("tiny.qrels", QRELS)
    at.button(key="create_collection").click().run()
    assert_ok(at)
    assert at.session_state["collection"] == "tiny"
    assert "Created collection **tiny** with 5 judgments" in at.success[0].value
    assert at.text_input(key="new_collection_name").value == ""

    at.file_uploader(key="runs_upload").set_value(
        [("a.run", RUN_A, "text/plain"), ("b.run.gz", gzip.compress(RUN_B), "application/gzip")]).run()
    assert_ok(at)
    assert runs_listed(at) == ["a", "b"]
    assert len(at.success) == 2

    at.file_uploader(key="runs_upload").upload("broken.run", RUN_A + b"q2 Q0 d7 3\n").run()
    assert_ok(at)
    assert len(at.error) == 1
    assert plain(at.error[0].value).startswith("broken.run line 6: expected at least 6 columns")
    assert runs_listed(at) == ["a", "b"]

    at.switch_page("views/leaderboard.py").run()
    assert_ok(at)
    qrels_path, a_path, b_path = (tmp_path / "tiny.qrels", tmp_path / "a.run", tmp_path / "b.run")
    qrels_path.write_bytes(QRELS), a_path.write_bytes(RUN_A), b_path.write_bytes(RUN_B)
    expected = metrics.means(metrics.evaluate(qrels_path, [a_path, b_path], EXP_DEFAULT))
    assert_values(at, expected)


def test_a_bad_topics_file_is_reported_not_raised(editor):
    at = editor("views/data.py")

    at.file_uploader(key="topics_upload").upload("topics.tsv", b"\xff\xfe\x00broken").run()
    assert_ok(at)
    assert plain(at.error[0].value).startswith("topics.tsv: this is UTF-16 text; only UTF-8 is read")
    at.file_uploader(key="topics_upload").upload("empty.tsv", b"").run()
    assert_ok(at)
    assert plain(at.error[0].value).startswith("empty.tsv line 1: the file is empty")


def test_navigation_icons_are_material_symbols_and_the_page_icon_is_the_packages():
    """Streamlit ships the Material Symbols font; an emoji icon needs an emoji font, which many
    machines lack, and is then drawn as an empty box."""
    import ast

    tree = ast.parse((ROOT / "ndcg_lab" / "app.py").read_text())
    pages = next(node.value for node in ast.walk(tree) if isinstance(node, ast.Assign)
                 and any(getattr(t, "id", None) == "PAGES" for t in node.targets))
    icons = [ast.literal_eval(entry)[2] for entry in pages.elts]
    assert icons and all(re.fullmatch(r":material/[a-z0-9_]+:", icon) for icon in icons), icons
    # the page's icon is a PNG of the package: a Material icon there is a favicon fetched from
    # fonts.gstatic.com, a third party (tests/e2e/test_dashboard.py sees no such request)
    config = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                  and getattr(node.func, "attr", None) == "set_page_config")
    assert next(ast.unparse(k.value) for k in config.keywords if k.arg == "page_icon") == "str(ICON)"
    icon = ROOT / "ndcg_lab" / "static" / "icon.png"
    assert icon.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
