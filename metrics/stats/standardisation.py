"""Standardised scores: each topic's score as its deviation from a reference mean, in standard deviations.

Webber, Moffat and Zobel (2008, "Score standardization for inter-collection comparison of
retrieval systems") score a system on a topic by z = (x - mean) / sd, the mean and deviation
of that topic's scores over a reference set of systems, so that hard and easy topics weigh
alike and rounds of an evaluation compare. trec_eval's ``-Z FILE`` prints these z-scores,
reading the reference from a file of ``qid measure mean stddev`` lines.

The deviation here is the sample standard deviation (n - 1 in the denominator). trec_eval only
divides by what the file gives; the file of its own test suite was made that way: its binary
measures over 74 reference runs (success_1 of topic 301: mean 41/74 = 0.5541, deviation 0.5005)
have deviation^2 = p(1 - p) * 74/73, the sample variance, not p(1 - p). ``ddof=0`` gives the
population deviation instead.

trec_eval's rules, kept by :func:`zscore`: a zero deviation gives 0 when the score equals the
mean and no value otherwise; a topic or measure the reference lacks gives no value. trec_eval
prints -1000000 for "no value"; :func:`standardise` leaves NaN (the arithmetic is
:mod:`metrics.measures.zscores`).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..errors import MetricsError
from ..measures import trec_plan
from ..measures.zscores import read_zscore_file, zscore


def read_zscores(src, *, source: str | None = None) -> pd.DataFrame:
    """A trec_eval z-score file (``qid measure mean stddev`` a line) as a frame of those columns."""
    table = read_zscore_file(src, source=source)
    return pd.DataFrame([(q, m, mean, sd) for (q, m), (mean, sd) in table.items()],
                        columns=["qid", "measure", "mean", "stddev"])


def reference_stats(frame: pd.DataFrame, *, ddof: int = 1) -> pd.DataFrame:
    """Per (qid, measure), the mean and standard deviation of a tidy frame's values over its systems.
    Where every system scores the same, the mean is that value and the deviation exactly 0: summing
    0.1 three times leaves a deviation of about 1e-17, which would turn a tie into z = -0.8."""
    grouped = frame.groupby(["qid", "measure"], sort=True, observed=True)["value"]
    out = grouped.agg(mean="mean", low="min", high="max",
                      stddev=lambda v: float(np.std(v.to_numpy(np.float64), ddof=ddof)) if len(v) > ddof else 0.0)
    tied = out["low"] == out["high"]
    out.loc[tied, "mean"] = out.loc[tied, "low"]
    out.loc[tied, "stddev"] = 0.0
    return out.drop(columns=["low", "high"]).reset_index()


def write_zscores(stats: pd.DataFrame, path) -> None:
    """Write ``stats`` (qid, measure, mean, stddev) as a trec_eval z-score file, full precision."""
    with open(path, "w", encoding="utf-8") as f:
        for row in stats.itertuples(index=False):
            f.write(f"{row.qid} {row.measure} {row.mean!r} {row.stddev!r}\n")


def _measure_names(names) -> dict[str, str]:
    """Our measure string for each name of a z-score file: ours as is, or trec_eval's printed name."""
    printed = {v.printed: str(v.measure) for v in trec_plan(["all_trec"])}
    out = {}
    for name in names:
        if name in printed:
            out[name] = printed[name]
            continue
        head, _, tail = name.rpartition("_")
        try:
            values = trec_plan([f"{head}.{tail}"]) if head and tail else []
        except MetricsError:
            values = []
        match = [v for v in values if v.printed == name]
        out[name] = str(match[0].measure) if match else name
    return out


def standardise(frame: pd.DataFrame, reference=None, *, ddof: int = 1) -> pd.DataFrame:
    """Z-scores of a tidy frame (system, qid, measure, value) per topic against a reference set of runs.

    ``reference``: None (the frame's own systems), a tidy frame of reference runs, or a trec_eval
    z-score file (a path, or the frame :func:`read_zscores` returns), whose measures may be named as
    trec_eval prints them (``P_10``, ``map``) or as here (``P@10``, ``AP``). Returns the frame with
    ``value`` standardised, the raw score in ``raw``, and the reference described in
    ``attrs["reference"]``. A topic or measure the reference lacks, or a zero deviation with a
    score off the mean, gives NaN.
    """
    if frame.empty:
        raise MetricsError("nothing to standardise: the frame is empty", fix="evaluate some runs first")
    if reference is None:
        stats = reference_stats(frame, ddof=ddof)
        described = f"the {frame['system'].nunique()} runs evaluated (sample deviation)" if ddof == 1 else \
            f"the {frame['system'].nunique()} runs evaluated (ddof={ddof})"
    elif isinstance(reference, pd.DataFrame) and "value" in reference.columns:
        stats = reference_stats(reference, ddof=ddof)
        described = f"{reference['system'].nunique()} reference runs" + (" (sample deviation)" if ddof == 1 else
                                                                          f" (ddof={ddof})")
    else:
        stats = reference if isinstance(reference, pd.DataFrame) else read_zscores(reference)
        described = "z-score file" if isinstance(reference, pd.DataFrame) else f"z-score file {reference}"
        names = _measure_names(stats["measure"].unique())
        stats = stats.assign(measure=stats["measure"].map(names))
    stats = stats.drop_duplicates(["qid", "measure"], keep="first")
    keyed = frame.assign(qid=frame["qid"].astype(str), measure=frame["measure"].astype(str))
    merged = keyed.merge(stats[["qid", "measure", "mean", "stddev"]], on=["qid", "measure"], how="left")
    out = frame.copy()
    out["raw"] = frame["value"].to_numpy()
    out["value"] = zscore(merged["value"], merged["mean"], merged["stddev"])
    out.attrs["reference"] = described
    return out


__all__ = ["read_zscores", "reference_stats", "write_zscores", "standardise"]
