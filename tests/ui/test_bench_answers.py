"""bench/bench_tasks.py reads a press's answer from what its run showed: the admission queue's
note before it is no answer, and an exception is "other"."""
from __future__ import annotations

import sys

from tests.e2e.helpers import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "bench"))
from bench_tasks import outcome, the_answer  # noqa: E402
from stclient import Shown  # noqa: E402

QUEUED = "Many people are opening the app at once. You are number 3 in the queue; the page opens by itself"


def test_the_queue_note_is_no_answer_whatever_draws_it():
    for kind in ("alert", "markdown"):
        shown = [Shown(kind, QUEUED), Shown("alert", "Submission 1 scored on the public topics: nDCG 0.41")]
        assert outcome(the_answer(shown).text) == "stored"
    assert outcome(the_answer([Shown("alert", QUEUED), Shown("alert", "T0 used all 1 submissions")]).text) == "refused"


def test_an_exception_or_nothing_is_other():
    assert outcome(the_answer([Shown("alert", QUEUED), Shown("exception", "KeyError: 'x'")]).text) == "other"
    assert the_answer([Shown("markdown", QUEUED)]) is None
