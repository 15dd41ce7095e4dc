"""Whether a text gives an exercise's answer away, and the hints that never do.

An exercise tests only if its answer is nowhere on its page before it is answered. "Its answer"
means any number the check would accept: a number shown within the exercise's tolerance of the
computed value (``0.82`` gives away 0.8211 when ±0.005 is accepted), written as a decimal (point
or comma) or as a percentage (``61%`` is 0.61, as the answer box reads it). :func:`leak` finds
such a number in a text; :func:`hints` are the steps of the arithmetic that lead to the answer
without stating it, the last step's value left for the student.
"""
from __future__ import annotations

import re

from .kinds import Exercise, answer, is_numeric, quantity_value
from .solutions import worked

NUMBER = re.compile(r"(?<![\w.,/^@])(\d+(?:[.,]\d+)?)(\s?%)?(?![\w^])")
"""A number as a page shows it: ``0.8211``, ``0,82``, ``61%``, ``7``; not the digits of ``q01``,
``log2``, ``2^rel`` or ``@10``."""


def numbers(text: str) -> list[tuple[str, float]]:
    """Every number of ``text`` with its value (a percentage divided by 100, as the answer box reads it)."""
    out = []
    for m in NUMBER.finditer(str(text)):
        value = float(m.group(1).replace(",", "."))
        out.append((m.group(0).strip(), value / 100 if m.group(2) else value))
    return out


def accepted(ex: Exercise) -> tuple[float, float] | None:
    """The value a typed number is compared with and the tolerance, for exercises answered with a
    number (``number``; ``choice`` among numbers: the value the nearest option is chosen by), else None."""
    if ex.kind == "number":
        return float(answer(ex)), ex.tolerance
    if ex.kind == "choice" and is_numeric(ex):
        return quantity_value(ex), ex.tolerance
    return None


def leak(ex: Exercise, text: str) -> str | None:
    """The first number of ``text`` that the check of ``ex`` would accept (its answer at the precision
    it is checked), or None."""
    target = accepted(ex)
    if target is None:
        return None
    value, tolerance = target
    for shown, number in numbers(text):
        if abs(number - value) <= tolerance + 1e-9:
            return shown
    return None


def hints(ex: Exercise) -> list[str]:
    """The arithmetic one step at a time, never its result: a wrong answer gets the next of these.

    For an exercise answered with a number these are :func:`metrics.analysis.lessons.worked`'s lines;
    a line that would give the answer away keeps its formula and drops its value (``IDCG@6 =
    3/log2(2) + ... = ?``), and is left out when a term of it would. Other kinds have no steps that
    do not name the answer (their worked lines say which option wins): their hint is the lesson's."""
    if accepted(ex) is None:
        return []
    out = []
    for line in worked(ex):
        shown = leak(ex, line)
        if shown is not None:
            head = line[:line.index(shown)].rstrip()
            line = f"{head} ?" if head.endswith("=") else ""
        if line and leak(ex, line) is None:
            out.append(line)
    return out
