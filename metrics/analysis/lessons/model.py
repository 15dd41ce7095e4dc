"""Lessons as data: one TOML file per lesson in ``data/``, loaded and checked here.

A lesson file (``data/<id>.toml``; the id is the file name and the address ``?lesson=<id>``)::

    title = "The discount 1/log2(rank + 1)"
    order = 3                      # place in the index
    summary = "One line for the index."
    text = "A few sentences. {loss:5} of a document's gain is lost at rank 5."
    try = "What to try with the example."

    [example]                      # a sandbox preset, a list, or a collection
    preset = "late"                # or grades = [3, 0, "?"], cutoff = 5, gain = "linear", missed = [2]

    [[exercise]]                   # 2-4 of them; see metrics.analysis.lessons.kinds
    kind = "number"
    question = "What share of its gain does a document lose at rank 5?"
    quantity = "loss"
    rank = 5
    tolerance = 0.01
    hint = "1 - 1/log2(6)"

Numbers in the prose are never typed: ``{quantity}`` or ``{quantity:arg}`` placeholders
(:func:`render`) are computed on the example by the library (``{ndcg}``, ``{ndcg:linear}``,
``{ndcg:k20}``, ``{loss:5}``, ``{discount:10}``, ``{gain:3}``, ``{mean_a}``...). A decimal
number or a percentage typed in the prose is an error, as is any malformed field: the message
names the file and the problem.
"""
from __future__ import annotations

import re
import threading
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NoReturn

from ...errors import MetricsError
from .. import sandbox
from ..sandbox import PRESETS, Sandbox
from . import kinds, leaks, links, prose
from .collection import Collection
from .kinds import Exercise

DATA = Path(__file__).with_name("data")
MIN_EXERCISES, MAX_EXERCISES = 2, 4
_FIELDS = {"title", "order", "summary", "text", "try", "example", "exercise"}
_PLACEHOLDER = re.compile(r"\{([a-z_]+)(?::([a-z0-9]+))?\}")
_TYPED_NUMBER = re.compile(r"(?<![\w{:])\d+\.\d+|\d+\s?%")


@dataclass(frozen=True)
class Lesson:
    """One lesson: prose, an interactive example (a list or a collection) and its exercises."""

    id: str
    title: str
    order: int
    summary: str
    text: str
    try_text: str
    example: Sandbox | None
    collection: Collection | None
    exercises: tuple[Exercise, ...]
    preset: str | None = None


def _fail(source: Path | str, problem: str, fix: str | None = None) -> NoReturn:
    raise MetricsError(problem, source=str(source), fix=fix)


