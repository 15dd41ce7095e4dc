"""The sandbox's list: up to MAX_DOCS documents with a grade each, a cutoff and a gain; its edits
(each returns a new list), the teaching presets, and the query parameters of a shareable link."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ...errors import MetricsError
from ...measures import with_gain

MAX_DOCS = 20
GRADES = (0, 1, 2, 3, 4)
GAIN_NAMES = {"exp": "exponential (2^rel - 1)", "linear": "linear (rel)"}
STRATEGIES = {
    "zero": "Treat as 0 (trec_eval default)",
    "condensed": "Condensed list (ignore unjudged)",
    "inferred": "Inferred (your guessed grades)",
}


def _default_names(n: int) -> tuple[str, ...]:
    return tuple(f"D{i + 1}" for i in range(n))


@dataclass(frozen=True)
class Sandbox:
    """One ranked list for teaching: ``grades[i]`` is the grade at rank i + 1 (None = unjudged).

    ``names`` identify the documents (default D1..Dn), so a document keeps its
    name when it moves. ``missed`` are grades of relevant documents the list
    lacks. ``guesses`` are (name, grade) pairs: the user's guess for unjudged
    documents, used by the "inferred" strategy. ``versus`` is another order of
    the same names (a second system) for side-by-side comparisons.
    """

    grades: tuple
    names: tuple = ()
    cutoff: int = 10
    gain: str = "exp"
    missed: tuple = ()
    guesses: tuple = ()
    versus: tuple = ()

    def __post_init__(self):
        grades = tuple(None if g is None else int(g) for g in self.grades)
        if not 1 <= len(grades) <= MAX_DOCS:
            raise MetricsError(f"a sandbox list holds 1 to {MAX_DOCS} documents, got {len(grades)}",
                               fix=f"keep at most {MAX_DOCS} documents")
        bad = [g for g in grades if g is not None and g not in GRADES]
        if bad:
            raise MetricsError(f"grade {bad[0]} is outside 0-4", fix="use grades 0, 1, 2, 3, 4 or ? (unjudged)")
        names = tuple(str(n) for n in self.names) or _default_names(len(grades))
        if len(names) != len(grades):
            raise MetricsError(f"{len(names)} names for {len(grades)} documents",
                               fix="give one name per document, or none")
        if len(set(names)) != len(names) or any(not n.strip() or "," in n for n in names):
            raise MetricsError("document names must be unique, non-empty and without commas",
                               fix="name them e.g. D1, D2, ...")
        if self.gain not in GAIN_NAMES:
            raise MetricsError(f"unknown gain {self.gain!r}", fix="use exp or linear")
        cutoff = int(self.cutoff)
        if not 1 <= cutoff <= MAX_DOCS:
            raise MetricsError(f"the cutoff must be between 1 and {MAX_DOCS}, got {cutoff}", fix="for example 10")
        missed = tuple(int(g) for g in self.missed)
        if any(g not in GRADES[1:] for g in missed):
            raise MetricsError("missed documents need a grade of 1-4", fix="for example missed=(3, 2)")
        guesses = tuple((str(n), int(g)) for n, g in (self.guesses.items() if isinstance(self.guesses, Mapping)
                                                      else self.guesses))
        if any(g not in GRADES for _, g in guesses):
            raise MetricsError("a guessed grade is outside 0-4", fix="guess 0, 1, 2, 3 or 4")
        versus = tuple(str(n) for n in self.versus)
        if versus and sorted(versus) != sorted(names):
            raise MetricsError("the second system must rank the same documents", fix="give a reordering of names")
        for key, value in (("grades", grades), ("names", names), ("cutoff", cutoff), ("missed", missed),
                           ("guesses", guesses), ("versus", versus)):
            object.__setattr__(self, key, value)

    # -- derived -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.grades)

    @property
    def measure(self) -> str:
        """The exact nDCG measure string of this sandbox (``nDCG(dcg='exp-log2')@10``)."""
        return with_gain(f"nDCG@{self.cutoff}", self.gain)

    def grade_of(self, name: str):
        return self.grades[self.names.index(name)]

    def guess_of(self, name: str, default: int = 1) -> int:
        return dict(self.guesses).get(name, default)

    @property
    def unjudged(self) -> tuple[str, ...]:
        return tuple(n for n, g in zip(self.names, self.grades) if g is None)

    # -- edits (each returns a new sandbox) --------------------------------------------------
    def replace(self, **changes) -> Sandbox:
        return dataclasses.replace(self, **changes)

    def reordered(self, order) -> Sandbox:
        """The list in ``order`` (positions of the current list), each grade with its name."""
        order = list(order)
        return self.replace(grades=tuple(self.grades[i] for i in order), names=tuple(self.names[i] for i in order))

    def ideal(self) -> Sandbox:
        """Grades descending (unjudged count as 0); equal grades keep their order."""
        key = np.array([-(g or 0) for g in self.grades])
        return self.reordered(np.argsort(key, kind="stable"))

    def reversed(self) -> Sandbox:
        return self.reordered(range(len(self) - 1, -1, -1))

    def shuffled(self, seed: int = 0) -> Sandbox:
        """A permutation drawn with ``numpy.random.default_rng(seed)``: the same seed, the same order."""
        return self.reordered(np.random.default_rng(int(seed)).permutation(len(self)))

    def swapped(self, i: int, j: int) -> Sandbox:
        order = list(range(len(self)))
        order[i], order[j] = order[j], order[i]
        return self.reordered(order)

    def moved(self, i: int, step: int) -> Sandbox:
        """The document at index ``i`` moved ``step`` places (-1 = up); clamped at the ends."""
        j = min(max(i + step, 0), len(self) - 1)
        return self.swapped(i, j) if abs(j - i) == 1 else self.reordered(_move(len(self), i, j))

    def regraded(self, i: int, grade) -> Sandbox:
        grades = list(self.grades)
        grades[i] = None if grade is None else int(grade)
        return self.replace(grades=tuple(grades))

    def resized(self, n: int) -> Sandbox:
        """Keep the first ``n`` documents, or add new ones (grade 0) named D<k> up to ``n``."""
        n = int(n)
        if n <= len(self):
            keep = self.replace(grades=self.grades[:n], names=self.names[:n], versus=())
            return keep.replace(cutoff=min(keep.cutoff, MAX_DOCS))
        names, grades, k = list(self.names), list(self.grades), 1
        while len(names) < n:
            if f"D{k}" not in names:
                names.append(f"D{k}")
                grades.append(0)
            k += 1
        return self.replace(grades=tuple(grades), names=tuple(names), versus=())


def _move(n: int, i: int, j: int) -> list[int]:
    order = list(range(n))
    order.insert(j, order.pop(i))
    return order


@dataclass(frozen=True)
class Preset:
    title: str
    lesson: str
    sandbox: Sandbox


PRESETS: dict[str, Preset] = {
    "legal": Preset(
        "A legal search list, grades 3/2/1/0",
        "Ten case-law results for one research question, graded 3 (on point), 2 (relevant), 1 (related) and "
        "0 (off topic), as in the legal sample collection. Try the buttons: the ideal order reaches "
        "nDCG@10 = 1, the reverse falls far lower.",
        Sandbox(grades=(2, 3, 0, 1, 3, 0, 2, 0, 1, 0), cutoff=10),
    ),
    "wikipedia": Preset(
        "Wikipedia's worked example (two relevant documents missed)",
        "Six results graded 3, 2, 3, 0, 1, 2, and two relevant documents (grades 3 and 2) the system never "
        "retrieved: the example of Wikipedia's DCG article. With linear gain DCG@6 = 6.861, "
        "IDCG@6 = 8.740, nDCG@6 = 0.785. Even the ideal order of this list stays below 1: the missed "
        "documents belong in the ideal ranking.",
        Sandbox(grades=(3, 2, 3, 0, 1, 2), cutoff=6, gain="linear", missed=(3, 2)),
    ),
    "perfect": Preset(
        "A perfect list",
        "Grades already in descending order: DCG equals IDCG at every cutoff, so nDCG@k = 1.",
        Sandbox(grades=(4, 3, 3, 2, 2, 1, 1, 0, 0, 0), cutoff=10),
    ),
    "reverse": Preset(
        "The perfect list, reversed",
        "The same documents worst first. nDCG stays above 0 because the relevant documents are still in "
        "the top 10, only heavily discounted.",
        Sandbox(grades=(0, 0, 0, 1, 1, 2, 2, 3, 3, 4), cutoff=10),
    ),
    "late": Preset(
        "One highly relevant document at rank 10",
        "A single grade-4 document, found at rank 10. nDCG@10 = 1/log2(11) = 0.289: the discount alone "
        "costs 71% of its value. Move it up to see the curve of the discount.",
        Sandbox(grades=(0, 0, 0, 0, 0, 0, 0, 0, 0, 4), cutoff=10),
    ),
    "equal_map": Preset(
        "Two systems with equal MAP, different nDCG",
        "Systems A and B retrieve the same documents, with relevant ones at the same ranks (1, 3 and 5), "
        "so AP, RR and P@k are equal. A puts the grade-3 document first, B the grade-1 one: nDCG tells "
        "them apart, binary measures cannot.",
        Sandbox(grades=(3, 0, 2, 0, 1, 0), names=("A1", "N1", "A2", "N2", "A3", "N3"), cutoff=6,
                versus=("A3", "N1", "A2", "N2", "A1", "N3")),
    ),
    "mrr": Preset(
        "Perfect MRR, poor nDCG",
        "The first document is relevant (grade 1), so RR = 1; but the highly relevant documents sit at "
        "ranks 8-10 and nDCG@10 is low. RR only looks at the first hit.",
        Sandbox(grades=(1, 0, 0, 0, 0, 0, 0, 4, 4, 3), cutoff=10),
    ),
}


def to_params(sb: Sandbox) -> dict[str, str]:
    """Query parameters that restore ``sb`` (for ``st.query_params``): g, k, gain, names, missed, guess, vs."""
    params = {"g": ",".join("?" if g is None else str(g) for g in sb.grades), "k": str(sb.cutoff), "gain": sb.gain}
    if sb.names != _default_names(len(sb)):
        params["names"] = ",".join(sb.names)
    if sb.missed:
        params["missed"] = ",".join(map(str, sb.missed))
    guesses = [(n, g) for n, g in sb.guesses if n in sb.unjudged]
    if guesses:
        params["guess"] = ",".join(f"{n}:{g}" for n, g in guesses)
    if sb.versus:
        params["vs"] = ",".join(sb.versus)
    return params


def from_params(params: Mapping[str, str]) -> Sandbox:
    """The sandbox a URL's query parameters describe (see :func:`to_params`)."""
    def split(key):
        text = str(params.get(key) or "").strip()
        return [part.strip() for part in text.split(",")] if text else []

    grades_text = split("g")
    if not grades_text:
        raise MetricsError("the link holds no grades (parameter g)", fix="share a link made by the Learn page")
    try:
        grades = tuple(None if g in ("?", "u", "") else int(g) for g in grades_text)
        cutoff = int(params.get("k") or min(10, len(grades)))
        missed = tuple(int(g) for g in split("missed"))
        guesses = tuple((n, int(g)) for n, g in (part.split(":", 1) for part in split("guess")))
    except ValueError:
        raise MetricsError("the link's grades or cutoff are not whole numbers",
                           fix="grades are 0-4 or ?, e.g. g=3,2,?,0&k=4") from None
    return Sandbox(grades=grades, names=tuple(split("names")), cutoff=cutoff, gain=params.get("gain") or "exp",
                   missed=missed, guesses=guesses, versus=tuple(split("vs")))
