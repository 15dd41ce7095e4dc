"""Compare page in a real browser: bm25_ce against bm25 on the legal sample agrees with the CLI."""
from __future__ import annotations

from pathlib import Path


def test_compare_page_agrees_with_the_cli(app_server, page, open_app, wait_for_app, legal_cli_comparison):
    expected = legal_cli_comparison
    open_app(page, app_server)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Compare").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_role("heading", name="Compare systems").wait_for()

    assert main.get_by_role("combobox", name="Baseline").input_value() == "bm25"  # the sidebar's baseline
    systems = main.locator('[data-testid="stMultiSelect"]').filter(has_text="Systems")
    for other in ("bm25_qe", "dense"):
        systems.get_by_role("button", name=f"Remove {other}").click()
        wait_for_app(page)
    assert systems.get_by_role("button", name="Remove bm25_ce").count() == 1

    table = main.locator('[data-testid="stTable"] table').first
    headers = [h.strip() for h in table.locator("thead th").all_inner_texts()]
    rows = table.locator("tbody tr")
    assert rows.count() == 1
    cells = dict(zip(headers, [rows.first.locator("th").inner_text().strip(),
                               *[c.strip() for c in rows.first.locator("td").all_inner_texts()]]))
    assert cells["System"] == "bm25_ce"
    assert cells["Δ %"].startswith("+") and float(cells["Δ %"].rstrip("%")) > 5
    assert cells["p"] == f"{expected['p_value']:.4g}"
    assert cells["p (corrected)"] == f"{expected['p_adjusted']:.4g}"
    assert cells["Sig."] == "▲"

    chart = main.locator(".js-plotly-plot").first
    chart.scroll_into_view_if_needed()
    chart.locator(".barlayer .point").first.wait_for()
    assert chart.locator(".barlayer .point").count() == 50  # one bar per query

    # the per-query export is made on the click: its rows are the 50 queries, bm25_ce's mean the table's
    button = main.get_by_role("button", name="Per-query Δ (CSV)")
    button.scroll_into_view_if_needed()
    # the app idle at the click: once, on a machine at load 5, the download did not come within 30 s
    # (cause not found; the suspect is a run in flight, which registers the button's data anew)
    wait_for_app(page)
    with page.expect_download() as download:
        button.click()
    lines = [line for line in Path(download.value.path()).read_text().splitlines() if not line.startswith("#")]
    header = lines[0].split(",")
    assert header[:4] == ["qid", "bm25", "bm25_ce", "delta"] and len(lines) == 51
    ce = [float(line.split(",")[header.index("bm25_ce")]) for line in lines[1:]]
    assert f"{sum(ce) / len(ce):.4f}" == cells["Mean"]

    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()


def test_helped_and_hurt_tables_fit_their_column_at_1400_px(app_server, page, open_app, wait_for_app):
    """The Helped most / Hurt most tables show every column, Δ included, without a horizontal scroll,
    one line a row (the page's viewport is 1400 px wide)."""
    from pathlib import Path

    open_app(page, app_server)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Compare").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    main.get_by_text("Helped most", exact=False).first.scroll_into_view_if_needed()
    grids = main.locator('[data-testid="stDataFrame"]:visible')   # not the charts' closed data tables
    grids.first.wait_for()
    assert grids.count() >= 2
    for i in range(2):
        grid = grids.nth(i)
        grid.scroll_into_view_if_needed()
        scroller = grid.locator(".dvn-scroller").first
        widths = scroller.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
        assert widths[0] <= widths[1] + 1, widths   # nothing cut: no horizontal scroll
    out = Path(__file__).resolve().parents[2] / "test-artifacts"
    out.mkdir(exist_ok=True)
    grids.first.screenshot(path=str(out / "compare-helped-most.png"))
