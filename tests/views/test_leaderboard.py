"""AppTest of the measure pickers: the Leaderboard's box and the Compare page take any measure
name, trec_eval spellings included, and show exactly what ``metrics.evaluate`` computes on the
legal sample's files; a bad name shows its MetricsError. The Judgments page ranks by Bpref and
infAP beside the treatments of unjudged documents. The Leaderboard's significance details are a table
of the paired tests, and its exports are written only when a button is clicked."""
from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

import metrics
from metrics import stats
from metrics.report import export
from metrics.stats.standardisation import reference_stats, write_zscores
from tests.conftest import html_tables, systems_box

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}


def means(measures):
    return metrics.means(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), list(measures)))


def assert_ok(at) -> None:
    assert not at.exception, "\n".join(e.value for e in at.exception)


def shown(at):
    """The leaderboard as text, markers dropped."""
    return html_tables(at)[0].map(lambda text: str(text).replace("▲", "").replace("▼", "").strip())


def opened(at, key: str):
    """Open the expander of ``key`` (its contents are drawn only while it is open) and rerun."""
    if not (key in at.session_state and at.session_state[key]):
        at.session_state[key] = True
        at.run()
        assert_ok(at)
    return at


def add(at, *, known: str | None = None, text: str | None = None):
    opened(at, "add_measure_open")
    if known is not None:
        at.selectbox(key="add_measure_known").set_value(known)
    if text is not None:
        next(t for t in at.text_input if t.label == "Measure (ir_measures syntax)").input(text)
    at.button(key="FormSubmitter:add_measure-Add").click().run()
    assert_ok(at)
    return at


@pytest.fixture
def leaderboard(open_app):
    return open_app()


def test_the_box_suggests_trec_eval_measures_and_adds_bpref_and_infap(leaderboard):
    at = opened(leaderboard, "add_measure_open")
    options = at.selectbox(key="add_measure_known").options
    for name in ("Bpref", "infAP", "IPrec@0.3", "11pt_avg", "ndcg_cut.10", "P.5,10", "bpref", "gm_map"):
        assert name in options
    add(at, known="Bpref")
    add(at, text="infAP")
    table = shown(at)
    expected = means(["Bpref", "infAP"])
    for system in RUNS:
        assert table.loc[system, "Bpref"] == f"{expected.at[system, 'Bpref']:.4f}"
        assert table.loc[system, "infAP"] == f"{expected.at[system, 'infAP']:.4f}"
    assert not at.error


@pytest.mark.parametrize("text, columns", [
    ("bpref", ["Bpref"]),
    ("P.5,10", ["P@5"]),  # P@10 is a default column already
    ("iprec_at_recall.0.3", ["IPrec@0.3"]),
    ("ndcg_cut.100", ["nDCG(dcg='exp-log2')@100"]),  # nDCG columns follow the sidebar's gain
])
def test_trec_eval_spellings_add_their_measures(leaderboard, text, columns):
    at = add(leaderboard, text=text)
    table = shown(at)
    expected = means(columns)
    for column in columns:
        for system in RUNS:
            assert table.loc[system, column] == f"{expected.at[system, column]:.4f}"


def test_a_bad_trec_eval_name_shows_the_metrics_error(leaderboard):
    at = add(leaderboard, text="ndcg_cut.x")
    assert len(at.error) == 1
    with pytest.raises(metrics.MetricsError) as error:
        metrics.measures.expand("ndcg_cut.x")
    assert str(error.value) in at.error[0].value


def test_compare_takes_a_trec_eval_spelling(open_app):
    at = open_app("views/compare.py")
    at.multiselect(key="cmp_systems::legal::bm25").set_value(["bm25_ce"]).run()
    at.multiselect(key="cmp_measures::exp").set_value(["bpref", "P.5,10"]).run()
    assert_ok(at)
    assert [h.value for h in at.subheader][:3] == ["Bpref", "P@5", "P@10"]
    expected = means(["Bpref", "P@5"])
    table = at.table[0].value
    assert table.loc["bm25_ce", "Mean"] == f"{expected.at['bm25_ce', 'Bpref']:.4f}"
    assert table.loc["bm25_ce", "Baseline mean"] == f"{expected.at['bm25', 'Bpref']:.4f}"
    assert at.table[1].value.loc["bm25_ce", "Mean"] == f"{expected.at['bm25_ce', 'P@5']:.4f}"

    at.multiselect(key="cmp_measures::exp").set_value(["Foo@3"]).run()
    assert_ok(at)
    assert any("unknown measure" in e.value for e in at.error)


