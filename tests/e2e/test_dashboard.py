"""The dashboard end to end: `streamlit run app.py` driven by Debian's headless Chromium.

Every expected number is computed here with ``metrics.evaluate`` on the same files the browser
uploads. One server serves the module (its own workspace); the tests that restart a server or
need the server's very first request get one of their own from ``app_server_factory``.
README screenshots: ``NDCG_LAB_SCREENSHOTS=1 python -m pytest tests/e2e/test_dashboard.py -k readme``.
"""
from __future__ import annotations

import gzip
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import numpy as np
import pytest
from playwright.sync_api import expect

import metrics
from tests.e2e.helpers import (
    LEADERBOARD,
    LEGAL,
    RUNS_LABEL,
    TIMEOUT,
    go_to,
    main,
    open_expander,
    read_leaderboard,
    runs_table,
    screenshot_dir,
    sidebar,
    upload,
)

EXP_DEFAULT = [metrics.with_gain(m, "exp") for m in metrics.DEFAULT_MEASURES]
LINEAR_DEFAULT = [metrics.with_gain(m, "linear") for m in metrics.DEFAULT_MEASURES]


# --------------------------------------------------------------------------- small data

def write_collection(folder: Path, seed: int = 7) -> dict[str, Path]:
    """A tiny graded collection (grades 0-3, so exponential and linear gain differ) and two runs,
    one gzipped: {"qrels", "alpha", "beta"} -> path."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    qrels, runs = [], {"alpha": [], "beta": []}
    for q in range(1, 9):
        docs = [f"D{q}-{d:02d}" for d in range(30)]
        grades = rng.choice(4, size=len(docs), p=[0.55, 0.2, 0.15, 0.1])
        qrels += [f"q{q} 0 {doc} {grade}" for doc, grade in zip(docs, grades)]
        for name, skill in (("alpha", 1.5), ("beta", 0.5)):
            scores = grades * skill + rng.normal(0, 1, len(docs))
            order = np.argsort(-scores, kind="stable")[:20]
            runs[name] += [f"q{q} Q0 {docs[i]} {r + 1} {scores[i]:.6f} {name}" for r, i in enumerate(order)]
    paths = {"qrels": folder / "mini.qrels", "alpha": folder / "alpha.run", "beta": folder / "beta.run.gz"}
    paths["qrels"].write_text("\n".join(qrels) + "\n")
    paths["alpha"].write_text("\n".join(runs["alpha"]) + "\n")
    paths["beta"].write_bytes(gzip.compress(("\n".join(runs["beta"]) + "\n").encode()))
    return paths


def expected_means(files: dict[str, Path], measures: list[str]):
    frame = metrics.evaluate(files["qrels"], [files["alpha"], files["beta"]], measures)
    return metrics.means(frame)


# --------------------------------------------------------------------------- page helpers


def select_collection(page, wait_for_app, name: str) -> None:
    box = sidebar(page).locator('[data-testid="stSelectbox"]').filter(has_text="Collection")
    box.click()
    page.get_by_role("option", name=name, exact=True).click()
    wait_for_app(page)
    expect(box.get_by_role("combobox")).to_have_value(name, timeout=TIMEOUT)


def create_collection(page, wait_for_app, name: str, qrels: Path) -> None:
    """Data page: "New collection" with a name and a qrels file; the app then opens it."""
    go_to(page, wait_for_app, "Data")
    expander = main(page).locator('[data-testid="stExpander"]').filter(has_text="New collection")
    open_expander(page, expander)
    field = expander.get_by_label("Collection name")
    field.fill(name)
    field.press("Enter")
    wait_for_app(page)
    upload(page, wait_for_app, "Qrels (qid iter docno rel)", [qrels])
    expander.get_by_role("button", name="Create collection").click()
    wait_for_app(page)
    expect(main(page)).to_contain_text(f"Created collection {name}", timeout=TIMEOUT)
    expect(main(page)).to_contain_text(f"Collection: {name}", timeout=TIMEOUT)


def assert_leaderboard(page, expected) -> None:
    shown = read_leaderboard(page)
    for system in expected.index:
        assert system in shown, f"{system} missing from the leaderboard: {sorted(shown)}"
        assert list(shown[system]) == list(expected.columns)
        for measure in expected.columns:
            assert shown[system][measure] == f"{expected.at[system, measure]:.4f}", (system, measure)


# --------------------------------------------------------------------------- tests

def test_first_screen_is_the_sample_leaderboard(module_app_server, page, open_app):
    value = metrics.means(metrics.evaluate(LEGAL / "qrels.txt", LEGAL / "bm25_ce.run",
                                           ["nDCG(dcg='exp-log2')@10"])).iloc[0, 0]

    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    open_app(page, module_app_server)

    table = main(page).locator(LEADERBOARD).first
    expect(table).to_contain_text("nDCG(dcg='exp-log2')@10", timeout=TIMEOUT)
    expect(table).to_contain_text(f"{value:.4f}", timeout=TIMEOUT)
    assert read_leaderboard(page)["bm25_ce"]["nDCG(dcg='exp-log2')@10"] == f"{value:.4f}"
    assert page.locator('[data-testid="stException"]').count() == 0
    # the page asks nothing of another host (a Material page icon made every browser fetch its
    # favicon from fonts.gstatic.com); the favicon is the package's own
    host = urlsplit(module_app_server).hostname
    assert [url for url in asked if urlsplit(url).scheme in ("http", "https", "ws", "wss")
            and urlsplit(url).hostname != host] == []
    icon = page.locator('link[rel~="icon"]').first.get_attribute("href") or ""
    assert urlsplit(urljoin(page.url, icon)).hostname == host


def test_uploaded_collection_and_runs_then_gain_switch(module_app_server, page, open_app, wait_for_app,
                                                      tmp_path):
    files = write_collection(tmp_path / "mini")
    open_app(page, module_app_server)

    create_collection(page, wait_for_app, "mini", files["qrels"])
    upload(page, wait_for_app, RUNS_LABEL, [files["alpha"], files["beta"]])
    expect(main(page)).to_contain_text("Runs in mini (2)", timeout=TIMEOUT)
    for name in ("alpha.run", "beta.run.gz"):
        expect(runs_table(page)).to_contain_text(name, timeout=TIMEOUT)

    go_to(page, wait_for_app, "Leaderboard")
    expect(main(page)).to_contain_text("Collection mini", timeout=TIMEOUT)
    exp_means = expected_means(files, EXP_DEFAULT)
    assert_leaderboard(page, exp_means)
    assert set(read_leaderboard(page)) == {"alpha", "beta"}

    sidebar(page).get_by_text("Linear (rel, as trec_eval)").click()
    wait_for_app(page)
    table = main(page).locator(LEADERBOARD).first
    expect(table).to_contain_text("nDCG@10", timeout=TIMEOUT)
    expect(table).not_to_contain_text("exp-log2", timeout=TIMEOUT)
    linear_means = expected_means(files, LINEAR_DEFAULT)
    assert_leaderboard(page, linear_means)
    # the grades reach 3, so the gain moves nDCG (and the test would notice a stale table)
    assert linear_means.at["alpha", "nDCG@10"] != pytest.approx(exp_means.at["alpha", "nDCG(dcg='exp-log2')@10"])


def test_malformed_run_is_reported_and_uploads_survive_reload_and_restart(app_server_factory, page, open_app,
                                                                         wait_for_app, tmp_path):
    files = write_collection(tmp_path / "mini", seed=11)
    broken = tmp_path / "broken.run"
    lines = files["alpha"].read_text().splitlines()
    lines[4] = "q1 Q0 D1-99 5"  # line 5: four columns
    broken.write_text("\n".join(lines) + "\n")
    with pytest.raises(metrics.MetricsError) as error:
        metrics.read_run(broken)
    message = str(error.value)
    assert message.startswith("broken.run line 5: ")

    server = app_server_factory()
    open_app(page, server.url)
    create_collection(page, wait_for_app, "mini", files["qrels"])
    upload(page, wait_for_app, RUNS_LABEL, [files["alpha"], files["beta"]])
    expect(main(page)).to_contain_text("Runs in mini (2)", timeout=TIMEOUT)

    upload(page, wait_for_app, RUNS_LABEL, [broken])
    alert = main(page).locator('[data-testid="stAlert"]').filter(has_text="broken.run")
    expect(alert).to_contain_text(message, timeout=TIMEOUT)
    for name in ("alpha.run", "beta.run.gz"):
        expect(runs_table(page)).to_contain_text(name, timeout=TIMEOUT)
    expect(main(page)).to_contain_text("Runs in mini (2)", timeout=TIMEOUT)

    def still_there():
        select_collection(page, wait_for_app, "mini")
        go_to(page, wait_for_app, "Data")
        expect(main(page)).to_contain_text("Runs in mini (2)", timeout=TIMEOUT)
        go_to(page, wait_for_app, "Leaderboard")
        assert_leaderboard(page, expected_means(files, EXP_DEFAULT))

    page.reload(wait_until="domcontentloaded")
    wait_for_app(page)
    still_there()

    page.goto("about:blank")  # no tab reconnecting to the new process behind the test's back
    server.restart()
    open_app(page, server.url)
    still_there()


def test_a_deep_link_as_the_servers_first_request_has_the_sidebar(app_server_factory, page, open_app):
    server = app_server_factory()

    open_app(page, f"{server.url}/curves")  # waits until the script run has finished

    assert sidebar(page).get_by_text("Collection", exact=True).count() == 1, "no sidebar selection"
    expect(main(page).locator(".js-plotly-plot")).to_be_visible()


def test_readme_screenshots(app_server, visitor, open_app, wait_for_app):
    """The README's views at 1400x900 on the sample collection: the leaderboard table and the curves
    plot render. Saved under test-artifacts/readme/; with NDCG_LAB_SCREENSHOTS=1 they replace
    docs/screenshots (a server with the viewer toolbar, so no "Deploy" button; the navigation's
    Material icons come with Streamlit, no emoji font needed)."""
    out = screenshot_dir()
    page = visitor(viewport={"width": 1400, "height": 900})
    open_app(page, app_server)
    expect(main(page).locator(LEADERBOARD).first).to_be_visible(timeout=TIMEOUT)
    page.mouse.move(900, 850)
    page.screenshot(path=str(out / "leaderboard.png"))
    go_to(page, wait_for_app, "Curves")
    expect(main(page).locator(".js-plotly-plot .scatterlayer .trace").first).to_be_visible(timeout=TIMEOUT)
    page.mouse.move(900, 850)
    page.wait_for_timeout(500)  # plotly's transition
    page.screenshot(path=str(out / "curves.png"))
