"""What a class task is: its definition (checked once, stored as JSON), times, and the public split.

Times are seconds since the epoch, UTC; ISO 8601 text is read with :func:`parse_time`
(a time without a zone is UTC) and written with :func:`iso`. The public topics are an
explicit list, or ``round(fraction * n)`` of the judged topics drawn without replacement by
``numpy.random.default_rng(seed)`` from the topic ids sorted as strings, so that the same
qrels and seed give the same split on every machine.
"""
from __future__ import annotations

import functools
import json
import math
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

import numpy as np

from ..errors import MetricsError
from ..evaluation import measure_list
from ..measures import parse, with_gain
from ..stats import CORRECTIONS, TESTS

__all__ = ["TaskDefinition", "parse_time", "iso", "public_split", "BOARD_RULES", "FINAL_TOPICS"]

BOARD_RULES = ("best", "latest")
FINAL_TOPICS = ("hidden", "all")
TITLE_LIMIT = 200
DESCRIPTION_LIMIT = 20_000


def parse_time(text: str | float | datetime, *, what: str = "time") -> float:
    """Seconds since the epoch of an ISO 8601 time (``2026-12-01T18:00``, ``...Z``, ``...+01:00``;
    no zone means UTC), a datetime, or a number of seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    if isinstance(text, datetime):
        moment = text
    else:
        raw = str(text).strip()
        try:
            moment = datetime.fromisoformat(raw[:-1] + "+00:00" if raw.endswith(("Z", "z")) else raw)
        except ValueError:
            raise MetricsError(f"the {what} {raw!r} is not an ISO 8601 time",
                               fix="write it as 2026-12-01T18:00Z (UTC) or with an offset, 2026-12-01T19:00+01:00") \
                from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def iso(seconds: float | None) -> str | None:
    """``2026-12-01T18:00:00Z`` (UTC, whole seconds), or None."""
    if seconds is None:
        return None
    return datetime.fromtimestamp(float(seconds), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def day_start(seconds: float) -> float:
    """The start of the UTC day that holds ``seconds``."""
    return math.floor(seconds / 86400.0) * 86400.0


@dataclass(frozen=True)
class TaskDefinition:
    """A class task's rules.

    ``measures``: measure strings, the first is the primary one (the board's order); ``gain``
    (``exp``, ``linear`` or None) is applied to every nDCG-like measure. ``public_topics`` (an
    explicit list) or ``public_fraction`` with ``seed`` pick the public topics; the others of
    the qrels are hidden. ``opens``/``closes``: UTC seconds (``opens`` None: open at once).
    ``per_day`` (per UTC day) and ``total``: submissions per team, None for no bound.
    ``finals``: how many submissions a team may choose for the final standings (none chosen:
    its latest). ``board``: the public board ranks a team by its ``best`` or ``latest``
    submission. ``final_topics``: the final standings use the ``hidden`` topics or ``all``.
    ``dev_qrels``: the public topics' judgments are open to teams. ``anonymous``: boards show
    labels (``Team 1``...) instead of team names. ``max_bytes``: the size bound of one run file.
    ``test``/``correction``/``alpha``: the significance tests of the boards (metrics.stats).
    """

    title: str
    closes: float
    measures: tuple[str, ...] = ("nDCG@10",)
    description: str = ""
    gain: str | None = None
    public_fraction: float | None = 0.3
    seed: int = 0
    public_topics: tuple[str, ...] | None = None
    opens: float | None = None
    per_day: int | None = None
    total: int | None = None
    finals: int = 1
    board: str = "best"
    final_topics: str = "hidden"
    dev_qrels: bool = False
    anonymous: bool = False
    max_bytes: int | None = None
    test: str = "t"
    correction: str = "holm"
    alpha: float = 0.05
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def primary(self) -> str:
        return self.measures[0]

    def checked(self) -> TaskDefinition:
        """This definition with its measures canonical (gain applied) and every field checked."""
        title = " ".join(str(self.title).split())
        if not title:
            raise MetricsError("the task needs a title", fix="give --title")
        if len(title) > TITLE_LIMIT or len(str(self.description)) > DESCRIPTION_LIMIT:
            raise MetricsError(f"the title or description is too long (at most {TITLE_LIMIT} and "
                               f"{DESCRIPTION_LIMIT} characters)", fix="shorten it")
        if self.gain not in (None, "exp", "linear"):
            raise MetricsError(f"unknown gain {self.gain!r}", fix="use exp or linear")
        named = []
        for m in measure_list(list(self.measures) or ["nDCG@10"]):
            text = str(parse(m))
            named.append(with_gain(text, self.gain) if self.gain else text)
        measures = tuple(dict.fromkeys(named))
        if self.public_topics is None:
            fraction = self.public_fraction
            if fraction is None or not 0.0 <= float(fraction) <= 1.0:
                raise MetricsError(f"the public fraction must lie in [0, 1], found {fraction!r}",
                                   fix="for example --public 0.3")
        for name, value in (("per-day", self.per_day), ("total", self.total)):
            if value is not None and int(value) < 1:
                raise MetricsError(f"the {name} cap must be at least 1, found {value!r}", fix="or leave it out")
        if int(self.finals) < 1:
            raise MetricsError(f"finals must be at least 1, found {self.finals!r}", fix="for example --finals 2")
        opens = None if self.opens is None else float(self.opens)
        closes = float(self.closes)
        if opens is not None and closes <= opens:
            raise MetricsError(f"the task closes ({iso(closes)}) before it opens ({iso(opens)})",
                               fix="give a closing time after the opening")
        if self.board not in BOARD_RULES:
            raise MetricsError(f"unknown board rule {self.board!r}", fix="use best or latest")
        if self.final_topics not in FINAL_TOPICS:
            raise MetricsError(f"unknown final topics {self.final_topics!r}", fix="use hidden or all")
        if self.test not in TESTS or self.correction not in CORRECTIONS:
            raise MetricsError(f"unknown test {self.test!r} or correction {self.correction!r}",
                               fix=f"tests: {', '.join(TESTS)}; corrections: {', '.join(CORRECTIONS)}")
        return replace(self, title=title, description=str(self.description), measures=measures, opens=opens,
                       closes=closes, public_topics=None if self.public_topics is None else
                       tuple(dict.fromkeys(str(q).strip() for q in self.public_topics if str(q).strip())),
                       per_day=None if self.per_day is None else int(self.per_day),
                       total=None if self.total is None else int(self.total), finals=int(self.finals),
                       seed=int(self.seed))

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> TaskDefinition:
        data = json.loads(text)
        known = {f.name for f in fields(cls)}
        data = {k: v for k, v in data.items() if k in known}
        for key in ("measures", "public_topics"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        if data.get("measures") is not None:
            data["measures"] = tuple(canonical_measure(m) for m in data["measures"])
        return cls(**data)


@functools.lru_cache(maxsize=256)
def canonical_measure(text: str) -> str:
    """``text`` as the engine prints it now: a task stored with an older spelling
    (``nDCG(dcg=exp-log2)@10``) keeps matching the scores of its new submissions."""
    return str(parse(text))


def public_split(judged: list[str], definition: TaskDefinition) -> set[str]:
    """The public topics among ``judged`` (the qrels' topic ids): the explicit list (each must be
    judged), else ``round(fraction * n)`` drawn with the stored seed from the ids sorted as strings."""
    ids = sorted(set(map(str, judged)))
    if definition.public_topics is not None:
        unknown = [q for q in definition.public_topics if q not in set(ids)]
        if unknown:
            raise MetricsError(f"{len(unknown)} public topic(s) have no judgments: "
                               f"{', '.join(map(repr, unknown[:5]))}",
                               fix="list topics of the qrels in the public topics file")
        return set(definition.public_topics)
    if definition.public_fraction is None:
        raise MetricsError("the task has neither public topics nor a public fraction",
                           fix="give --public-topics FILE or --public 0.3")
    k = int(round(float(definition.public_fraction) * len(ids)))
    rng = np.random.default_rng(definition.seed)
    chosen = rng.choice(len(ids), size=k, replace=False) if k else np.empty(0, dtype=np.int64)
    return {ids[int(i)] for i in chosen}
