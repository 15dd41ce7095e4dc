"""The one exception type of nDCG Lab: bad input, said so that a user can fix it."""

from __future__ import annotations

import re

LONGEST_WORD = 120
"""Characters of one word (a run without spaces: a quoted field, a number) that a message quotes in full."""
_LONG_WORD = re.compile(rf"\S{{{LONGEST_WORD + 1},}}")


def _shorten(match: re.Match) -> str:
    word = match.group()
    return f"{word[:80]}… ({len(word):,} characters)"


class MetricsError(ValueError):
    """Bad input or options; `str(e)` reads "{source} line {line}: {problem}. {fix}".

    Parts that are None are left out, so a message may be as short as the
    problem alone. A word of the problem longer than ``LONGEST_WORD`` characters (a field
    quoted from the input: a million-digit grade) is cut to its first 80, with its length.
    The parts stay available as attributes for interfaces that lay them out themselves (the
    web app shows the fix apart from the problem).
    """

    def __init__(self, problem: str, *, source: str | None = None,
                 line: int | None = None, fix: str | None = None) -> None:
        # One line, always: a library's own message (pyarrow's, a parser's) may hold newlines.
        self.problem = " ".join(part.strip() for part in problem.splitlines()) if "\n" in problem or "\r" in problem \
            else problem
        if len(self.problem) > LONGEST_WORD:
            self.problem = _LONG_WORD.sub(_shorten, self.problem)
        self.source = source
        self.line = None if line is None else int(line)
        self.fix = fix
        super().__init__(self._message())

    def _message(self) -> str:
        if self.source is not None and self.line is not None:
            prefix = f"{self.source} line {self.line}: "
        elif self.source is not None:
            prefix = f"{self.source}: "
        elif self.line is not None:
            prefix = f"line {self.line}: "
        else:
            prefix = ""
        text = prefix + self.problem.rstrip(". ")
        if self.fix:
            text += ". " + self.fix
        return text

    def __str__(self) -> str:
        return self._message()

    def __reduce__(self):
        # Keyword-only arguments do not survive the default pickling, and Dask
        # workers send exceptions back pickled.
        return (_rebuild, (self.problem, self.source, self.line, self.fix))


def _rebuild(problem, source, line, fix) -> MetricsError:
    return MetricsError(problem, source=source, line=line, fix=fix)
