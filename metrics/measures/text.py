"""trec_eval's two text "measures": relstring (per query) and runid (in the summary).

relstring(length=10): the grades of the first ``length`` retrieved documents,
one character each: the digit for grades 0-9, '>' above 9, '-' for a document
the qrels lack and '.' for one judged with a negative grade ("pooled but
unjudged"); empty for a query the run lacks. runid is the run's tag (trec_eval
keeps the tag of the run file's last line). Neither is a number, so they are
not in the registry that ``evaluate`` reads; the trec_eval command prints them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ordering import positions
from ..ranking import Ranked
from .trec_names import TrecMeasure


@dataclass(frozen=True)
class TextMeasure:
    """A text value trec_eval prints: ``relstring`` (with its length) or ``runid``."""

    name: str
    length: int = 0


def relstring(ranked: Ranked, length: int = 10) -> np.ndarray:
    """Per query, the relstring of its first ``length`` documents (an array of str)."""
    length = max(int(length), 0)
    if length == 0 or ranked.n_queries == 0:
        return np.full(ranked.n_queries, "", dtype=object)
    pos = positions(ranked.offsets)
    keep = pos < length
    grade = ranked.rel[keep]
    judged = ranked.judged[keep]
    code = np.where(~judged, ord("-"), np.where(grade < 0, ord("."),
                    np.where(grade > 9, ord(">"), ord("0") + np.clip(grade, 0, 9))))
    query = np.repeat(np.arange(ranked.n_queries), ranked.lengths)[keep]
    matrix = np.zeros((ranked.n_queries, length), dtype=np.uint8)
    matrix[query, pos[keep]] = code
    strings = np.frombuffer(matrix.tobytes(), dtype=f"S{length}")  # NUL padding is dropped
    return np.char.decode(strings, "ascii").astype(object)


TREC = (
    TrecMeasure("runid", "plain", lambda p, o: TextMeasure("runid"), value="text", per_query=False),
    TrecMeasure("relstring", "params", lambda values, o: TextMeasure("relstring", int(values[0])), (10.0,),
                value="text", summary=False),
)
