"""The class-task glue: times in the visitor's zone (or labelled UTC), and a board as plain text."""
from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from metrics.tasks.visible import Board, BoardRow, Rules
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


def _rules(status: str, **times) -> Rules:
    fields = dict(title="T", description="", status=status, opens=None, closes="2026-12-01T18:00:00Z", released=None,
                  qrels_released=False, measures=("nDCG@10",), primary="nDCG@10", per_day=None, total=None, finals=1,
                  board_rule="best", final_topics="hidden", dev_qrels=False, anonymous=False, n_public=1, n_hidden=1,
                  test="t", correction="holm", alpha=0.05, now=None)
    return Rules(**(fields | times))


def test_the_status_line_says_open_closed_or_released_with_its_times(monkeypatch):
    monkeypatch.setattr(ui, "zone", lambda: None)
    assert ui.status_text(_rules("open")) == "open until 2026-12-01 18:00 UTC"
    assert ui.status_text(_rules("closed")) == "closed 2026-12-01 18:00 UTC"
    assert ui.status_text(_rules("released", released="2026-12-02T09:30:00Z")) == \
        "released 2026-12-02 09:30 UTC (closed 2026-12-01 18:00 UTC)"
    assert ui.status_text(_rules("not open yet", opens="2026-11-30T08:00:00Z")) == \
        "not open yet: opens 2026-11-30 08:00 UTC, closes 2026-12-01 18:00 UTC"
    for status in ("open", "closed", "released", "not open yet"):
        assert "opens now" not in ui.rules_caption(_rules(status, opens=None))


def test_the_countdown_to_the_close_in_days_hours_and_minutes(monkeypatch):
    monkeypatch.setattr(ui, "zone", lambda: None)
    closes = datetime(2026, 12, 1, 18, tzinfo=UTC).timestamp()
    before = closes - (2 * 86400 + 3 * 3600 + 14 * 60 + 59)      # 2 d 3 h 14 min 59 s before
    assert ui.countdown(_rules("open"), before) == "Closes in 2 d 3 h 14 min (2026-12-01 18:00 UTC)"
    assert ui.countdown(_rules("open"), closes - 3600) == "Closes in 1 h 0 min (2026-12-01 18:00 UTC)"
    assert ui.countdown(_rules("open"), closes - 59) == "Closes in under a minute (2026-12-01 18:00 UTC)"
    assert ui.countdown(_rules("open"), closes + 1) == "Closed 2026-12-01 18:00 UTC: no more submissions"
    assert ui.countdown(_rules("closed"), closes + 1) == "Closed 2026-12-01 18:00 UTC: no more submissions"