def test_judgments_ranks_bpref_and_infap_in_a_table_of_their_own(open_app):
    at = open_app("views/judgments.py")
    assert not any("Bpref" in c for c in at.table[0].value.columns)   # the treatments: one measure
    table = next(t.value for t in at.table if "Bpref (unjudged ignored)" in t.value.columns)
    expected = means(["Bpref", "infAP"])
    for name, label in (("Bpref", "Bpref (unjudged ignored)"), ("infAP", "infAP (estimated from the judged)")):
        assert label in table.columns and f"rank ({name})" in table.columns
        values = expected[name]
        order = values.rank(ascending=False, method="min").astype(int)  # competition ranking
        for system in RUNS:
            assert table.loc[system, label] == f"{values[system]:.4f}"
            assert table.loc[system, f"rank ({name})"] == str(order[system])   # no move against another measure
    pairs = next(t.value for t in at.table if "Kendall's τ" in t.value.columns).index
    assert not any("Bpref" in p or "infAP" in p for p in pairs)


EXP_DEFAULT = [metrics.with_gain(m, "exp") for m in metrics.DEFAULT_MEASURES]


def test_the_significance_details_are_a_table_of_the_paired_tests_and_no_grid(leaderboard):
    at = opened(leaderboard, "significance_details_open")
    tests = stats.versus_baseline(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), EXP_DEFAULT), "bm25")
    details = at.table[0].value                        # the leaderboard is the page's st.html
    assert list(details.index) == list(tests["system"])
    assert list(details["Measure"]) == list(tests["measure"])
    assert list(details["p"]) == [f"{p:.4g}" for p in tests["p_value"]]
    assert list(details["p (corrected)"]) == [f"{p:.4g}" for p in tests["p_adjusted"]]
    assert list(details["Sig."]) == list(tests["marker"])
    assert not at.dataframe                            # no interactive grid to load on the first screen


@pytest.fixture
def deferred(monkeypatch):
    """{file name: the callable that writes it} of every download button whose file is written on a click."""
    files = {}
    original = MediaFileManager.add_deferred

    def capture(self, data_callable, mimetype, coordinates, file_name=None, **kwargs):
        files[file_name] = data_callable
        return original(self, data_callable, mimetype, coordinates, file_name, **kwargs)

    monkeypatch.setattr(MediaFileManager, "add_deferred", capture)
    return files


def test_the_exports_are_written_on_a_click_only_and_hold_the_leaderboard(open_app, monkeypatch, deferred):
    written = []
    for name in ("to_csv", "to_latex", "to_json"):
        function = getattr(export, name)
        monkeypatch.setattr(export, name, lambda *a, _f=function, _n=name, **k: written.append(_n) or _f(*a, **k))
    at = open_app()
    assert written == []                               # a script run writes no file
    assert all(button.proto.ignore_rerun for button in at.get("download_button"))   # and a click reruns nothing
    assert set(deferred) == {"leaderboard-legal.csv", "leaderboard-legal.tex", "leaderboard-legal.json"}
    expected = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), EXP_DEFAULT))
    body = json.loads(deferred["leaderboard-legal.json"]())
    assert body["means"] == {s: {m: float(expected.at[s, m]) for m in EXP_DEFAULT} for s in expected.index}
    csv = pd.read_csv(io.StringIO(deferred["leaderboard-legal.csv"]()), comment="#", index_col=0)
    assert list(csv.columns) == EXP_DEFAULT and sorted(csv.index) == sorted(expected.index)
    assert "nDCG(dcg='exp-log2')@10" in deferred["leaderboard-legal.tex"]()
    assert written == ["to_json", "to_csv", "to_latex"]


