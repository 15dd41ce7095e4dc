"""The class-task glue: times in the visitor's zone (or labelled UTC), and a board as plain text."""
from __future__ import annotations

from zoneinfo import ZoneInfo

from metrics.tasks.visible import Board, BoardRow
from ndcg_lab.ui import tasks as ui
from ndcg_lab.ui.text import md


def test_local_times_in_the_visitors_zone_or_labelled_utc(monkeypatch):
    monkeypatch.setattr(ui, "zone", lambda: ZoneInfo("Europe/Paris"))
    assert ui.local("2026-12-01T18:00:00Z") == "2026-12-01 19:00 Europe/Paris"   # CET = UTC+1 in December
    monkeypatch.setattr(ui, "zone", lambda: None)
    assert ui.local("2026-12-01T18:00:00Z") == "2026-12-01 18:00 UTC"
    assert ui.local(None) == "—"


def test_a_board_is_plain_text_with_the_teams_own_row_marked(monkeypatch):
    monkeypatch.setattr(ui, "zone", lambda: None)
    row = BoardRow(rank=1, key="s2", submission=2, team=1, name="[x](http://e.org) <b>", kind="team", label="**run**",
                   means={"AP": 0.25}, submissions=2, last="2026-12-01T18:00:00Z", p_baseline=0.01234, marker="▲",
                   p_next=None, group="A", you=True)
    base = BoardRow(rank=2, key="s1", submission=1, team=None, name="baseline: bm25", kind="baseline", label="bm25",
                    means={"AP": float("nan")}, submissions=None, last=None, p_baseline=None, marker="", p_next=None,
                    group="A")
    board = Board(final=False, topics="public", n_topics=15, measures=("AP",), primary="AP", test="t",
                  correction="holm", alpha=0.05, baseline="bm25", qrels_sha256="0" * 64, rows=(row, base))
    table = ui.board_frame(board)
    assert table.loc[1, "name"] == md("[x](http://e.org) <b>")
    assert md("[x](http://e.org) <b>").startswith("\\[x\\]")
    assert table.loc[1, "run"] == "\\*\\*run\\*\\*" and table.loc[1, "you"] == "◀ you"
    assert table.loc[1, "AP"] == "0.2500" and table.loc[2, "AP"] == "—"
    assert table.loc[1, "p vs baseline (holm)"] == "0.0123" and table.loc[2, "submissions"] == "—"
    assert table.loc[1, "last submission"] == md("2026-12-01 18:00 UTC")
