"""The first data line found slice by slice is the one the regular expression finds, on seeded
random text of blanks, line ends, comments and data, and across slices of whole lines."""
from __future__ import annotations

import random

import pytest

from metrics.io.sniff import FIRST_DATA_LINE, first_data_line


def _by_the_expression(text: bytes) -> bytes | None:
    found = FIRST_DATA_LINE.search(text)
    return None if found is None else found.group(1).rstrip()


def test_random_text_agrees_with_the_expression():
    draw = random.Random(34)
    pieces = [b" ", b"\t", b"\n", b"\r", b"\r\n", b"#", b"a", b"\x0b", b"\x0c", b"\x00", b"b c"]
    for _ in range(20_000):
        text = b"".join(draw.choice(pieces) for _ in range(draw.randint(0, 30)))
        assert first_data_line(text) == _by_the_expression(text), text


@pytest.mark.parametrize("text", [
    b"# a comment the reader skips\n" * 40_000 + b"q1 Q0 d1 1 1.0 t\n",        # past the first slices
    b" # a comment after a blank\r\n" * 40_000 + b"\t q1 Q0 d1 1 1.0 t \r\n",  # lines that start blank
    b"#" * 70_000 + b"\n" + b" " * 70_000 + b"\nq1 0 d1 1",                      # lines longer than a slice
    b"# x\n" * 16_383 + b"\r\n q",                                               # at a slice's edge
    b"# only comments\n" * 100_000,
], ids=["past-the-first-slices", "blank-first", "longer-than-a-slice", "slice-edge", "only-comments"])
def test_long_text_agrees_with_the_expression(text):
    assert first_data_line(text) == _by_the_expression(text)
