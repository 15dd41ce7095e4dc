"""The research pages in Chromium, on a CT-like collection of three systems with every document
judged (made in the test, tests/views/research_inputs.py): what the pages say of how much a number
means reaches the screen. The few-systems warning and the tau interval (Measure behaviour), the
correction family chosen and stated (Compare), one measure under the treatments with Bpref and
infAP apart and the note that the treatments cannot differ (Judgments), distinct run names in the
sidebar, a dash where a value does not exist (Where it differs), and a Method part with its
sources on each page. The AppTests in tests/views/test_research.py check the same numbers."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from metrics.report.text import NAME_LIMIT
from tests.e2e.helpers import TIMEOUT, AppServer, main, no_exception, open_app, sidebar, text_of, wait_for_app
from tests.views.research_inputs import make_ct, system_name

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ct_server(tmp_path_factory):
    """A server whose workspace holds the samples and the collection ``ct`` (3 systems, all judged)."""
    home = tmp_path_factory.mktemp("research-home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("NDCG_LAB_HOME", str(home))
        make_ct(3, all_judged=True)
    server = AppServer(home=home).start()
    yield server
    server.stop()


def on(page, server: AppServer, title: str, collection: str = "ct"):
    """Open the app on ``collection``, then the page ``title`` through the sidebar; its main area."""
    open_app(page, f"{server.url}/?collection={collection}")
    sidebar(page).locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).first.click()
    wait_for_app(page)
    return main(page)


def method_text(page, area) -> str:
    """Open the page's "Method" part and return its text."""
    expander = area.locator('[data-testid="stExpander"]').filter(has_text="Method").first
    expander.locator("summary").click()
    wait_for_app(page)
    return text_of(expander)


def test_measure_behaviour_says_how_few_values_tau_takes_over_three_systems(ct_server, page):
    area = on(page, ct_server, "Measure behaviour")
    expect(area.get_by_text("Only 3 systems", exact=False).first).to_be_visible(timeout=TIMEOUT)
    warning = text_of(area.get_by_text("can take only", exact=False).first)
    assert "4 values (-1, -1/3, 1/3, 1)" in warning
    expect(area.get_by_text("interval [", exact=False).first).to_be_visible(timeout=TIMEOUT)
    method = method_text(page, area)
    assert "Kendall 1938" in method and "Voorhees & Buckley 2002" in method
    no_exception(page)


def test_compare_states_the_correction_family_and_changes_it(ct_server, page):
    area = on(page, ct_server, "Compare")
    caption = area.get_by_text("correction:", exact=False).first
    expect(caption).to_contain_text("Holm over every (system, measure) cell together", timeout=TIMEOUT)
    area.get_by_text("each measure apart", exact=False).first.click()
    wait_for_app(page)
    expect(area.get_by_text("correction:", exact=False).first).to_contain_text("Holm over each measure apart",
                                                                             timeout=TIMEOUT)
    method = method_text(page, area)
    assert "Holm 1979" in method and "Paired topics" in method
    no_exception(page)


def test_judgments_ranks_bpref_and_infap_apart_and_says_the_treatments_cannot_differ(ct_server, page):
    area = on(page, ct_server, "Judgments")
    expect(area.get_by_text("cannot differ", exact=False).first).to_be_visible(timeout=TIMEOUT)
    expect(area.locator("th").filter(has_text="Bpref (unjudged ignored)").first).to_be_visible(timeout=TIMEOUT)
    expect(area.locator("th").filter(has_text="condensed (judged only)").first).to_be_visible(timeout=TIMEOUT)
    expect(area.get_by_text("orders of the 3 systems", exact=False).first).to_be_visible(timeout=TIMEOUT)
    method = method_text(page, area)
    assert "Buckley & Voorhees 2004" in method and "Yilmaz & Aslam 2006" in method
    no_exception(page)


def test_the_sidebar_tells_three_runs_with_one_long_prefix_apart(ct_server, page):
    on(page, ct_server, "Leaderboard")
    box = sidebar(page).locator('[data-testid="stMultiSelect"]').filter(has_text="Systems").first
    chips = [label.removeprefix("Remove ") for label in box.locator("[aria-label^='Remove ']")
             .evaluate_all("buttons => buttons.map(b => b.getAttribute('aria-label'))")]
    assert len(chips) == 3 and len(set(chips)) == 3, chips
    assert all(len(chip) <= NAME_LIMIT and chip != system_name(i) and chip.endswith(system_name(i)[-4:])
               for i, chip in enumerate(chips)), chips   # cut, and cut where the names differ


def test_where_it_differs_shows_a_dash_and_its_method(ct_server, page):
    area = on(page, ct_server, "Where it differs", collection="legal")
    expect(area.locator("h2").first).to_be_visible(timeout=TIMEOUT)
    assert "None" not in text_of(area)
    method = method_text(page, area)
    assert "Efron & Tibshirani 1993" in method
    no_exception(page)
