"""The Compare page (AppTest): bm25_ce against bm25 on the legal sample, and the leaderboard's markers."""
from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import html_tables

ROOT = Path(__file__).resolve().parents[2]
MEASURE = "nDCG(dcg='exp-log2')@10"  # the page's default: nDCG@10 with the sidebar's default exponential gain


def array(value) -> np.ndarray:
    """A plotly JSON array: a list, or {"dtype", "bdata"} (base64, plotly >= 6)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
    return np.asarray(value)


@pytest.fixture
def app(open_app):
    return open_app(run=False)


def test_compare_bm25_ce_against_bm25(app, legal_cli_comparison):
    at = app.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception
    assert at.selectbox(key="cmp_baseline::legal::bm25").value == "bm25"
    at.multiselect(key="cmp_systems::legal::bm25").set_value(["bm25_ce"]).run()
    assert not at.exception, at.exception

    table = at.table[0].value
    assert list(table.index) == ["bm25_ce"]
    row = table.loc["bm25_ce"]
    assert row["Δ %"].startswith("+") and float(row["Δ %"].rstrip("%")) > 5
    assert row["p"] == f"{legal_cli_comparison['p_value']:.4g}"
    assert row["p (corrected)"] == f"{legal_cli_comparison['p_adjusted']:.4g}"
    cli = legal_cli_comparison
    assert row["Wins / ties / losses"] == f"{cli['wins']} / {cli['ties']} / {cli['losses']}"
    assert row["Sig."] == "▲"
    assert any(MEASURE in h.value for h in at.subheader)

    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    bars = charts[0]["data"][0]
    assert bars["type"] == "bar" and len(bars["x"]) == 50  # one bar per query
    y = array(bars["y"])
    assert (np.diff(y) <= 0).all() and y[0] > 0 > y[-1]  # most helped first, coloured by sign
    assert bars["marker"]["color"][0] != bars["marker"]["color"][-1]
    labels = [b.label for b in at.get("download_button")]
    assert {"Export table (CSV)", "Export means (LaTeX)", "Download charts (HTML)"} <= set(labels)


def test_compare_follows_the_sidebar_test_and_handles_several_systems(app):
    app.session_state["sig_test"] = "randomization"
    app.session_state["sig_correction"] = "bonferroni"
    at = app.run()
    at.switch_page("views/compare.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="cmp_test::randomization").value == "randomization"
    table = at.table[0].value
    assert set(table.index) == {"bm25_ce", "bm25_qe", "dense"}
    p = table["p"].astype(float)
    assert table["p (corrected)"].astype(float).to_numpy() == pytest.approx((p * 3).clip(upper=1), rel=2e-3)
    assert any("Randomisation" in c.value for c in at.caption)
    # more than two systems: Tukey HSD and ranking stability are offered
    assert any("Tukey HSD" in m.value for m in at.markdown)

    # any measure string can be typed in; one that does not parse is named, the others still show
    at.multiselect(key="cmp_measures::exp").set_value([MEASURE, "P(rel=2)@5", "bogus@@"]).run()
    assert not at.exception, at.exception
    assert any("bogus" in e.value for e in at.error)
    assert [h.value for h in at.subheader][:2] == [MEASURE, "P(rel=2)@5"]


def test_leaderboard_markers_use_the_sidebar_test_and_correction(app):
    app.session_state["sig_test"] = "wilcoxon"
    app.session_state["sig_correction"] = "bh"
    at = app.run()
    assert not at.exception
    caption = at.caption[0].value
    assert "Wilcoxon signed-rank" in caption and "Benjamini-Hochberg" in caption
    tips = html_tables(at, "title")[0]
    assert tips.loc["bm25_ce"].iloc[1].startswith("Wilcoxon signed-rank vs bm25: p = ")
    assert "Benjamini-Hochberg-corrected p = " in tips.loc["bm25_ce"].iloc[1]
    assert "▲" in html_tables(at)[0].loc["bm25_ce"].iloc[1]


# --------------------------------------------------------------------------- the page's figures

def test_comparison_figures_carry_the_per_query_numbers():
    import pandas as pd

    from metrics.report.figures import compare as figs

    rows = pd.DataFrame({"qid": ["1", "2", "10"], "baseline": [0.5, 0.2, 0.4], "system": [0.4, 0.6, 0.4],
                         "text": ["a <b>", "", "c"]})
    rows["delta"] = rows["system"] - rows["baseline"]
    bars = figs.delta_bars(rows, measure="nDCG@10", baseline="bm25", system="ce")
    (trace,) = bars.data
    assert list(trace.x) == ["2", "10", "1"]  # most helped first; qids stay strings
    assert list(trace.marker.color) == [figs.BETTER, figs.TIE, figs.WORSE]
    assert [c[0] for c in trace.customdata] == ["2", "10", "1"]
    assert bars.layout.xaxis.type == "category"

    scatter = figs.paired_scatter(rows, measure="nDCG@10", baseline="bm25", system="ce")
    diagonal, points = scatter.data
    assert list(diagonal.x) == list(diagonal.y)  # y = x
    assert list(points.x) == [0.5, 0.2, 0.4] and list(points.y) == [0.4, 0.6, 0.4]
    assert "&lt;b&gt;" in points.customdata[0][3]  # topic text is escaped

    profile = pd.DataFrame({"k": [1, 2], "diff": [0.1, -0.05], "ci_low": [0.02, -0.1], "ci_high": [0.2, 0.01]})
    fig = figs.profile_figure(profile, measure_label="nDCG@k", baseline="bm25", system="ce")
    assert list(fig.data[1].y) == [0.1, -0.05]
    assert list(fig.data[1].marker.color) == [figs.BETTER, "#0072B2"]  # CI above 0 at k=1 only (Okabe-Ito blue)

    page = figs.figures_html({"Δ": bars, "scatter": scatter}, "ce vs bm25")
    assert page.count("<h2>") == 2 and page.count("plotly-") >= 1


def test_the_name_box_adds_exactly_the_measure_typed(open_app):
    """P@1 is a prefix of the suggestion P@10: typed in the box beside the picker, it is P@1; a
    trec_eval spelling adds all it stands for; a bad name is one message and nothing is added."""
    at = open_app("views/compare.py")
    box = at.text_input(key="cmp_typed::exp")
    box.input("P@1").run()
    assert not at.exception
    assert at.multiselect(key="cmp_measures::exp").value == ["nDCG(dcg='exp-log2')@10", "P@1"]
    assert [h.value for h in at.subheader][:2] == ["nDCG(dcg='exp-log2')@10", "P@1"]
    at.text_input(key="cmp_typed::exp").input("P.5,10").run()
    assert at.multiselect(key="cmp_measures::exp").value == ["nDCG(dcg='exp-log2')@10", "P@1", "P@5", "P@10"]
    at.text_input(key="cmp_typed::exp").input("P(rel=").run()
    assert not at.exception
    assert len(at.error) == 1 and "P(rel=" in at.error[0].value
    assert at.multiselect(key="cmp_measures::exp").value == ["nDCG(dcg='exp-log2')@10", "P@1", "P@5", "P@10"]


def z_by_hand(frame):
    """The z-scores recomputed with pandas: per topic and measure, (value - mean) / sample standard
    deviation (ddof=1, as ``metrics.standardise``) over the reference runs, 0 where they all tie."""
    grouped = frame.groupby(["qid", "measure"])["value"]
    mean, sd = grouped.transform("mean"), grouped.transform(lambda v: v.std(ddof=1))
    tied = grouped.transform(lambda v: v.max() - v.min() < 1e-12)
    return frame.assign(value=((frame["value"] - mean) / sd).where(~tied, 0.0))


def test_compare_tests_the_standardised_scores_when_chosen(app, monkeypatch, legal_cli_comparison):
    """z-scores against the legal collection's four runs: the means, Δ and paired test's p are those of
    ``metrics.stats.compare`` on z-scores recomputed by hand; the header and the CSV and JSON exports
    name the reference runs. Raw stays the default."""
    import pandas as pd

    import metrics
    from metrics import stats
    from metrics.report import export

    legal = ROOT / "ndcg_lab" / "sample_data" / "legal"
    runs = {path.stem: path for path in sorted(legal.glob("*.run"))}
    written = {}
    to_csv = export.to_csv
    monkeypatch.setattr(export, "to_csv", lambda table, stamp=None, **kw: written.setdefault(
        len(written), (stamp, to_csv(table, stamp, **kw)))[1])

    at = app.run()
    at.switch_page("views/compare.py").run()
    at.multiselect(key="cmp_systems::legal::bm25").set_value(["bm25_ce"]).run()
    assert at.radio(key="scores_choice").value == "raw"
    assert at.table[0].value.loc["bm25_ce", "p"] == f"{legal_cli_comparison['p_value']:.4g}"
    written.clear()
    at.radio(key="scores_choice").set_value("z").run()
    assert not at.exception, at.exception

    hand = z_by_hand(metrics.evaluate(legal / "qrels.txt", dict(runs), [MEASURE]))
    expected = stats.compare(hand[hand["system"].isin(["bm25", "bm25_ce"])], "bm25", ["bm25_ce"], [MEASURE]).iloc[0]
    row = at.table[0].value.loc["bm25_ce"]
    assert float(row["Mean"]) == pytest.approx(expected["mean"], abs=6e-5)
    assert float(row["Baseline mean"]) == pytest.approx(expected["baseline_mean"], abs=6e-5)
    assert float(row["Δ"]) == pytest.approx(expected["diff"], abs=6e-5)
    assert row["p"] == f"{expected['p_value']:.4g}" != f"{legal_cli_comparison['p_value']:.4g}"
    z_mean = hand[hand["system"] == "bm25_ce"]["value"].mean()
    assert expected["mean"] == pytest.approx(z_mean)

    header = next(m.value for m in at.markdown if "z-scores against the 4 runs of legal" in m.value)
    assert all(name in header for name in runs) and "paired tests" in header
    stamp, text = written[0]
    assert stamp["scores"].startswith("z-scores per topic against: ") and all(n in stamp["scores"] for n in runs)
    table = pd.read_csv(pd.io.common.StringIO(text), comment="#", index_col=[0, 1])
    assert table.loc[(MEASURE, "bm25_ce"), "mean"] == pytest.approx(expected["mean"], abs=1e-9)
    body = next(b for b in at.get("download_button") if b.label == "Export table (JSON)")
    assert body is not None


def test_more_queries_than_marks_draw_a_step_line_and_a_density(open_app, tmp_path):
    """Beyond MAX_MARKS queries the page draws the distribution, says so, and still lists the extremes."""
    from metrics.report.figures.compare import MAX_MARKS
    from tests.views.many_queries import home_of_two_runs

    n = MAX_MARKS + 200
    # "a" finds the relevant document at rank 1 everywhere; "b" at rank 1, 2 or 3 in turn
    home = home_of_two_runs(tmp_path, n, 3)
    at = open_app("views/compare.py", home=home)
    assert any(f"more than {MAX_MARKS:,} queries" in c.value for c in at.caption)
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    steps = charts[0]["data"]
    # b ranks the relevant document 1st, 2nd, 3rd in turn: tied on a third, hurt on two thirds
    assert [t["name"] for t in steps] == ["tied", "hurt"] and all(t["type"] == "scatter" for t in steps)
    assert [len(t["x"]) for t in steps] == [(n + 2) // 3, n - (n + 2) // 3]
    assert charts[1]["data"][0]["type"] == "heatmap"
    assert charts[1]["layout"]["title"]["text"] == f"{n} queries: 0 above the diagonal, {n - (n + 2) // 3} below it, " \
                                                   f"{(n + 2) // 3} on it"
    assert any("Hurt most" in m.value for m in at.markdown)
