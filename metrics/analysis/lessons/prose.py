"""What a lesson's prose says about its example, checked against the example.

Values in the prose are computed placeholders (:mod:`.model`); the words around them still name
grades, ranks, counts and cutoffs, and a sentence can contradict its example ("grade-4 documents
at ranks 8 to 10" over a list with grade 3 at rank 10). :func:`problems` reads these claims and
compares each with the example:

- ``[a|the|one|two...] grade-G document(s)|one(s) at rank(s) R [to|and R2]``, or ``... first``,
  ``second``...: the grade at each named rank (``the`` and a count also the number of grade-G
  documents in the list);
- ``three grade-G documents``: how many the list holds;
- ``six results``, ``ten queries``: the length of the list, the number of queries;
- ``two relevant documents (grades 3 and 2) the list missed``, ``four missed relevant documents``:
  the missed documents and their grades;
- ``nDCG@5 = {ndcg}``, ``P@10 = {p}``, ``nDCG@20 = {ndcg:k20}``: the cutoff a name states against
  the cutoff its value is computed at;
- ``rank 5 keeps {discount:5}``: the rank a sentence names against its placeholder's.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .model import Lesson

WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                    "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split())}
ORDINALS = {w: i for i, w in enumerate("zeroth first second third fourth fifth sixth seventh eighth ninth "
                                       "tenth".split()) if i}
_COUNT = r"(?P<count>\d+|" + "|".join(WORDS) + r"|an?|the)"
_GRADED = re.compile(
    rf"(?:\b{_COUNT}\s+)?\bgrade-(?P<grade>\d)\s+(?:documents?|ones?)"
    r"(?:\s+(?:(?:at|in)\s+ranks?\s+(?P<r1>\d+)(?:\s*(?P<joint>to|and|-|,)\s*(?P<r2>\d+))?"
    r"|(?P<ordinal>" + "|".join(ORDINALS) + r")\b))?", re.IGNORECASE)
_LENGTH = re.compile(rf"\b{_COUNT}\s+(?P<what>results|queries)\b", re.IGNORECASE)
_MISSED = re.compile(rf"\b{_COUNT}\s+(?:missed\s+relevant\s+documents?|relevant\s+documents?\s*"
                     r"(?:\(grades?\s+(?P<grades>[\d ,and]+)\)\s*)?the\s+list\s+missed)", re.IGNORECASE)
_AT_CUTOFF = re.compile(r"\b(?P<name>[A-Za-z]+)@(?P<k>\d+)\s*(?:=|is)\s*\{(?P<ph>[a-z_]+)(?::(?P<arg>[a-z0-9]+))?\}")
_RANK_PH = re.compile(r"\brank\s+(?P<rank>\d+)\s+(?:keeps|loses)\s+\{(?:discount|loss):(?P<arg>\d+)\}")


def _count(word: str | None) -> int | None:
    if word is None:
        return None
    word = word.lower()
    return int(word) if word.isdigit() else WORDS.get(word)


def problems(lesson: Lesson, text: str) -> list[str]:
    """The claims of ``text`` (the lesson's raw prose, placeholders unfilled) that its example contradicts."""
    out = []
    text = " ".join(text.split())
    sb, collection = lesson.example, lesson.collection
    for m in _GRADED.finditer(text):
        if sb is None:
            continue
        grade, said = int(m["grade"]), m.group(0)
        count = 1 if (m["count"] or "").lower() == "the" else _count(m["count"])
        ranks: list[int] = []
        if m["r1"]:
            r1, r2 = int(m["r1"]), int(m["r2"] or m["r1"])
            ranks = list(range(r1, r2 + 1)) if m["joint"] in ("to", "-") else sorted({r1, r2})
        elif m["ordinal"]:
            ranks = [ORDINALS[m["ordinal"].lower()]]
        for rank in ranks:
            actual = sb.grades[rank - 1] if rank <= len(sb) else None
            if actual != grade:
                where = f"grade {'?' if actual is None else actual}" if rank <= len(sb) else "no document"
                out.append(f"{said!r}: the example has {where} at rank {rank}")
        held = sum(1 for g in sb.grades if g == grade)
        if count is not None and held != count:
            out.append(f"{said!r}: the example holds {held} grade-{grade} document(s)")
    for m in _LENGTH.finditer(text):
        n = _count(m["count"])
        if n is None or m["count"].lower() in ("a", "an", "the"):
            continue
        if m["what"].lower() == "results" and sb is not None and len(sb) != n:
            out.append(f"{m.group(0)!r}: the example lists {len(sb)} documents")
        if m["what"].lower() == "queries" and collection is not None and len(collection.queries) != n:
            out.append(f"{m.group(0)!r}: the example has {len(collection.queries)} queries")
    for m in _MISSED.finditer(text):
        n = _count(m["count"])
        missed = sb.missed if sb is not None else ()
        if n is not None and n != len(missed):
            out.append(f"{m.group(0)!r}: the example misses {len(missed)} relevant documents")
        if m["grades"]:
            said_grades = sorted(int(g) for g in re.findall(r"\d", m["grades"]))
            if said_grades != sorted(missed):
                out.append(f"{m.group(0)!r}: the missed documents' grades are "
                           f"{', '.join(map(str, sorted(missed))) or 'none'}")
    for m in _AT_CUTOFF.finditer(text):
        k, arg = int(m["k"]), m["arg"]
        if arg and arg.startswith("k") and arg[1:].isdigit():
            at = int(arg[1:])
        elif collection is not None:
            at = collection.cutoff
        elif sb is not None:
            at = sb.cutoff
        else:
            continue
        if at != k:
            out.append(f"{m.group(0)!r}: the value is computed at cutoff {at}, not {k}")
    for m in _RANK_PH.finditer(text):
        if m["rank"] != m["arg"]:
            out.append(f"{m.group(0)!r}: the value is computed at rank {m['arg']}, not {m['rank']}")
    return out
