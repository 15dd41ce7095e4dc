"""The teaching sandbox: one editable ranked list, measured by the library's own engine.

A :class:`Sandbox` is a list of up to :data:`MAX_DOCS` documents with a grade
each (0-4, or ``None`` for unjudged), a cutoff k and a gain. Every number it
shows comes from :func:`metrics.evaluate` on a tiny run and qrels built from
the list (:func:`tables`); nothing here re-implements a formula. Many lists at
once (the what-if search, the tie check) become many queries of one run, so a
single vectorised evaluation scores them all.

The qrels of a sandbox hold the grades of the judged documents in the list
plus ``missed``: relevant documents the list does not contain (they raise IDCG
and lower recall, as documents a real system failed to retrieve do).

Modules: ``lists`` (the list, its edits, the presets and the shareable link) and ``scoring``
(everything the engine computes from lists).
"""
from .lists import GAIN_NAMES, GRADES, MAX_DOCS, PRESETS, STRATEGIES, Preset, Sandbox, from_params, to_params
from .scoring import (
    apply_move,
    compare_systems,
    discount_curve,
    discount_table,
    gain_table,
    list_values,
    measure_names,
    per_rank,
    ranked,
    scores,
    strategies,
    tables,
    tie_orderings,
    what_if,
)

__all__ = ["Sandbox", "Preset", "PRESETS", "MAX_DOCS", "GRADES", "STRATEGIES", "tables", "ranked",
           "scores", "per_rank", "gain_table", "discount_table", "discount_curve", "strategies",
           "tie_orderings", "what_if", "apply_move", "compare_systems", "to_params", "from_params",
           "list_values", "GAIN_NAMES", "measure_names"]
