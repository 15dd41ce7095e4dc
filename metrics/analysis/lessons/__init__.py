"""Lessons and exercises that teach how nDCG behaves, as data computed by the library's engine.

``model`` loads and checks the lesson files (``data/*.toml``, one per lesson) and fills their
prose's placeholders with computed numbers; ``kinds`` computes every exercise's answer,
``exercises`` checks a student's, ``solutions`` works the arithmetic and names the usual mistake,
``links`` packs a set of exercises into a link that holds no answer, and ``collection`` is the
lessons' tiny collection of queries.
"""
from .exercises import (
    KINDS,
    QUANTITIES,
    Collection,
    Exercise,
    Mistake,
    Result,
    answer,
    check,
    decode,
    diagnose,
    encode,
    from_spec,
    mistakes,
    option_labels,
    quantity_value,
    worked,
)
from .model import DATA, Lesson, catalogue, load, load_all, placeholder, placeholders, render

__all__ = ["KINDS", "QUANTITIES", "Collection", "Exercise", "Mistake", "Result", "answer", "check", "decode",
           "diagnose", "encode", "from_spec", "mistakes", "option_labels", "quantity_value", "worked", "DATA",
           "Lesson", "catalogue", "load", "load_all", "placeholder", "placeholders", "render"]
