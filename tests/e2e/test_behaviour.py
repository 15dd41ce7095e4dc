"""Measure behaviour in a real browser on the legal sample: switch the scatter's measure and read
Kendall's tau from the matrix and the caption, checked against scipy on the engine's means.

README screenshots (docs/screenshots/behaviour-*.png):
``NDCG_LAB_SCREENSHOTS=1 python -m pytest tests/e2e/test_behaviour.py``."""
from __future__ import annotations

import os
import re
from pathlib import Path

from playwright.sync_api import expect
from scipy import stats as sst

import metrics
from tests.e2e.helpers import TIMEOUT, read_table

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"
EXP10 = "nDCG(dcg='exp-log2')@10"




def test_switch_measure_and_read_tau(app_server, page, open_app, wait_for_app):
    means = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", sorted(LEGAL.glob("*.run")),
                                           [EXP10, "AP", "RR", "R@100", "P@10"]))
    open_app(page, app_server)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Measure behaviour").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_role("heading", name="Measure behaviour").first.wait_for()

    # the τ matrix: the table whose rows are measures (the leaderboard's table, still on screen for a
    # moment after the click, and the page's own order table have systems for rows)
    table = main.locator('[data-testid="stTable"] table').filter(
        has=page.locator("tbody th", has_text="R@100")).first
    expect(table).to_contain_text(EXP10, timeout=TIMEOUT)
    rows = read_table(table)
    assert rows[EXP10]["R@100"] == f"{sst.kendalltau(means[EXP10], means['R@100']).statistic:.3f}"

    box = main.locator('[data-testid="stSelectbox"]').filter(has_text="y measure")
    box.scroll_into_view_if_needed()
    # The option is clicked, not typed and entered: an Enter pressed before the typed text had
    # filtered the list kept AP (the input then showed "R@100" while the page still drew AP).
    box.click()
    page.get_by_role("option", name="R@100", exact=True).click()
    wait_for_app(page)
    expect(box.get_by_role("combobox")).to_have_value("R@100", timeout=TIMEOUT)
    caption = main.locator('[data-testid="stCaptionContainer"]').filter(has_text="Mean per system under").first
    expect(caption).to_contain_text("R@100", timeout=TIMEOUT)
    tau = float(re.search(r"τ-b = (-?\d\.\d{3})", caption.inner_text()).group(1))
    assert tau == round(sst.kendalltau(means[EXP10], means["R@100"]).statistic, 3)
    assert page.locator('[data-testid="stException"]').count() == 0
    if os.environ.get("NDCG_LAB_SCREENSHOTS"):
        readme_screenshots(page, main, wait_for_app)


def readme_screenshots(page, main, wait_for_app) -> None:
    """Each view of the page, as the README shows it: the tau matrices, the two scatters and one per tab."""
    out = ROOT / "docs" / "screenshots"

    def tab(label):
        main.get_by_role("tab", name=label).click()
        wait_for_app(page)
        panel = main.locator('[role="tabpanel"]:visible').first
        for i in range(panel.locator(".js-plotly-plot").count()):
            panel.locator(".js-plotly-plot").nth(i).scroll_into_view_if_needed()
            page.wait_for_timeout(400)   # plotly draws a chart once it is in view
        page.wait_for_timeout(800)
        return panel

    panel = tab("Agreement")
    panel.locator('[data-testid="stHorizontalBlock"]').first.screenshot(path=str(out / "behaviour-tau.png"))
    for key, name in (("beh_scatter", "scatter"), ("beh_query_scatter", "per-query")):
        chart = panel.locator(f".st-key-{key}")
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(500)
        chart.screenshot(path=str(out / f"behaviour-{name}.png"))
    for label, name in (("Discriminative power", "power"), ("Topic-set size", "size"),
                        ("Incomplete judgments", "reduce"), ("Two qrels", "judges")):
        tab(label).screenshot(path=str(out / f"behaviour-{name}.png"))
