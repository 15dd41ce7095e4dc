"""Compare page in a real browser: bm25_ce against bm25 on the legal sample agrees with the CLI."""
from __future__ import annotations


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

    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()
