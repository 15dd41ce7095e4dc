"""metrics.store.shortlinks: /s/ + 8 characters for an address of this app, shared by processes."""
from __future__ import annotations

import itertools
import threading

import pytest

from metrics.errors import MetricsError
from metrics.store.shortlinks import ALPHABET, LENGTH, ShortLinks, UnknownLink


def test_a_target_gets_one_code_and_the_code_resolves(tmp_path):
    links = ShortLinks(tmp_path)
    code = links.shorten("learn?live=ABC234")
    assert len(code) == LENGTH and set(code) <= set(ALPHABET)
    assert links.shorten("learn?live=ABC234") == code                  # the same target, the same link
    assert links.resolve(code) == "learn?live=ABC234"
    assert links.resolve(f"  {code.lower()} ") == "learn?live=ABC234"  # typed from a projector
    assert ShortLinks(tmp_path).resolve(code) == "learn?live=ABC234"   # another process, same file


def test_a_collision_draws_again(tmp_path):
    draws = itertools.chain(["AAAAAAAA", "AAAAAAAA", "AAAAAAAA", "BBBBBBBB"])
    links = ShortLinks(tmp_path, draw=lambda: next(draws))
    assert links.shorten("learn") == "AAAAAAAA"
    assert links.shorten("task?task=x") == "BBBBBBBB"                  # two taken draws, then a free one
    assert links.resolve("AAAAAAAA") == "learn" and links.resolve("BBBBBBBB") == "task?task=x"
    stuck = ShortLinks(tmp_path, draw=lambda: "AAAAAAAA")
    with pytest.raises(MetricsError, match="no free short code"):
        stuck.shorten("curves")


def test_an_unknown_code_says_so(tmp_path):
    links = ShortLinks(tmp_path)
    with pytest.raises(UnknownLink, match="no short link /s/ZZZZZZZZ on this server"):
        links.resolve("ZZZZZZZZ")


@pytest.mark.parametrize("code", ["", "ABC", "ABCDEFGHJ", "ABCDEFG0", "<script>1", "'; DROP TABLE x;--",
                                  "../../etc", "ABCD EFG", "ABCDEFG\x00", "=HYPERLINK(1)"])
def test_hostile_codes_are_refused_clearly(tmp_path, code):
    with pytest.raises(UnknownLink, match="is not a short link of this server"):
        ShortLinks(tmp_path).resolve(code)


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "/etc/passwd", "\\\\evil\\x",
                                    "javascript:alert(1)", "../outside", "learn/../../x", "learn?\r\nSet-Cookie: a=b",
                                    "", "x" * 5000])
def test_a_target_outside_the_app_is_refused(tmp_path, target):
    with pytest.raises(MetricsError):
        ShortLinks(tmp_path).shorten(target)


def test_concurrent_shortening_gives_one_code_per_target(tmp_path):
    links = ShortLinks(tmp_path)
    codes: list[str] = []
    threads = [threading.Thread(target=lambda i=i: codes.append(links.shorten(f"learn?lesson={i % 5}")))
               for i in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(codes)) == 5
    assert {links.resolve(c) for c in codes} == {f"learn?lesson={i}" for i in range(5)}
