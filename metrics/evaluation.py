"""evaluate(qrels, runs, measures) -> the tidy per-query frame, plus means and curves.

Validation (metrics.io) and ordering (metrics.ranking) happen apart from the
measure kernels (metrics.measures), as in PyTerrier's Experiment. :func:`score_runs` gives the
same values as arrays (:class:`Scores`, with :func:`mean_values`), without pandas: the command
line prints from them, so that ``python -m metrics eval`` does not import pandas.

``metrics.evaluate``, the function, is the engines' dispatcher (:func:`metrics.engines.evaluate`);
its local engine calls :func:`evaluate` of this module. The options every evaluation takes
are declared once, in :class:`Options`.
"""
from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from . import io
from .errors import MetricsError
from .io.tables import is_frame
from .measures import Context, aggregate, compute, compute_curve, expand, parse, parse_family
from .ranking import Ranked, rank

if TYPE_CHECKING:
    import pandas as pd

TIE_DECIMALS = 12
"""Means that agree to this many decimals are tied: summation-order noise between identical systems
is no difference in rank (used wherever systems are ranked by their means)."""

DEFAULT_MEASURES = ("nDCG@5", "nDCG@10", "nDCG@20", "AP", "RR", "R@100", "P@10", "Judged@10")


@dataclass(frozen=True)
class Options:
    """How runs are evaluated: the keyword options of :func:`evaluate`, :func:`score_runs`, the
    engines and ``metrics.evaluate``, declared once here.

    ``missing="zero"`` scores qrels queries a run lacks as 0 (trec_eval -c); ``"skip"`` leaves
    them out. ``judged_only`` condenses every list (-J); ``inferred`` is a proxy qrels whose
    labels fill unjudged documents; ``max_depth`` keeps the top documents per query (-M);
    ``rel_level`` is the binary threshold (-l); ``ties="rank"`` orders by the rank column;
    ``on_duplicate="first"`` keeps the first of a docno given twice for a query (default: an
    error naming both lines); ``progress`` is called as ``progress(done, total, message)``.
    """

    missing: str = "zero"
    judged_only: bool = False
    inferred: object = None
    max_depth: int | None = None
    rel_level: int = 1
    ties: str = "score"
    on_duplicate: str = "error"
    progress: Callable | None = None


def takes_options(function):
    """Show :class:`Options` in the signature of ``function(..., **options)`` (help(), IDEs)."""
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default)
               for f in dataclasses.fields(Options) if f.name not in signature.parameters]
    function.__signature__ = signature.replace(parameters=params)
    return function


def as_runs(runs, *, on_duplicate: str = "error") -> list:
    """Normalise one run, a list of runs or a {name: run} mapping into parsed Runs.

    One run: a path, bytes, a frame (PyTerrier, trectools), a parsed Run, a ranx ``Run`` or
    trectools ``TrecRun``, or a ``{qid: {docno: score}}`` dict. A mapping whose values are not
    ``{docno: score}`` dicts is ``{name: run}``: ``{name: {qid: {docno: score}}}`` is as many
    runs as it has names (see :func:`is_ranx_dict`). Runs of a list that share a name are told
    apart as ``name#1``, ``name#2``, ...
    """
    parsed = [read_named(name, run, on_duplicate) for name, run in run_specs(runs)]
    names = unique_names([r.name for r in parsed])
    return [r if r.name == n else dataclasses.replace(r, name=n) for r, n in zip(parsed, names)]


def read_named(name: str | None, run, on_duplicate: str = "error"):
    """``run`` parsed (:func:`metrics.io.read_run`) and called ``name`` (its own name when None)."""
    if name is None:
        return io.read_run(run, on_duplicate=on_duplicate)
    parsed = io.read_run(run, name=name, on_duplicate=on_duplicate)
    return parsed if parsed.name == name else dataclasses.replace(parsed, name=name)


