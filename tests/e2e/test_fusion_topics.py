"""TREC XML topics reach the Query explorer, and a fused run reaches the Leaderboard, in a real browser.

The expected leaderboard cell is computed here with metrics.analysis.fusion and metrics.evaluate on the
sample files the server loads.
"""
from __future__ import annotations

import re

from playwright.sync_api import expect

import metrics
from metrics.analysis import fusion
from tests.e2e.helpers import LEGAL, TIMEOUT, main, no_exception, read_leaderboard, upload

NDCG10 = metrics.with_gain("nDCG@10", "exp")


def test_trec_xml_topics_show_in_the_query_explorer(module_app_server, page, open_app, wait_for_app, tmp_path):
    topics = tmp_path / "topics.xml"
    topics.write_text('<topics task="legal">\n<topic number="1">zebra crossing negligence</topic>\n'
                      '<topic number="2">parking garage assault</topic>\n</topics>\n')
    open_app(page, f"{module_app_server}/data")
    no_exception(page)
    expander = main(page).locator('[data-testid="stExpander"]').filter(has_text="topics and document titles")
    expander.locator("summary").click()
    upload(page, wait_for_app, "Topics (TREC SGML or XML", [topics])
    expect(main(page)).to_contain_text("Stored topics from topics.xml (2 rows)", timeout=TIMEOUT)

    open_app(page, f"{module_app_server}/query?qid=1")
    no_exception(page)
    expect(main(page).locator("h3").filter(has_text="Query 1")).to_contain_text("zebra crossing negligence",
                                                                                 timeout=TIMEOUT)


def test_a_fused_run_reaches_the_leaderboard(module_app_server, page, open_app, wait_for_app):
    runs = [metrics.read_run(LEGAL / "bm25.run", name="bm25"), metrics.read_run(LEGAL / "bm25_ce.run", name="bm25_ce")]
    fused, recipe = fusion.fuse(runs, "rrf", k=60)
    expected = metrics.evaluate(LEGAL / "qrels.txt", {recipe.label(): fused}, [NDCG10])["value"].mean()

    open_app(page, f"{module_app_server}/fusion")
    no_exception(page)
    expect(main(page)).to_contain_text(recipe.label(), timeout=TIMEOUT)
    page.get_by_role("button", name="Store the fused run in the workspace").click()
    wait_for_app(page)
    no_exception(page)
    expect(main(page)).to_contain_text(re.compile(r"Stored in legal as"), timeout=TIMEOUT)

    open_app(page, f"{module_app_server}/")
    no_exception(page)
    board = read_leaderboard(page)
    assert recipe.label() in board, sorted(board)
    assert board[recipe.label()][NDCG10] == f"{expected:.4f}"
