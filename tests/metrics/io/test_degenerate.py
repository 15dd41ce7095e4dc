"""The degenerate-block check on its own: lines that all differ but share one query and document
are refused like one line repeated, naming the line and the key; real shapes of text pass."""
from __future__ import annotations

import pytest

from metrics.errors import MetricsError
from metrics.io.lines import DEGENERATE_KEYS, DEGENERATE_SHARE, check_degenerate


def _lines(make, n: int = 40_000) -> bytes:
    return b"".join(make(i) for i in range(n))


@pytest.mark.parametrize("make", [
    lambda i: b"q1 Q0 doc1 %d %d.25 a\n" % (i + 1, -i),          # a run: rank and score count
    lambda i: b"q1\tQ0\tdoc1\t%d\t1.0\ta\n" % (i + 1),             # the same with tabs
    lambda i: b"q1 0 doc1 %d\n" % i,                                # a qrels: the grade counts
])
def test_lines_sharing_one_key_are_refused_at_the_second_line(make):
    with pytest.raises(MetricsError) as refused:
        check_degenerate(_lines(make), 10, "bomb.txt")
    assert refused.value.line == 12 and refused.value.source == "bomb.txt"
    assert "repeats the query and document of line 11 ('q1' and 'doc1')" in refused.value.problem
    assert f"only 1 of the {DEGENERATE_KEYS:,} lines from line 11" in refused.value.problem


def test_a_few_keys_among_many_lines_are_refused_and_one_in_sixteen_new_passes():
    few = DEGENERATE_KEYS // DEGENERATE_SHARE - 1                   # one key short of the share
    with pytest.raises(MetricsError, match="a degenerate input"):
        check_degenerate(_lines(lambda i: b"q1 Q0 doc%d %d 1.0 a\n" % (i % few, i)), 0, "few.run")
    enough = DEGENERATE_KEYS // DEGENERATE_SHARE                    # exactly the share: not degenerate
    check_degenerate(_lines(lambda i: b"q1 Q0 doc%d %d 1.0 a\n" % (i % enough, i)), 0, "enough.run")


@pytest.mark.parametrize("make", [
    lambda i: b"q%d Q0 doc%d %d %d.5 run\n" % (i // 100, i, i % 100 + 1, -i),   # a run: 100 documents a query
    lambda i: b"%d 0 doc%d %d\n" % (i // 50, i, i % 3),                           # a qrels
    lambda i: [b"<top>\n", b"<num> Number: %d\n" % i, b"<title> query %d\n" % i,  # TREC topics
               b"<desc> Description:\n", b"A relevant document is about %d\n" % i, b"</top>\n"][i % 6],
])
def test_real_shapes_pass(make):
    check_degenerate(_lines(make), 0, "real.txt")