def test_every_export_says_what_its_markers_mean(open_app, deferred):
    """The LaTeX has ▲/▼ (blacktriangle) after values: its stamp, and the CSV's and JSON's, name the
    baseline, the test and the correction those markers come from; the JSON lists the markers."""
    at = open_app()
    at.radio(key="sig_correction").set_value("bonferroni").run()
    assert_ok(at)
    tests = stats.versus_baseline(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), EXP_DEFAULT), "bm25",
                                  correction="bonferroni")
    assert (tests["marker"] != "").any()                # there are markers to explain
    latex = deferred["leaderboard-legal.tex"]()
    assert "blacktriangle" in latex
    for text in (latex, deferred["leaderboard-legal.csv"]()):
        stamp = {line.split(":", 1)[0].lstrip("%# "): json.loads(line.split(":", 1)[1])
                 for line in text.splitlines() if line.startswith(("%", "#")) and ": " in line}
        assert stamp["baseline"] == "bm25" and stamp["test"] == "t" and stamp["correction"] == "bonferroni"
        assert "paired t-test, Bonferroni correction, p < 0.05" in stamp["markers"]
    body = json.loads(deferred["leaderboard-legal.json"]())
    assert body["stamp"]["baseline"] == "bm25" and body["stamp"]["correction"] == "bonferroni"
    marked = {(r.system, r.measure): r.marker for r in tests.itertuples() if r.marker}
    assert {(s, m): v for s, row in body["markers"].items() for m, v in row.items()} == marked


def test_the_first_screen_draws_neither_the_measure_form_nor_the_details_until_opened(leaderboard):
    """A closed expander's contents are not sent: the first screen loads no form, select box or
    text input code, and one table (the leaderboard, HTML); opening either expander draws what it holds."""
    at = leaderboard
    assert [e.label for e in at.main.expander] == ["Add a measure", "Significance details"]
    assert len(html_tables(at)) == 1 and not at.table
    assert not at.text_input and not any(s.key == "add_measure_known" for s in at.selectbox)
    assert not any(b.key == "FormSubmitter:add_measure-Add" for b in at.button)
    opened(at, "add_measure_open")
    assert any(s.key == "add_measure_known" for s in at.selectbox) and at.text_input
    opened(at, "significance_details_open")
    assert len(at.table) == 1


# ---------------------------------------------------------------- standardised scores

def z_by_hand(frame: pd.DataFrame) -> pd.DataFrame:
    """The z-scores recomputed with pandas: per topic and measure, (value - mean) / sample standard
    deviation over the reference runs (``metrics.standardise`` uses ddof=1); every reference run
    equal gives 0 (trec_eval's rule), and the frame holds the reference runs themselves."""
    grouped = frame.groupby(["qid", "measure"])["value"]
    mean, sd = grouped.transform("mean"), grouped.transform(lambda v: v.std(ddof=1))
    tied = grouped.transform(lambda v: v.max() - v.min() < 1e-12)
    return frame.assign(value=((frame["value"] - mean) / sd).where(~tied, 0.0))


def z_means(systems, measures) -> pd.DataFrame:
    """Means of the by-hand z-scores of ``systems`` against all four legal runs."""
    frame = z_by_hand(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), list(measures)))
    return frame[frame["system"].isin(systems)].groupby(["system", "measure"])["value"].mean().unstack()


REFERENCE_LINE = "z-scores against the 4 runs of legal"
STAMP_LINE = "z-scores per topic against: "