def load(path: Path | str) -> Lesson:
    """The lesson of one file; any problem raises :class:`MetricsError` naming the file."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        _fail(path.name, f"not valid TOML: {exc}", "see the format in metrics/analysis/lessons/model.py")
    except (OSError, UnicodeDecodeError) as exc:
        _fail(path.name, f"cannot be read: {exc}")
    return from_data(data, path.stem, source=path.name)


def from_data(data: dict, lesson_id: str, *, source: str = "<lesson>") -> Lesson:
    unknown = sorted(set(data) - _FIELDS)
    if unknown:
        _fail(source, f"unknown field {unknown[0]!r}", f"fields are {', '.join(sorted(_FIELDS))}")
    for key in ("title", "summary", "text", "try"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            _fail(source, f"the field {key!r} is missing or empty", f'add {key} = "..."')
    if not isinstance(data.get("order"), int):
        _fail(source, "the field 'order' must be a whole number", "add order = 1")
    for key in ("text", "try", "summary"):
        typed = _TYPED_NUMBER.search(data[key])
        if typed:
            _fail(source, f"the {key} types the number {typed.group(0)!r}",
                  "write a placeholder such as {ndcg} or {loss:5}: the page computes it")
    example, collection, preset = None, None, None
    raw = data.get("example")
    if not isinstance(raw, dict):
        _fail(source, "the lesson has no [example] table", 'add [example] with preset = "legal" or grades = [...]')
    try:
        if "collection" in raw:
            c = raw["collection"]
            collection = Collection(queries=tuple(tuple(q) for q in c.get("queries", ())), cutoff=c.get("cutoff", 5),
                                    gain=c.get("gain", "exp"))
        elif "preset" in raw:
            preset = raw["preset"]
            if preset not in PRESETS:
                _fail(source, f"unknown preset {preset!r}", f"use one of {', '.join(PRESETS)}")
            example = PRESETS[preset].sandbox
            if set(raw) - {"preset"}:
                example = links.sandbox_of({k: v for k, v in raw.items() if k != "preset"}, example)
        else:
            example = links.sandbox_of(raw, None)
            if example is None:
                _fail(source, "the [example] holds neither a preset, a list nor a collection")
    except MetricsError as exc:
        if exc.source == source:
            raise
        _fail(source, f"[example]: {exc}")
    specs = data.get("exercise", [])
    if not isinstance(specs, list) or not MIN_EXERCISES <= len(specs) <= MAX_EXERCISES:
        _fail(source, f"a lesson has {MIN_EXERCISES}-{MAX_EXERCISES} [[exercise]] tables, "
                      f"this one {len(specs) if isinstance(specs, list) else 0}")
    exercises = []
    for i, spec in enumerate(specs):
        try:
            exercises.append(links.from_spec(spec, example, collection))
        except MetricsError as exc:
            _fail(source, f"exercise {i + 1}: {exc}")
    lesson = Lesson(id=lesson_id, title=data["title"].strip(), order=data["order"], summary=data["summary"].strip(),
                    text=data["text"].strip(), try_text=data["try"].strip(), example=example, collection=collection,
                    exercises=tuple(exercises), preset=preset)
    for key, text in (("text", lesson.text), ("try", lesson.try_text), ("summary", lesson.summary)):
        try:
            render(lesson, text)
        except MetricsError as exc:
            _fail(source, f"the {key}: {exc}")
    for key, text in (("text", lesson.text), ("try", lesson.try_text)):     # the summary speaks in general
        for problem in prose.problems(lesson, text):
            _fail(source, f"the {key} contradicts its example: {problem}", "make the words say what the example holds")
    for i, ex in enumerate(lesson.exercises):
        for where, shown in on_the_page(lesson, ex).items():
            number = leaks.leak(ex, shown)
            if number is not None:
                _fail(source, f"exercise {i + 1} is answered on its page before it is answered: the {where} shows "
                              f"{number!r}", "ask about a changed list (give the exercise its own grades = [...]) "
                                             f"or take the number out of the {where}")
    return lesson


def example_text(lesson: Lesson) -> str:
    """The numbers the lesson's example shows, as the page writes them: for a list, DCG, IDCG and
    nDCG at its cutoff and the per-rank table (gain, discount, contribution, DCG, IDCG, nDCG at every
    rank); for a collection, nDCG per query, the means and B's wins and losses."""
    if lesson.collection is not None:
        summary = lesson.collection.summary()
        table = lesson.collection.per_query()
        cells = [f"{v:.4f}" for v in table.to_numpy().ravel()]
        return " ".join([*cells, f"{summary['mean_a']:.4f}", f"{summary['mean_b']:.4f}",
                         f"{summary['wins_b']:.0f}", f"{summary['losses_b']:.0f}"])
    sb = lesson.example
    assert sb is not None
    word = "exp" if sb.gain == "exp" else "linear"
    values = sandbox.scores(sb)
    rows = sandbox.per_rank(sb)
    cells = [f"{values[f'{m} {word}']:.4f}" for m in ("DCG", "IDCG", "nDCG")]
    cells += [f"{v:g}" for col in ("gain", "ideal_gain") for v in rows[col]]
    cells += [f"{v:.4f}" for col in ("discount", "contribution", "dcg", "idcg", "ndcg") for v in rows[col]]
    return " ".join(cells)


def on_the_page(lesson: Lesson, ex: Exercise) -> dict[str, str]:
    """What the page of ``ex`` shows before it is answered, by where it shows it: the lesson's
    text, what to try, the example's numbers, and the exercise's question, hint and labels (the
    options of a choice among numbers are the choice itself, so they are not counted)."""
    labels = [] if ex.kind != "choice" or kinds.is_numeric(ex) else kinds.option_labels(ex)
    return {"text": render(lesson, lesson.text), "try": render(lesson, lesson.try_text),
            "example": example_text(lesson), "question": ex.question, "hint": ex.hint,
            "option labels": " · ".join(labels)}


