"""In a real browser: typing a measure and pressing Enter adds that measure (not every suggestion
that matches it), and a reload keeps what the address says (collection, systems, baseline, gain)."""
from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.helpers import TIMEOUT, main, sidebar


def measure_headings(page) -> list[str]:
    """The Compare page's subheaders above "Query by query": one per measure compared."""
    texts = [t.strip() for t in main(page).locator('[data-testid="stHeading"] h3').all_inner_texts()]
    return texts[:texts.index("Query by query")] if "Query by query" in texts else texts


def test_typing_ap_and_enter_adds_ap_and_the_box_adds_what_is_typed(app_server, page, open_app,
                                                                    wait_for_app):
    open_app(page, f"{app_server}/compare")
    expect(main(page).get_by_role("heading", name="Compare systems")).to_be_visible(timeout=TIMEOUT)
    assert measure_headings(page) == ["nDCG(dcg='exp-log2')@10"]
    box = main(page).locator('[data-testid="stMultiSelect"]').filter(has_text="Measures")
    box.locator("input").click()
    page.keyboard.type("AP")
    expect(page.get_by_role("option").first).to_have_text("AP", timeout=TIMEOUT)
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    wait_for_app(page)
    assert measure_headings(page) == ["nDCG(dcg='exp-log2')@10", "AP"]       # one measure added, not 14
    assert box.get_by_role("button", name="Remove AP").count() == 1
    expect(main(page).get_by_text("6 tested comparison(s)", exact=False)).to_be_visible()  # 3 systems x 2 measures

    # a name whose prefix is a suggestion (P@1 of P@10): the box beside adds it as typed
    field = main(page).get_by_label("Add a measure by name", exact=True).and_(main(page).locator("input"))
    field.fill("P@1")
    field.press("Enter")
    wait_for_app(page)
    assert measure_headings(page) == ["nDCG(dcg='exp-log2')@10", "AP", "P@1"]
    assert page.locator('[data-testid="stException"]').count() == 0


def shown_selection(page) -> dict:
    """What the sidebar shows: collection, systems (chips in order), baseline, gain."""
    bar = sidebar(page)
    systems = bar.locator('[data-testid="stMultiSelect"]').filter(has_text="Systems")
    gain = bar.locator('[data-testid="stRadio"]').filter(has_text="Gain")
    return {
        "collection": bar.locator('[data-testid="stSelectbox"]').filter(has_text="Collection")
                         .get_by_role("combobox").input_value(),
        "systems": [label.removeprefix("Remove ") for label in systems.locator("[aria-label^='Remove ']")
                    .evaluate_all("buttons => buttons.map(b => b.getAttribute('aria-label'))")],
        "baseline": bar.locator('[data-testid="stSelectbox"]').filter(has_text="Baseline")
                       .get_by_role("combobox").input_value(),
        "gain": gain.locator("input[type=radio]:checked").evaluate("i => i.closest('label').innerText").strip(),
    }


def test_a_reload_and_a_link_keep_the_collection_systems_baseline_and_gain(app_server, page, open_app,
                                                                           wait_for_app):
    open_app(page, app_server)
    bar = sidebar(page)
    box = bar.locator('[data-testid="stSelectbox"]').filter(has_text="Collection")
    box.click()
    page.get_by_role("option", name="web", exact=True).click()
    wait_for_app(page)
    bar.get_by_text("Linear (rel, as trec_eval)").click()
    wait_for_app(page)
    bar.locator('[data-testid="stMultiSelect"]').filter(has_text="Systems") \
        .get_by_role("button", name="Remove lexical").click()
    wait_for_app(page)
    before = shown_selection(page)
    assert before["collection"] == "web" and "lexical" not in before["systems"]
    assert before["gain"] == "Linear (rel, as trec_eval)"

    page.reload(wait_until="domcontentloaded")                 # F5: a new session, the same address
    wait_for_app(page)
    assert shown_selection(page) == before
    expect(main(page).get_by_text("gain: Linear (rel, as trec_eval)")).to_be_visible(timeout=TIMEOUT)

    # a link made by hand (or by another user) shows what it says, baseline included
    open_app(page, f"{app_server}/?collection=legal&systems=bm25&systems=dense&baseline=dense&gain=exp")
    after = shown_selection(page)
    assert after == {"collection": "legal", "systems": ["bm25", "dense"], "baseline": "dense",
                     "gain": "Exponential (2^rel - 1)"}
    expect(main(page).get_by_text("baseline: dense")).to_be_visible(timeout=TIMEOUT)
    assert page.locator('[data-testid="stException"]').count() == 0
