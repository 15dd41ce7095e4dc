"""The last data line of a piece (the prefix a part's first line is judged behind) is the same
whether it is found line by line from the end or by numpy, on seeded random text of blanks, line
ends, comments and data; the numpy search is forced by looking at no line, or a few, first."""
from __future__ import annotations

import random

import pytest

import metrics.engines.pieces as piece_reader


def _line_by_line(piece: bytes) -> bytes | None:
    ink = len(piece.rstrip())
    ends = [at for at in (piece.find(b"\n", ink), piece.find(b"\r", ink)) if at >= 0]
    end = min(ends) + 1 if ends else len(piece)
    while end > 0:
        newline = piece.rfind(b"\n", 0, end - 1)
        start = max(newline, piece.rfind(b"\r", max(newline, 0), end - 1)) + 1
        line = piece[start:end].rstrip(b"\r\n")
        stripped = line.strip(b" \t\f\v")
        if stripped and not stripped.startswith(b"#"):
            return line
        end = start
    return None


@pytest.mark.parametrize(("looked_at", "window"), [(0, 1), (1, 2), (3, 7), (piece_reader.LINES_LOOKED_AT, 4096)])
def test_numpy_finds_the_line_that_a_walk_from_the_end_finds(monkeypatch, looked_at, window):
    monkeypatch.setattr(piece_reader, "LINES_LOOKED_AT", looked_at)
    monkeypatch.setattr(piece_reader, "INK_WINDOW", window)   # the tail stripped a few bytes at a time
    draw = random.Random(looked_at)
    pieces = [b" ", b"\t", b"\n", b"\r", b"\r\n", b"#", b"a", b"\x0b", b"\x0c", b"b c", b"# x\n", b"# y\r\n", b"\n\n"]
    for _ in range(10_000):
        piece = b"".join(draw.choice(pieces) for _ in range(draw.randint(0, 40)))
        assert piece_reader.last_data_line(piece) == _line_by_line(piece), piece


def test_a_piece_of_comment_lines_after_data():
    piece = b"q1 Q0 d1 1 1.0 t \n" + b" # a comment line\n" * 100_000
    assert piece_reader.last_data_line(piece) == b"q1 Q0 d1 1 1.0 t "
    assert piece_reader.last_data_line(b" # a comment line\n" * 100_000) is None


@pytest.mark.parametrize("window", [1, 5, 4096])
def test_the_end_of_the_ink_is_where_rstrip_ends(monkeypatch, window):
    monkeypatch.setattr(piece_reader, "INK_WINDOW", window)
    draw = random.Random(window)
    for _ in range(2_000):
        piece = bytes(draw.choice(b" \t\n\r\x0b\x0cab\x00\x85") for _ in range(draw.randint(0, 30)))
        assert piece_reader.ink_end(piece) == len(piece.rstrip()), piece
    piece = b"q1 Q0 d1 1 1.0 t" + b" \n\r\t" * 10_000
    assert piece_reader.ink_end(piece) == 16
    assert piece_reader.ink_end(b"\n" * 100_000) == 0
