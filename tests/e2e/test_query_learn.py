"""Learn NDCG and the Query explorer in a real browser."""
import re

from tests.e2e.helpers import no_exception


def test_learn_ideal_order_and_query_table(app_server, page, open_app, wait_for_app):
    open_app(page, f"{app_server}/learn")
    no_exception(page)
    summary = page.get_by_text(re.compile(r"nDCG@10 = [0-9.]+ = DCG@10"))
    assert "nDCG@10 = 1.0000" not in summary.inner_text()  # the default list is not ideal

    page.get_by_role("button", name="Ideal order").click()
    wait_for_app(page)
    no_exception(page)
    assert re.search(r"nDCG@10 = 1\.0000", summary.inner_text())
    assert "g=3%2C3%2C2" in page.url or "g=3,3,2" in page.url  # the URL holds the new order

    open_app(page, f"{app_server}/query?qid=1")
    no_exception(page)
    table = page.locator('[data-testid="stTable"]').filter(has_text="nDCG@rank").first
    table.wait_for()
    rows = table.locator("tbody tr")
    assert rows.count() == 10
    assert rows.first.locator("td, th").nth(1).inner_text().startswith("LEG-")
    assert page.get_by_text(re.compile(r"identical to the leaderboard's value")).count() == 1
