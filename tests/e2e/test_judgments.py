"""Judgments page in a real browser on the legal sample: Judged@k chart, a rank change between
treatments of unjudged documents, and the training-triples TSV download."""
from __future__ import annotations

from pathlib import Path

from playwright.sync_api import expect

import metrics
from metrics.analysis import judgments as J
from metrics.ranking import rank
from tests.e2e.helpers import TIMEOUT, read_table

ROOT = Path(__file__).resolve().parents[2]
LEGAL = ROOT / "ndcg_lab" / "sample_data" / "legal"




def test_judgments_page_chart_rank_change_and_tsv_download(app_server, page, open_app, wait_for_app):
    qrels = metrics.read_qrels(LEGAL / "qrels.txt")
    ranked = {p.stem: rank(metrics.read_run(p), qrels) for p in sorted(LEGAL.glob("*.run"))}
    expected_tsv = J.training_set(qrels, ranked, depth=20, per_query=10, min_grade=1).to_tsv()
    measure = "nDCG(dcg='exp-log2',judged_only=True)@10"
    condensed = metrics.means(metrics.evaluate(qrels, sorted(LEGAL.glob("*.run")), [measure]))[measure]

    open_app(page, app_server)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Judgments").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_role("heading", name="Judgments").first.wait_for()

    # the Judged@k chart: one line per system
    chart = main.locator(".js-plotly-plot").filter(has_text="Judged@k").first
    chart.scroll_into_view_if_needed()
    chart.locator(".scatterlayer .trace").first.wait_for()
    assert chart.locator(".scatterlayer .trace").count() == 4

    # the strategy table: the engine's condensed values and dense's climb over bm25_qe
    table = main.locator('[data-testid="stTable"] table').first
    expect(table).to_contain_text("condensed (judged only)", timeout=TIMEOUT)
    rows = read_table(table)
    for system, value in condensed.items():
        assert rows[system]["condensed (judged only)"] == f"{value:.4f}"
    assert rows["dense"]["rank (condensed)"] == "3 ▲1"
    assert rows["bm25_qe"]["rank (condensed)"] == "4 ▼1"
    expect(main.locator('[data-testid="stAlert"]').filter(has_text="Judged@10 = 0.862").first).to_be_visible()

    # the training triples, downloaded through the browser
    main.get_by_role("tab", name="Hard negatives").click()
    wait_for_app(page)
    button = main.locator('[data-testid="stDownloadButton"]').filter(has_text="Download triples (TSV)")
    button.scroll_into_view_if_needed()
    with page.expect_download(timeout=TIMEOUT) as info:
        button.locator("button").click()
    download = info.value
    assert download.suggested_filename == "negatives-legal-top20-n10-g1.tsv"
    text = Path(download.path()).read_text(encoding="utf-8")
    assert text.splitlines()[0] == "qid\tpositive_docno\tnegative_docno"
    assert text == expected_tsv

    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()
