"""The pages that analyse two runs read the workspace's memory-mapped rankings, not parsed runs: Where it
differs, Measure behaviour (every tab drawn on a first visit) and Fusion ask the cache of parsed runs for
nothing, so a session holds no copy of a run beside its rankings."""
from __future__ import annotations

import pytest

from ndcg_lab.ui import caches
from tests.conftest import assert_ok


@pytest.mark.parametrize("view", ["views/where.py", "views/behaviour.py", "views/fusion.py"])
def test_the_page_keeps_no_parsed_run(open_app, shared_home, monkeypatch, view):
    asked = []
    monkeypatch.setattr(caches, "_cached_run", lambda *key: asked.append(key[2]))
    page = open_app(view, home=shared_home)
    assert_ok(page)
    assert asked == []
