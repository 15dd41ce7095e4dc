"""Fusion page (AppTest): the fused row is the library's, significance rows are there, storing keeps the
recipe, the sweep plots and shows the 2-fold split."""
from __future__ import annotations

from pathlib import Path

import pytest

import metrics
from metrics.analysis import fusion
from tests.conftest import assert_ok, html_tables

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
NDCG10 = "nDCG(dcg='exp-log2')@10"


@pytest.fixture
def page(open_app):
    return open_app("views/fusion.py")


def _expected(method="rrf", **options):
    runs = [metrics.read_run(LEGAL / "bm25.run", name="bm25"), metrics.read_run(LEGAL / "bm25_ce.run", name="bm25_ce")]
    fused, recipe = fusion.fuse(runs, method, **options)
    frame = metrics.evaluate(LEGAL / "qrels.txt", {recipe.label(): fused}, [NDCG10])
    return recipe.label(), float(frame["value"].mean())


def _board(at):
    (table,) = html_tables(at)
    return table


def test_fused_row_first_with_the_librarys_value(page):
    name, value = _expected("rrf", k=60)
    board = _board(page)
    assert board.index[0] == name == "rrf(k=60) of bm25, bm25_ce"
    assert float(str(board.loc[name, NDCG10]).split()[0]) == pytest.approx(value, abs=5e-5)
    versus = page.dataframe[0].value
    first = metrics.with_gain(metrics.DEFAULT_MEASURES[0], "exp")   # the best input is chosen by the first column
    inputs = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", {n: LEGAL / f"{n}.run" for n in ("bm25", "bm25_ce")},
                                            [first]))[first]
    assert set(versus["against"]) == {"baseline: bm25", f"best input: {inputs.idxmax()}"}
    # the paired t-test (the sidebar's default) of the fused run against the baseline, from scipy
    from scipy.stats import ttest_rel
    runs = {"bm25": LEGAL / "bm25.run", "bm25_ce": LEGAL / "bm25_ce.run"}
    fused, _ = fusion.fuse([metrics.read_run(p, name=n) for n, p in runs.items()], "rrf", k=60)
    per_query = metrics.evaluate(LEGAL / "qrels.txt", {"fused": fused, "bm25": runs["bm25"]}, [NDCG10])
    wide = per_query.pivot_table(index="qid", columns="system", values="value")
    row = versus[(versus["against"] == "baseline: bm25") & (versus["measure"] == NDCG10)].iloc[0]
    assert row["p_value"] == pytest.approx(ttest_rel(wide["fused"], wide["bm25"]).pvalue, rel=1e-9)


def test_method_norm_and_depth_change_the_fused_run(page):
    page.selectbox(key="fuse_method").set_value("combmnz").run()
    page.selectbox(key="fuse_norm").set_value("zscore").run()
    page.number_input(key="fuse_depth").set_value(20).run()
    assert_ok(page)
    name, value = _expected("combmnz", norm="zscore", depth=20)
    board = _board(page)
    assert board.index[0] == name
    assert float(str(board.loc[name, NDCG10]).split()[0]) == pytest.approx(value, abs=5e-5)


def test_storing_keeps_the_recipe_and_the_run_reaches_the_leaderboard(page):
    (store,) = [b for b in page.button if b.label.startswith("Store the fused run")]
    store.click().run()
    assert_ok(page)
    from ndcg_lab.ui import state
    (fused_info,) = [r for r in state.workspace().runs("legal") if r.recipe]
    assert fused_info.name == "rrf(k=60) of bm25, bm25_ce"
    assert fused_info.recipe["method"] == "rrf" and fused_info.recipe["params"]["k"] == 60.0
    assert [i["name"] for i in fused_info.recipe["inputs"]] == ["bm25", "bm25_ce"]
    assert any("Stored in" in s.value for s in page.success)
    page.switch_page("views/leaderboard.py").run()
    assert_ok(page)
    assert fused_info.name in html_tables(page)[0].index
    stamp = state.stamp(page.session_state["_selection"], [NDCG10])   # what every export carries
    assert stamp["fusion_recipes"] == {fused_info.name: fused_info.recipe}


def test_sweep_plots_and_shows_the_two_fold_split(page):
    page.toggle(key="sweep_on").set_value(True).run()
    assert_ok(page)
    assert any("overfits" in w.value for w in page.warning)
    folds = next(d.value for d in page.dataframe if "fold" in d.value.columns)   # not the chart's data
    assert folds["fold"].tolist() == ["1", "2", "cross-validated", "in-sample"]
    assert len(page.get("plotly_chart")) == 1


def test_weighted_sum_sweeps_the_weights(page):
    page.selectbox(key="fuse_method").set_value("wsum").run()
    assert_ok(page)
    page.number_input(key="fuse_w::bm25").set_value(0.7).run()
    page.number_input(key="fuse_w::bm25_ce").set_value(0.3).run()
    assert_ok(page)
    name, value = _expected("wsum", norm="minmax", weights=[0.7, 0.3])
    board = _board(page)
    assert board.index[0] == name
    assert float(str(board.loc[name, NDCG10]).split()[0]) == pytest.approx(value, abs=5e-5)
    page.toggle(key="sweep_on").set_value(True).run()
    assert_ok(page)
    folds = next(d.value for d in page.dataframe if "fold" in d.value.columns)   # not the chart's data
    assert set(folds["setting"].iloc[:2]) <= {f"{w / 10:g},{1 - w / 10:g}" for w in range(11)}
