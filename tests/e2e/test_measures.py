"""Any measure name in the browser: a trec_eval spelling typed into the Leaderboard's box shows
the value ``metrics.evaluate`` computes, and the Curves page draws the precision-recall curve
with IPrec at a recall level beside 11pt_avg (expected numbers from the sample's files)."""
from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

import metrics
from tests.e2e.helpers import LEADERBOARD, TIMEOUT, main, read_leaderboard

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
RUNS = {path.stem: path for path in sorted(LEGAL.glob("*.run"))}


def expected(measures):
    return metrics.means(metrics.evaluate(LEGAL / "qrels.txt", dict(RUNS), list(measures)))


def test_typing_bpref_adds_trec_evals_bpref_and_the_curves_page_draws_iprec(app_server, page, open_app,
                                                                             wait_for_app):
    open_app(page, app_server)
    box = main(page).locator('[data-testid="stExpander"]').filter(has_text="Add a measure")
    box.locator("summary").click()
    wait_for_app(page)         # the opening reruns the page, which draws the form
    field = box.get_by_label("Measure (ir_measures syntax)", exact=True).and_(box.locator("input"))
    field.fill("bpref")
    box.get_by_role("button", name="Add").click()
    wait_for_app(page)
    values = expected(["Bpref", "IPrec@0.3", "11pt_avg"])
    header = main(page).locator(LEADERBOARD).first.locator("thead")
    expect(header).to_contain_text("Bpref", timeout=TIMEOUT)
    shown = read_leaderboard(page)
    for system in RUNS:
        assert shown[system]["Bpref"] == f"{values.at[system, 'Bpref']:.4f}"
    assert page.locator('[data-testid="stException"]').count() == 0

    known = box.locator('[data-testid="stSelectbox"]').filter(has_text="Known measures")
    known.locator("input").fill("P.5,10")  # a suggestion, or any name: trec_eval's two cut-offs
    page.keyboard.press("Enter")
    box.get_by_role("button", name="Add").click()
    wait_for_app(page)
    expect(header).to_contain_text("P@5", timeout=TIMEOUT)
    shown = read_leaderboard(page)
    p5 = expected(["P@5"])
    for system in RUNS:
        assert shown[system]["P@5"] == f"{p5.at[system, 'P@5']:.4f}"

    field.fill("ndcg_cut.x")  # a bad name: the MetricsError's line, no traceback
    box.get_by_role("button", name="Add").click()
    wait_for_app(page)
    expect(main(page).locator('[data-testid="stAlertContentError"]').first).to_contain_text("ndcg_cut.x",
                                                                                           timeout=TIMEOUT)
    assert page.locator('[data-testid="stException"]').count() == 0

    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Curves").first.click()
    wait_for_app(page)
    main(page).get_by_text("IPrec (precision-recall)").click()
    wait_for_app(page)
    chart = main(page).locator('[data-testid="stPlotlyChart"]').first
    expect(chart).to_contain_text("IPrec (interpolated precision)", timeout=TIMEOUT)
    expect(chart).to_contain_text("recall", timeout=TIMEOUT)
    shown = read_leaderboard(page, '[data-testid="stTable"] table')
    for system in RUNS:
        assert shown[system]["IPrec@0.3"] == f"{values.at[system, 'IPrec@0.3']:.4f}"
        assert shown[system]["11pt_avg"] == f"{values.at[system, '11pt_avg']:.4f}"
    assert page.locator('[data-testid="stException"]').count() == 0
