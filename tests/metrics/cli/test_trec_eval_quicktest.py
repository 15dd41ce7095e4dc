"""trec_eval 10's own ``make quicktest``: its 15 commands, each byte-identical to the expected output.

The commands and expected outputs are read from the READMEs of tests/data/trec_eval (7 commands)
and tests/data/trec_eval_quicktest (8 more: preference judgments, qrels read as preferences,
judgment groups, z-scores, qrels with comments, all_trec). Each runs through the command line's
own parser and handler, in this process.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from metrics.cli import parser

DATA = Path(__file__).resolve().parents[2] / "data"
FOLDERS = (DATA / "trec_eval", DATA / "trec_eval_quicktest")


def quicktest_cases() -> list[tuple[Path, list[str]]]:
    cases = []
    for folder in FOLDERS:
        for out, command in re.findall(r"\| (\S*out\S*) \| `trec_eval (.*?)`", (folder / "README.md").read_text()):
            cases.append(((folder / out).resolve(), command.split()))
    return cases


def local(arg: str) -> str:
    """``test/NAME`` (trec_eval's folder) as the path of NAME in whichever data folder holds it."""
    if not arg.startswith("test/"):
        return arg
    name = arg[len("test/"):]
    return str(next(folder / name for folder in FOLDERS if (folder / name).exists()))


CASES = quicktest_cases()


def test_all_fifteen_commands_are_read():
    assert len(CASES) == 15
    assert len({tuple(args) for _, args in CASES}) == 15


@pytest.mark.parametrize("expected, args", CASES, ids=[" ".join(a) for _, a in CASES])
def test_quicktest_command_is_byte_identical(expected, args, capsys):
    parsed = parser(only="trec_eval").parse_args(["trec_eval", *map(local, args)])
    assert parsed.handler(parsed) == 0
    assert capsys.readouterr().out == expected.read_text()
