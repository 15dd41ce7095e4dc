"""``python -m metrics compare QRELS BASELINE RUN [RUN ...]``: paired comparison against a baseline run.

For every measure and run: both means, the absolute and relative difference,
the bootstrap CI of the difference, the p-value of the chosen test (raw and
corrected across runs x measures), paired Cohen's d, and wins/ties/losses.
The page ``ndcg_lab/views/compare.py`` calls the same :func:`metrics.stats.compare`
with the same defaults (seed 0, 10,000 permutations and resamples), so its
numbers equal these.
"""
from __future__ import annotations

import argparse
import json

import pandas as pd

from .. import __version__, stats
from ..evaluation import as_runs, evaluate, means
from ..io import read_qrels
from ..measures import with_gain
from ..report.behaviour import json_value
from ..report.export import to_latex
from ..report.text import comparison_marks, format_p, markers_note, percent
from . import add_figure_options, add_latex_options, latex_options, named_runs, positive_int, write_figures

DEFAULT_MEASURE = "nDCG@10"
MISSING_NOTE = {"zero": "scored 0 (trec_eval -c)",
                "skip": "skipped: each run is paired with the baseline over the queries both have"}
FORMATS = ("table", "tsv", "json", "latex")


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare runs against a baseline run: differences, CIs, paired tests",
        description="Paired comparison of runs against a baseline run, per measure: means, absolute and "
                    "relative difference, bootstrap CI of the difference, p-value (raw and corrected over "
                    "runs x measures), paired Cohen's d, wins/ties/losses.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("qrels")
    p.add_argument("baseline", help="the baseline run (name=path names it)")
    p.add_argument("runs", nargs="+", help="runs compared with the baseline (name=path names one)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help=f"measure in ir_measures syntax (repeatable; default {DEFAULT_MEASURE})")
    p.add_argument("--gain", choices=("exp", "linear"), default=None,
                   help="rewrite nDCG/DCG measures to this gain (exp = 2^rel-1, linear = rel as trec_eval)")
    p.add_argument("--test", choices=tuple(stats.TESTS), default="t",
                   help="t: paired t-test; wilcoxon: signed-rank; randomization: Fisher's permutation test; "
                        "bootstrap: studentised paired bootstrap")
    p.add_argument("--correction", choices=tuple(stats.CORRECTIONS), default="holm",
                   help="multiple-testing correction across runs x measures (bh = Benjamini-Hochberg)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level for the markers")
    p.add_argument("--seed", type=int, default=stats.DEFAULT_SEED, help="seed of every random draw")
    p.add_argument("--permutations", type=positive_int, default=stats.DEFAULT_PERMUTATIONS,
                   help="random sign flips of the randomisation test (exact enumeration up to "
                        f"{stats.EXACT_MAX} non-zero differences)")
    p.add_argument("--resamples", type=positive_int, default=stats.DEFAULT_RESAMPLES,
                   help="bootstrap resamples (confidence intervals and the bootstrap test)")
    p.add_argument("--tolerance", type=float, default=stats.TIE_TOLERANCE,
                   help="|difference| at or below which a query counts as a tie")
    miss = p.add_mutually_exclusive_group()
    miss.add_argument("-c", dest="missing", action="store_const", const="zero",
                      help="score qrels queries missing from a run as 0 (default)")
    miss.add_argument("--skip-missing", dest="missing", action="store_const", const="skip",
                      help="leave out qrels queries that a run lacks: each run is paired with the baseline "
                           "over the queries both have")
    p.add_argument("--on-duplicate", choices=("error", "first"), default="error",
                   help="a document twice in one query of a run: refuse the run, or keep the first")
    p.add_argument("--format", choices=FORMATS, default="table")
    add_latex_options(p)
    add_figure_options(p)
    p.set_defaults(handler=run)



def run(args) -> int:
    measures = args.measures or [DEFAULT_MEASURE]
    if args.gain:
        measures = [with_gain(m, args.gain) for m in measures]
    qrels = read_qrels(args.qrels)
    runs = as_runs(named_runs([args.baseline, *args.runs]), on_duplicate=args.on_duplicate)
    missing = args.missing or "zero"
    frame = evaluate(qrels, runs, measures, missing=missing)
    baseline = runs[0].name
    names = [r.name for r in runs[1:]]
    measures = list(dict.fromkeys(frame["measure"].astype(str)))
    table = stats.compare(frame, baseline, names, measures, test=args.test, correction=args.correction,
                          alpha=args.alpha, seed=args.seed, permutations=args.permutations,
                          resamples=args.resamples, tolerance=args.tolerance, missing=missing)
    settings = {
        "tool": f"nDCG Lab {__version__}", "qrels": str(args.qrels), "qrels_sha256": qrels.digest,
        "baseline": baseline, "runs_sha256": {r.name: r.digest for r in runs},
        "test": args.test, "test_name": stats.TESTS[args.test], "correction": args.correction,
        "alpha": args.alpha, "seed": args.seed, "permutations": args.permutations, "resamples": args.resamples,
        "confidence_level": stats.DEFAULT_LEVEL, "tie_tolerance": args.tolerance,
        "missing_queries": MISSING_NOTE[missing],
        "order": "score desc, ties docno desc (trec_eval)",
    }
    print(render(table, frame, args.format, settings, latex_options(args)))
    if args.figures:
        from ..report.figures.sets import comparison_figures

        write_figures(comparison_figures(frame, baseline, names, measures), args)
    return 0


def render(table: pd.DataFrame, frame: pd.DataFrame, fmt: str, settings: dict, latex: dict | None = None) -> str:
    """The comparison table in one of :data:`FORMATS` (``latex``: options of
    :func:`metrics.report.export.to_latex`)."""
    if fmt == "json":
        extra = {}
        systems = [settings["baseline"], *dict.fromkeys(table["system"])]
        if len(systems) > 2:
            missing = "skip" if settings["missing_queries"] == MISSING_NOTE["skip"] else "zero"
            extra["tukey_hsd"] = {m: _records(stats.tukey_hsd(
                stats.paired_matrix(frame, m, systems, missing).to_numpy(), systems))
                for m in dict.fromkeys(table["measure"])}
        return json.dumps({"version": __version__, "settings": settings,
                           "means": {s: {m: float(v) for m, v in row.items()} for s, row in means(frame).iterrows()},
                           "comparisons": _records(table), **extra}, indent=2)
    if fmt == "tsv":
        return table.to_csv(sep="\t", index=False, lineterminator="\n", float_format="%.10g").rstrip("\n")
    if fmt == "latex":
        note = markers_note(stats.TESTS[settings["test"]], stats.CORRECTIONS[settings["correction"]],
                            settings["alpha"])
        return to_latex(means(frame), comparison_marks(table), {**settings, "markers": note},
                        **(latex or {})).rstrip("\n")
    if fmt == "table":
        return text_table(table, settings)
    raise ValueError(fmt)


def _records(table: pd.DataFrame) -> list[dict]:
    return [{k: json_value(v) for k, v in row.items()} for row in table.to_dict(orient="records")]


def text_table(table: pd.DataFrame, settings: dict) -> str:
    """A readable block per measure: the baseline's mean, then one line per run."""
    test, correction = stats.TESTS[settings["test"]], stats.CORRECTIONS[settings["correction"]]
    blocks = []
    for measure, rows in table.groupby("measure", sort=False):
        first = rows.iloc[0]
        low, high = int(rows["n_queries"].min()), int(rows["n_queries"].max())
        per_run = low != high or rows["baseline_mean"].nunique() > 1   # --skip-missing: pairs differ per run
        queries = f"{low} queries" if low == high else f"{low}-{high} queries, each run paired over its own"
        base = f"baseline {first.baseline}" + ("" if per_run else f" = {first.baseline_mean:.4f}")
        head = (f"{measure}  {base}  ({queries}; "
                f"{test}; {correction} correction over {len(table)} comparison{'s' if len(table) != 1 else ''}; "
                f"seed {settings['seed']})")
        shown = pd.DataFrame({
            "system": rows["system"], "mean": rows["mean"].map("{:.4f}".format),
            **({"n": rows["n_queries"].astype(int), "baseline": rows["baseline_mean"].map("{:.4f}".format)}
               if per_run else {}),
            "diff": rows["diff"].map("{:+.4f}".format), "rel": rows["rel_diff"].map(percent),
            "95% CI of diff": [f"[{lo:+.4f}, {hi:+.4f}]" for lo, hi in zip(rows["diff_ci_low"], rows["diff_ci_high"])],
            "p": rows["p_value"].map(format_p), "p adj": rows["p_adjusted"].map(format_p),
            "d": rows["effect_size"].map("{:+.3f}".format),
            "W/T/L": [f"{w}/{t}/{lost}" for w, t, lost in zip(rows["wins"], rows["ties"], rows["losses"])],
            "sig": rows["marker"].replace("", "-"),
        })
        blocks.append(head + "\n" + shown.to_string(index=False))
    return "\n\n".join(blocks)