def load_all(folder: Path | str = DATA) -> dict[str, Lesson]:
    """Every lesson of ``folder`` by id, in index order (``order``, then id)."""
    lessons = [load(path) for path in sorted(Path(folder).glob("*.toml"))]
    if not lessons:
        raise MetricsError(f"no lesson files (*.toml) in {folder}")
    return {lesson.id: lesson for lesson in sorted(lessons, key=lambda le: (le.order, le.id))}


_CATALOGUE: list[Mapping[str, Lesson]] = []
_CATALOGUE_LOCK = threading.Lock()


def catalogue() -> Mapping[str, Lesson]:
    """The package's lessons (:func:`load_all` of ``DATA``), read and checked once per process and
    shared read-only. Reading them computes every placeholder of every text: 0.7 s on the bench
    machines with each list's numbers computed once (:func:`metrics.analysis.sandbox.scores`; 2.5-3.0
    s before), which each Course page run and each change of a course paid, and which a lecture's
    burst would pay once per thread without the lock."""
    with _CATALOGUE_LOCK:
        if not _CATALOGUE:
            _CATALOGUE.append(MappingProxyType(load_all()))
        return _CATALOGUE[0]


def placeholder(lesson: Lesson, name: str, arg: str | None = None) -> tuple[float, str]:
    """The value of ``{name:arg}`` on the lesson's example and its text (4 decimals; a percentage
    for ``loss``; a whole number for counts and gains)."""
    if lesson.collection is not None and name in ("mean_a", "mean_b", "sd_a", "sd_b", "wins_b", "losses_b",
                                                  "queries"):
        value = lesson.collection.summary()[name]
        return value, (f"{value:.0f}" if name in ("wins_b", "losses_b", "queries") else f"{value:.4f}")
    if name in ("discount", "loss"):
        if not arg or not arg.isdigit():
            raise MetricsError(f"{{{name}}} needs a rank, e.g. {{{name}:5}}")
        row = sandbox.discount_table((int(arg),)).iloc[0]
        if name == "discount":
            return float(row["discount"]), f"{row['discount']:.3f}"
        return float(row["less than rank 1"]), f"{row['less than rank 1']:.0%}"
    if name in ("gain_exp", "gain_linear"):
        if not arg or not arg.isdigit() or int(arg) not in sandbox.GRADES:
            raise MetricsError(f"{{{name}}} needs a grade 0-4, e.g. {{{name}:3}}")
        value = float(sandbox.gain_table((int(arg),))["exponential gain" if name == "gain_exp"
                                                       else "linear gain"].iloc[0])
        return value, f"{value:g}"
    if name in kinds.LIST_QUANTITIES:
        sb = lesson.example
        if sb is None:
            raise MetricsError(f"{{{name}}} needs a list example")
        strategy = "zero"
        if arg in sandbox.GAIN_NAMES:
            sb = sb.replace(gain=arg)
        elif arg and arg.startswith("k") and arg[1:].isdigit():
            sb = sb.replace(cutoff=int(arg[1:]))
        elif arg in sandbox.STRATEGIES:
            strategy = arg
        elif arg:
            raise MetricsError(f"{{{name}:{arg}}}: the argument is a gain (exp, linear), a cutoff (k5) "
                               "or a strategy (zero, condensed, inferred)")
        probe = Exercise(kind="number", question="-", sandbox=sb, quantity=name, strategy=strategy)
        value = kinds.quantity_value(probe)
        return value, f"{value:.4f}"
    raise MetricsError(f"unknown placeholder {{{name}}}",
                       fix="use ndcg, dcg, idcg, ap, rr, p, r, discount, loss, gain_exp, gain_linear, mean_a, ...")


def render(lesson: Lesson, text: str) -> str:
    """``text`` with every placeholder replaced by its computed value."""
    return _PLACEHOLDER.sub(lambda m: placeholder(lesson, m.group(1), m.group(2))[1], text)


def placeholders(text: str) -> list[tuple[str, str | None]]:
    return [(m.group(1), m.group(2)) for m in _PLACEHOLDER.finditer(text)]
