"""Lessons and exercises that teach how nDCG behaves, as data computed by the library's engine.

``model`` loads and checks the lesson files (``data/*.toml``, one per lesson) and fills their
prose's placeholders with computed numbers; ``exercises`` computes every exercise's answer,
checks a student's, works the arithmetic, names the usual mistake, and packs a set of
exercises into a link that holds no answer.
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
from .model import DATA, Lesson, load, load_all, placeholder, placeholders, render

__all__ = ["KINDS", "QUANTITIES", "Collection", "Exercise", "Mistake", "Result", "answer", "check", "decode",
           "diagnose", "encode", "from_spec", "mistakes", "option_labels", "quantity_value", "worked", "DATA",
           "Lesson", "load", "load_all", "placeholder", "placeholders", "render"]
