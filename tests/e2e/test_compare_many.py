"""Compare page in a real browser with more queries than MAX_MARKS: a filled step line, a density."""
from __future__ import annotations

import re

from playwright.sync_api import expect

N = 1200
"""Queries of the collection: more than metrics.report.figures.compare.MAX_MARKS (1,000)."""
DELTAS = {0: "+0.3691", 1: "+0.0000", 2: "-0.1309"}
"""Δ nDCG@10 of b over a by qid number mod 3: a finds the relevant document at rank 2 everywhere,
b at rank 1, 2 or 3 in turn (helped, tied, hurt; 400 each)."""


def _workspace(home) -> None:
    """The collection "many" of N queries with runs a and b, written before the server starts."""
    import numpy as np
    import pandas as pd

    import metrics
    from metrics.store import Workspace

    qids = [f"q{i}" for i in range(N)]
    qrels = pd.DataFrame({"qid": qids, "docno": "rel", "rel": 1})
    a = pd.DataFrame({"qid": np.repeat(qids, 3), "docno": ["rel", "x", "y"] * N, "score": [2.0, 3.0, 1.0] * N})
    b = a.assign(score=[s for i in range(N) for s in ([3.0, 2.0, 1.0], [2.0, 3.0, 1.0], [1.0, 3.0, 2.0])[i % 3]])
    home.mkdir()
    with Workspace(home / "workspace.duckdb") as ws:
        ws.create_collection("many", metrics.read_qrels(qrels))
        ws.add_run("many", metrics.read_run(a, name="a"), name="a")
        ws.add_run("many", metrics.read_run(b, name="b"), name="b")


def test_more_queries_than_marks_draw_a_step_line_and_a_density(app_server_factory, page, open_app,
                                                                 wait_for_app, tmp_path):
    _workspace(tmp_path / "home")
    server = app_server_factory(tmp_path / "home")
    open_app(page, server.url)
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text="Compare").click()
    wait_for_app(page)
    main = page.locator('[data-testid="stMain"]')
    expect(main.locator('[data-testid="stCaptionContainer"]').filter(has_text="With more than 1,000 queries")) \
        .to_contain_text("the bars are one filled line and the scatter a density: hover names a query")

    steps = main.locator(".js-plotly-plot").filter(has_text="sorted by difference")
    steps.scroll_into_view_if_needed()
    expect(steps.locator(".scatterlayer .trace .fills .js-fill")).to_have_count(3)   # helped, tied, hurt
    expect(steps.locator(".barlayer .point")).to_have_count(0)
    expect(steps.locator(".scatterlayer .point")).to_have_count(0)

    density = main.locator(".js-plotly-plot").filter(has_text="above the diagonal")
    expect(density.locator(".gtitle")).to_have_text(
        f"{N} queries: 400 above the diagonal, 400 below it, 400 on it")
    expect(density.locator(".gtitle")).to_be_visible()
    expect(density.locator(".heatmaplayer image")).to_have_count(1)
    expect(density.locator(".scatterlayer .point")).to_have_count(0)          # no marker per query

    # hover names the query under the pointer: the helped, tied and hurt thirds, sorted most helped first
    steps.scroll_into_view_if_needed()
    plot = steps.locator(".nsewdrag").first.bounding_box()
    label = steps.locator(".hoverlayer")
    for third, remainder in enumerate((0, 1, 2)):
        page.mouse.move(plot["x"] + plot["width"] * (2 * third + 1) / 6, plot["y"] + plot["height"] / 2)
        delta = re.escape(DELTAS[remainder])
        expect(label).to_have_text(re.compile(rf"query q\d+\s*Δ = {delta}"))
        qid = int(re.search(r"query q(\d+)", label.text_content()).group(1))
        assert qid % 3 == remainder, label.text_content()

    exceptions = page.locator('[data-testid="stException"]')
    assert exceptions.count() == 0, exceptions.first.inner_text()