def test_standardised_leaderboard_shows_z_scores_against_the_collections_runs(open_app, deferred):
    """Two systems selected, the reference is still the collection's four runs: the table's values are
    their z-scores' means, the header names the reference, and every export's stamp lists its runs."""
    at = open_app()
    systems_box(at).set_value(["bm25", "dense"]).run()
    assert at.radio(key="scores_choice").value == "raw"
    at.radio(key="scores_choice").set_value("z").run()
    assert_ok(at)
    expected = z_means(["bm25", "dense"], EXP_DEFAULT)
    table = shown(at)
    assert sorted(table.index) == ["bm25", "dense"]
    for system in table.index:
        for measure in EXP_DEFAULT:
            assert float(table.loc[system, measure]) == pytest.approx(expected.at[system, measure], abs=6e-5)
    header = next(m.value for m in at.markdown if REFERENCE_LINE in m.value)
    assert all(name in header for name in RUNS)
    assert at.query_params["scores"] == "z"
    csv = deferred["leaderboard-legal.csv"]()
    stamp = next(line for line in csv.splitlines() if line.startswith("# scores:"))
    assert STAMP_LINE in stamp and all(name in stamp for name in RUNS)
    values = pd.read_csv(io.StringIO(csv), comment="#", index_col=0)
    for system in values.index:
        for measure in EXP_DEFAULT:
            assert values.at[system, measure] == pytest.approx(expected.at[system, measure], abs=1e-9)
    body = json.loads(deferred["leaderboard-legal.json"]())
    assert STAMP_LINE in body["stamp"]["scores"] and all(name in body["stamp"]["scores"] for name in RUNS)
    assert body["means"]["dense"][EXP_DEFAULT[0]] == pytest.approx(expected.at["dense", EXP_DEFAULT[0]], abs=1e-9)
    latex = deferred["leaderboard-legal.tex"]()
    assert any(line.startswith("%") and STAMP_LINE in line for line in latex.splitlines())


def test_standardised_leaderboard_equals_trec_eval_z(open_app, deferred, tmp_path, trec_eval_wide):
    """The page's z-score means (its CSV export, full precision) equal trec_eval 10's ``-Z``
    per-topic output averaged over the topics, with a z-score file made from the same reference
    runs (the legal collection's four): for the page's measures that trec_eval defines."""
    names = {"AP": "map", "RR": "recip_rank", "R@100": "recall_100", "P@10": "P_10"}
    qrels = LEGAL / "qrels.txt"
    zfile = tmp_path / "zscores"
    reference = reference_stats(metrics.evaluate(qrels, dict(RUNS), list(names)))
    write_zscores(reference.assign(measure=reference["measure"].map(names)), zfile)
    at = open_app()
    at.radio(key="scores_choice").set_value("z").run()
    assert_ok(at)
    page = pd.read_csv(io.StringIO(deferred["leaderboard-legal.csv"]()), comment="#", index_col=0)
    for system, run in RUNS.items():
        done = subprocess.run([str(trec_eval_wide), "-q", "-c", "-Z", str(zfile), "-m", "map", "-m", "recip_rank",
                               "-m", "recall.100", "-m", "P.10", str(qrels), str(run)],
                              capture_output=True, text=True, check=True, timeout=60)
        rows = [[part.strip() for part in line.split("\t")] for line in done.stdout.splitlines()]
        per_topic = pd.DataFrame(rows, columns=["measure", "qid", "value"]).query("qid != 'all'")
        per_topic = per_topic.assign(measure=per_topic["measure"].str.removeprefix("Z"),   # -Z names: Zmap, ...
                                     value=per_topic["value"].astype(float))
        trec = per_topic.groupby("measure")["value"].mean()
        for measure, trec_name in names.items():
            assert page.at[system, measure] == pytest.approx(trec[trec_name], abs=1e-9), (system, measure)


def test_raw_scores_stay_the_default_and_unchanged(open_app, deferred):
    at = open_app()
    assert at.radio(key="scores_choice").value == "raw"
    assert not any(REFERENCE_LINE in m.value for m in at.markdown)
    table = shown(at)
    expected = means(EXP_DEFAULT)
    for system in RUNS:
        assert table.loc[system, EXP_DEFAULT[0]] == f"{expected.at[system, EXP_DEFAULT[0]]:.4f}"
    assert "scores" not in json.loads(deferred["leaderboard-legal.json"]())["stamp"]
    assert "scores" not in at.query_params


def test_the_address_opens_the_standardised_leaderboard(open_app):
    at = open_app(query_params={"scores": "z"})
    assert at.radio(key="scores_choice").value == "z"
    assert any(REFERENCE_LINE in m.value for m in at.markdown)