def unique_names(names: list[str]) -> list[str]:
    """``names`` with every name given more than once numbered: ``x, x, y`` -> ``x#1, x#2, y``."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(f"{name}#{seen[name]}" if names.count(name) > 1 else name)
    return out


def run_specs(runs) -> list[tuple[str | None, object]]:
    """(name or None, run) pairs as ``metrics.evaluate`` takes them: a mapping name -> run, a list of
    runs, or one run. A run is a path, glob or URL, a list/tuple of shard files (inside a list or
    mapping), bytes, a DataFrame, a parsed Run or a {qid: {docno: score}} dict."""
    if isinstance(runs, Mapping) and not is_ranx_dict(runs):
        return [(str(k), v) for k, v in runs.items()]
    if is_single_run(runs):
        return [(None, runs)]
    return [(None, r) for r in runs]


def is_ranx_dict(value) -> bool:
    """A ranx-style ``{qid: {docno: score}}`` dict (one run), as opposed to ``{name: run}``.

    Decided by the first entry, two levels down: a score there (not a mapping) makes one run;
    ``{name: {qid: {docno: score}}}`` has a mapping there, so it is named runs.
    """
    if not isinstance(value, Mapping) or not value:
        return False
    first = next(iter(value.values()))
    if not isinstance(first, Mapping):
        return False
    inner = next(iter(first.values()), None)
    return not isinstance(inner, Mapping)


def is_single_run(value) -> bool:
    """One run rather than a list or ``{name: run}`` mapping of runs (see :func:`as_runs`)."""
    module = type(value).__module__
    return (isinstance(value, (str, Path, bytes, bytearray, pa.Table, io.Run)) or is_frame(value) or is_ranx_dict(value)
            or (module.startswith(("ranx", "trectools")) and not isinstance(value, Mapping | Sequence)))


def rank_run(qrels, run, *, missing="zero", ties="score", max_depth=None, inferred=None,
             judged_only=False) -> Ranked:
    """Parse (if needed), order and join one run; the input of every kernel."""
    qrels = io.read_qrels(qrels)
    run = io.read_run(run)
    proxy = io.read_qrels(inferred) if inferred is not None else None
    ranked = rank(run, qrels, missing=missing, ties=ties, max_depth=max_depth, inferred=proxy)
    return ranked.condensed() if judged_only else ranked


def evaluate_ranked(ranked: Ranked, measures, *, rel_level: int = 1) -> dict[str, np.ndarray]:
    """{measure string: per-query values} for one ranked run."""
    ctx = Context(ranked, rel_level=rel_level)
    parsed = [parse(x) for x in measure_list(measures)]
    # Measures that differ only in cutoff share running sums; compute them together and
    # release those sums before the next family, so peak memory holds one family's arrays.
    family_of = {str(m): str(m.at(None)) for m in parsed}
    values = {}
    for group in dict.fromkeys(family_of.values()):
        for m in parsed:
            if family_of[str(m)] == group and str(m) not in values:
                values[str(m)] = compute(ctx, m)
        ctx.release_running()
    return {str(m): values[str(m)] for m in parsed}


def measure_list(measures) -> list:
    """The measures asked for as a non-empty list, trec_eval spellings expanded (``P.5,10``, ``all_trec``)."""
    if isinstance(measures, str):
        measures = [measures]
    measures = [m for text in measures for m in expand(text)]
    if not measures:
        raise MetricsError("no measures given", fix="pass at least one, e.g. nDCG@10")
    return measures


@dataclass(frozen=True)
class Scores:
    """One run's per-query values as arrays: ``values[m][i]`` is measure ``m`` on query ``qids[i]``
    (measures in the order asked, queries in the order of :func:`metrics.ranking.rank`).
    :func:`frame_of` makes the tidy frame of a list of them."""

    system: str
    qids: np.ndarray
    values: dict[str, np.ndarray]


@takes_options
def score_runs(qrels, runs, measures=DEFAULT_MEASURES, *, one_pass: Callable | None = None,
               **options) -> list[Scores]:
    """:func:`evaluate` as arrays: one :class:`Scores` per run, no pandas involved.

    ``one_pass(name, run, qrels, measures, options)``: a run's :class:`Scores` found another
    way, or None (the engines' reader of large files, :mod:`metrics.engines.local`)."""
    o = Options(**options)
    qrels = io.read_qrels(qrels)
    proxy = io.read_qrels(o.inferred) if o.inferred is not None else None
    parsed_measures = [parse(m) for m in measure_list(measures)]
    out = []
    specs = run_specs(runs)
    for i, (name, _) in enumerate(specs):
        scored = None if one_pass is None else one_pass(name, specs[i][1], qrels, parsed_measures, o)
        if scored is not None:
            out.append(scored)
        else:
            # Each run is read when its turn comes and handed to rank() as its only holder, which
            # lets the columns it does not keep go before the ranked arrays are built.
            ranked = rank(read_named(name, specs[i][1], o.on_duplicate), qrels, missing=o.missing, ties=o.ties,
                          max_depth=o.max_depth, inferred=proxy)
            if o.judged_only:
                ranked = ranked.condensed()
            out.append(Scores(ranked.name, ranked.qids,
                              evaluate_ranked(ranked, parsed_measures, rel_level=o.rel_level)))
            del ranked
        if o.progress is not None:
            o.progress(i + 1, len(specs), f"evaluated {out[-1].system} in memory")
    names = unique_names([s.system for s in out])
    return [s if s.system == n else dataclasses.replace(s, system=n) for s, n in zip(out, names)]


@takes_options
def evaluate(qrels, runs, measures=DEFAULT_MEASURES, **options) -> pd.DataFrame:
    """Evaluate runs against qrels in memory: a tidy frame ``system, qid, measure, value``;
    ``options``: :class:`Options`.

    ``metrics.evaluate`` (:func:`metrics.engines.evaluate`) adds the streaming and Dask
    engines and runs given as several files; this function is its local engine.
    """
    return frame_of(score_runs(qrels, runs, measures, **options))


def frame_of(scores: list[Scores]) -> pd.DataFrame:
    """The tidy frame ``system, qid, measure, value`` of :class:`Scores`, one run after another."""
    import pandas as pd

    frames = [tidy(s.system, s.qids, s.values, list(s.values)) for s in scores]
    return pd.concat(frames, ignore_index=True) if frames else tidy("", np.array([]), {}, [])


def scores_of(frame: pd.DataFrame) -> list[Scores]:
    """:class:`Scores` of a tidy frame (the inverse of :func:`frame_of`), systems and measures in
    the order they first appear."""
    out = []
    system_column = frame["system"].to_numpy(dtype=object)
    for system in dict.fromkeys(system_column):
        sub = frame[system_column == system]
        measure_column = sub["measure"].to_numpy(dtype=object)
        qids = sub["qid"].to_numpy(dtype=object)[measure_column == measure_column[0]]   # the first measure's
        values = {}
        for m in dict.fromkeys(measure_column):
            values[str(m)] = sub[measure_column == m]["value"].to_numpy(dtype=np.float64)
        out.append(Scores(str(system), qids, values))
    return out


def mean_values(scores: list[Scores]) -> dict[str, dict[str, float]]:
    """``{system: {measure: mean over queries}}``: the numbers :func:`means` gives for
    ``frame_of(scores)``, to the last bit, without pandas.

    Runs without queries are left out, as they have no rows in the frame. Means and sums
    (counts) add the values of a run and measure as pandas' groupby does: with
    ``np.add.reduceat`` when no value in the whole frame is NaN, else with compensated (Kahan)
    sums that skip NaN (:func:`compensated_sums`); gm_map and gm_bpref use :func:`aggregate`.
    """
    present = [s for s in scores if len(s.qids)]
    groups = [(s.system, m, v) for s in present for m, v in s.values.items()]
    if not groups:
        return {}
    flat = np.concatenate([np.asarray(v, dtype=np.float64) for _, _, v in groups])
    sizes = np.array([len(v) for _, _, v in groups])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    if np.isnan(flat).any():
        sums, counts = compensated_sums(flat, starts, sizes)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    else:
        sums = np.add.reduceat(flat, starts)
        mean = sums / sizes.astype(np.float64)
    out: dict[str, dict[str, float]] = {s.system: {} for s in present}
    for i, (system, m, v) in enumerate(groups):
        rule = parse(m).family.aggregate
        value = sums[i] if rule == "sum" else aggregate(m, v) if rule == "gmean" else mean[i]
        out[system][m] = float(value)
    return out


def compensated_sums(flat: np.ndarray, starts: np.ndarray, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kahan sums of the groups ``flat[starts[g]:starts[g] + sizes[g]]``, NaN skipped, and the
    count of values added: for each value ``x`` of a group in order, ``y = x - c``,
    ``t = s + y``, ``c = (t - s) - y`` (0 when that is NaN, as after an infinity), ``s = t``.

    Vectorised over the groups; the loop runs over positions within a group.
    """
    n_groups = len(sizes)
    width = int(sizes.max()) if n_groups else 0
    grid = np.full((n_groups, width), np.nan)
    rows = np.repeat(np.arange(n_groups), sizes)
    cols = np.arange(len(flat)) - np.repeat(starts, sizes)
    grid[rows, cols] = flat
    s = np.zeros(n_groups)
    c = np.zeros(n_groups)
    counts = np.zeros(n_groups, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        for j in range(width):
            x = grid[:, j]
            ok = ~np.isnan(x)
            y = x - c
            t = s + y
            c_next = (t - s) - y
            c = np.where(ok, np.where(np.isnan(c_next), 0.0, c_next), c)
            s = np.where(ok, t, s)
            counts += ok
    return s, counts


def tidy(system: str, qids: np.ndarray, values: dict, names: list[str]) -> pd.DataFrame:
    """Long frame ``system, qid, measure, value`` from {measure: per-query values}.

    The string columns are built in Arrow and handed to pandas as they are (pandas' ``string``
    dtype keeps them in Arrow): through Python strings, 600,000 rows took 0.13-0.27 s."""
    import pandas as pd

    n, k = len(qids), len(names)
    text = pa.large_string()
    query = pa.array(np.asarray(qids, dtype=object), text)
    measure = pa.array(list(names), text)

    def column(array: pa.Array) -> pd.Series:
        return pd.Series(pd.arrays.ArrowStringArray(array), copy=False)

    return pd.DataFrame({
        "system": column(pa.repeat(pa.scalar(system, text), n * k)),
        "qid": column(pa.concat_arrays([query] * k) if k else query.slice(0, 0)),
        "measure": column(measure.take(np.repeat(np.arange(k), n))),
        "value": np.concatenate([values[m] for m in names]) if names and n else np.array([], dtype=float),
    })


def first_seen(column) -> list:
    """The distinct values of a frame's column in order of appearance: ``pd.unique`` (hashed), not
    ``dict.fromkeys`` (a Python loop over the rows; 1.7 s on an Arrow-backed column of 300,000)."""
    import pandas as pd

    return list(pd.unique(column))


def means(frame: pd.DataFrame) -> pd.DataFrame:
    """System x measure table of means over queries: sums for counts, geometric means for gm_map
    and gm_bpref, as trec_eval. :func:`mean_values` gives the same numbers from :class:`Scores`."""
    order = first_seen(frame["measure"])
    systems = first_seen(frame["system"])
    grouped = frame.groupby(["system", "measure"], sort=False, observed=True)["value"]
    table = grouped.mean().unstack("measure")
    sums = grouped.sum().unstack("measure")
    for m in order:
        rule = parse(m).family.aggregate
        if rule == "sum":
            table[m] = sums[m]
        elif rule == "gmean":
            values = frame[frame["measure"] == m].groupby("system", sort=False, observed=True)["value"]
            table[m] = values.agg(lambda v, m=m: aggregate(m, v))
    return table.reindex(index=systems, columns=order)


def curve(qrels, run, family: str = "nDCG", *, max_k: int | None = None, missing="zero", judged_only=False,
          inferred=None, max_depth=None, rel_level: int = 1, ties="score") -> pd.DataFrame:
    """Per-query values of a measure family at every cutoff k = 1..max_k, in one pass.

    ``max_k`` defaults to the deepest ranking in the run. Returns a frame with
    index ``qid`` and one column per k.
    """
    ranked = rank_run(qrels, run, missing=missing, ties=ties, max_depth=max_depth, inferred=inferred,
                      judged_only=judged_only)
    return curve_ranked(ranked, family, max_k=max_k, rel_level=rel_level)


def curve_ranked(ranked: Ranked, family: str = "nDCG", *, max_k: int | None = None,
                 rel_level: int = 1) -> pd.DataFrame:
    measure = parse_family(family)
    if max_k is None:
        max_k = int(ranked.lengths.max()) if ranked.n_queries else 1
    max_k = max(int(max_k), 1)
    import pandas as pd

    values = compute_curve(Context(ranked, rel_level=rel_level), measure, max_k)
    return pd.DataFrame(values, index=pd.Index(ranked.qids, name="qid", dtype="string"),
                        columns=pd.RangeIndex(1, max_k + 1, name="k"))
