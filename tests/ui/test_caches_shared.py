"""ndcg_lab.ui.caches keys ranked runs, evaluations and curves on content digests and names, not on the
workspace: a session of another workspace holding the same runs and qrels under the same names reads
the entries an earlier session made (one ranked run, one frame per server). Parsed runs, which carry
the uploaded file's name, stay per workspace."""
from __future__ import annotations

import dataclasses

import pandas as pd

from ndcg_lab.ui import caches, state


def test_another_workspace_with_the_same_content_shares_the_entries(legal):
    sel, _ = legal
    other = dataclasses.replace(sel, scope=f"{sel.scope}-another-workspace")
    name, digest = sel.systems[0]
    mine = state.ranked(sel, name, digest)
    assert state.ranked(other, name, digest) is mine and mine.name == name
    first = caches.evaluate(sel, ["AP", "nDCG@10"])
    pd.testing.assert_frame_equal(caches.evaluate(other, ["AP", "nDCG@10"]), first)
    assert caches.curves(other, "nDCG", 10)[name] is not None
    # a parsed run names the file its workspace's visitor uploaded: kept per workspace
    assert caches.run(other, name, digest) is not caches.run(sel, name, digest)
