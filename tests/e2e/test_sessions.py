"""New browser sessions of a running server compute nothing that an earlier session computed.

The server's own counters say so: Streamlit's ``/_stcore/metrics`` counts the hits and misses of
every ``st.cache_*`` function. A second visitor's first screen (a new Playwright context: no
cookie, no session state) must add hits and no miss, in personal mode (one workspace) and in
shared mode (a new private workspace, over the shared samples).
"""
from __future__ import annotations

import re
import urllib.request

import pytest
from playwright.sync_api import expect

from tests.e2e.helpers import LEADERBOARD, TIMEOUT, open_app

FIRST_SCREEN_TIMEOUT = 2 * TIMEOUT
"""Milliseconds for a first screen: the first visitor's computes every run's means."""
_LOOKUP = re.compile(r'^cache_lookups_total\{cache="([^"]+)",cache_type="[^"]+",result="(hit|miss)"\} (\d+)', re.M)


def lookups(url: str) -> dict[tuple[str, str], int]:
    """{(cached function, "hit" | "miss"): count} from the server's metrics endpoint."""
    with urllib.request.urlopen(f"{url}/_stcore/metrics", timeout=30) as response:
        text = response.read().decode()
    return {(name, result): int(count) for name, result, count in _LOOKUP.findall(text)}


def first_screen(page, url: str) -> str:
    """A new visitor's leaderboard, as text, once its script run has finished."""
    open_app(page, url, timeout=FIRST_SCREEN_TIMEOUT)
    table = page.locator(f'[data-testid="stMain"] {LEADERBOARD}').first
    expect(table).to_contain_text("bm25_ce", timeout=FIRST_SCREEN_TIMEOUT)
    assert page.locator('[data-testid="stException"]').count() == 0
    return table.inner_text()


@pytest.mark.parametrize("mode", ["personal", "shared"])
def test_a_second_visitors_first_screen_computes_nothing_again(app_server_factory, visitor, mode):
    server = app_server_factory(env={"NDCG_LAB_MODE": mode})
    shown = first_screen(visitor(), server.url)
    before = lookups(server.url)
    assert before[("ndcg_lab.ui.caches._run_means", "miss")] == 4          # the four legal runs, once
    again = first_screen(visitor(), server.url)
    after = lookups(server.url)
    assert again == shown
    missed = {name for (name, result), count in after.items()
              if result == "miss" and count != before.get((name, result))}
    assert missed == set()
    assert after[("ndcg_lab.ui.caches._run_means", "hit")] >= before[("ndcg_lab.ui.caches._run_means", "hit")] + 4
    assert after[("ndcg_lab.ui.compare.significance", "hit")] > before[("ndcg_lab.ui.compare.significance", "hit")]
