"""trec_eval's z-score arithmetic (``-Z``): a score as its deviation from a reference mean, in deviations.

z = (x - mean) / sd, the mean and deviation of the topic's score over a reference set of runs,
read from a file of ``qid measure mean stddev`` lines. trec_eval's rules: a zero deviation gives 0
when the score equals the mean and no value otherwise; a topic or measure the file lacks gives
no value, which trec_eval prints as -1000000 (:data:`MISSING`). This module needs no pandas (the
trec_eval command imports it); :mod:`metrics.stats.standardisation` builds on it for tidy frames.
"""
from __future__ import annotations

import numpy as np

from ..io.judgment_files import read_judgment_lines
from .trec_names import atof

MISSING = -1000000.0   # trec_eval's value for a score without a reference


def read_zscore_file(src, *, source: str | None = None) -> dict[tuple[str, str], tuple[float, float]]:
    """A trec_eval z-score file as {(qid, measure): (mean, stddev)} (the first line of a pair that repeats)."""
    lines = read_judgment_lines(src, "zscores", source=source)
    out: dict[tuple[str, str], tuple[float, float]] = {}
    for qid, measure, mean, sd in zip(*(lines.column(c) for c in ("qid", "measure", "mean", "stddev"))):
        out.setdefault((str(qid), str(measure)), (atof(mean), atof(sd)))
    return out


def zscore(values, mean, stddev, *, missing: float = np.nan) -> np.ndarray:
    """trec_eval's conversion: (x - mean) / sd; with sd = 0, 0 if x == mean else ``missing``;
    NaN mean (no reference) gives ``missing``."""
    values, mean, stddev = (np.asarray(a, dtype=np.float64) for a in (values, mean, stddev))
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (values - mean) / stddev
    flat = np.where(values == mean, 0.0, missing)
    out = np.where(stddev != 0, z, flat)
    return np.where(np.isnan(mean) | np.isnan(stddev), missing, out)


__all__ = ["MISSING", "read_zscore_file", "zscore"]
