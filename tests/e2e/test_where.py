"""Where it differs in a real browser: pick bm25 and bm25_ce on the legal sample and read the share of
the headroom reached, computed here with metrics.analysis.headroom on the sample files the server loads.

The README screenshot: ``NDCG_LAB_SCREENSHOTS=1 python -m pytest tests/e2e/test_where.py`` writes
docs/screenshots/where.png (else test-artifacts/readme/where.png).
"""
from __future__ import annotations

from playwright.sync_api import expect

from metrics.analysis.headroom import headroom
from tests.e2e.helpers import LEGAL, TIMEOUT, main, screenshot_dir


def _pick(page, wait_for_app, label: str, option: str) -> None:
    box = main(page).locator('[data-testid="stSelectbox"]').filter(has_text=label)
    box.click()
    page.get_by_role("option", name=option, exact=True).click()
    wait_for_app(page)
    expect(box.get_by_role("combobox")).to_have_value(option, timeout=TIMEOUT)


def test_pick_the_pair_and_read_the_headroom_share(app_server, page, open_app, wait_for_app):
    expected = headroom(LEGAL / "qrels.txt", LEGAL / "bm25.run", LEGAL / "bm25_ce.run",
                        measure="nDCG(dcg='exp-log2')@10").summary   # the sidebar's default gain
    open_app(page, f"{app_server}/where")
    expect(main(page).locator("h2").first).to_contain_text("Where it differs", timeout=TIMEOUT)
    _pick(page, wait_for_app, "Re-ranked / other run (B)", "bm25_qe")   # not a re-ranking of bm25
    expect(main(page)).to_contain_text("it is no re-ranking of it", timeout=TIMEOUT)
    _pick(page, wait_for_app, "Re-ranked / other run (B)", "bm25_ce")

    metric = main(page).locator('[data-testid="stMetric"]').filter(has_text="Share of the headroom reached")
    expect(metric.locator('[data-testid="stMetricValue"]')).to_have_text(f"{100 * expected['share']:.1f}%",
                                                                         timeout=TIMEOUT)
    expect(main(page)).to_contain_text("re-ranks bm25's top 100 (detected", timeout=TIMEOUT)
    assert page.locator('[data-testid="stException"]').count() == 0

    out = screenshot_dir()
    expect(main(page).locator(".js-plotly-plot").first).to_be_visible(timeout=TIMEOUT)
    main(page).locator("h2").first.click()   # no focus ring on the last selectbox
    page.set_viewport_size({"width": 1400, "height": 900})
    page.mouse.move(1390, 890)
    page.wait_for_timeout(500)  # plotly's transition
    page.screenshot(path=str(out / "where.png"))
