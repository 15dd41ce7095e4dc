"""``judges QRELS_A QRELS_B [RUN RUN ...] [-m M]``: agreement of two qrels on the pairs both judge
(confusion matrix, weighted kappa, Krippendorff's alpha, binary agreement, pairs judged by one
only) and, given runs, the system order under each with tau and tau_ap, the mean shift per system
and the systems whose significance against the baseline (the first run) changes."""
from __future__ import annotations

import argparse

import pandas as pd

from .. import __version__
from ..evaluation import as_runs
from ..io import read_qrels
from ..report.behaviour import FORMATS, render
from ..stats import DEFAULT_SEED, TESTS
from ..stats.behaviour import label_agreement, system_shift
from . import named_runs
from .eval import add_evaluation_options, evaluation_options, gained

DEFAULT_MEASURE = "nDCG@10"


def register(sub) -> None:
    p = sub.add_parser("judges", help="two qrels: label agreement, and the system orders under each",
                       description="Agreement of two qrels for the same topics and, given two or more runs, "
                                   "the system order under each (tau, tau_ap with A as the reference), the "
                                   "mean shift B - A and significance against the first run under each.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("qrels_a", help="the reference qrels (A)")
    p.add_argument("qrels_b", help="the other qrels (B): model, crowd or corrected labels")
    p.add_argument("runs", nargs="*", help="runs to order under each qrels (the first is the baseline)")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help=f"measure (repeatable; default {DEFAULT_MEASURE})")
    p.add_argument("--threshold", type=int, default=1, help="grade from which a label counts as relevant")
    p.add_argument("--test", choices=tuple(TESTS), default="t", help="significance test against the baseline")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level (Holm-corrected p-values)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the randomisation and bootstrap tests")
    add_evaluation_options(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=run)


def run(args) -> int:
    qrels_a, qrels_b = read_qrels(args.qrels_a), read_qrels(args.qrels_b)
    labels = label_agreement(qrels_a, qrels_b, threshold=args.threshold)
    summary = pd.DataFrame([{k: labels[k] for k in ("shared", "only_a", "only_b", "queries_shared", "kappa_linear",
                                                    "kappa_quadratic", "alpha_ordinal", "binary_agreement",
                                                    "binary_kappa")}])
    matrix = labels["confusion"].copy()
    matrix.index.name = "grade_a \\ grade_b"
    matrix.columns = [str(c) for c in matrix.columns]
    sections = {"label agreement on shared pairs": summary, "confusion (rows A, columns B)": matrix}
    settings = {"seed": args.seed, "tool": f"nDCG Lab {__version__}", "qrels_a": str(args.qrels_a),
                "qrels_a_sha256": qrels_a.digest, "qrels_b": str(args.qrels_b), "qrels_b_sha256": qrels_b.digest,
                "threshold": args.threshold}
    if args.runs:
        runs = as_runs(named_runs(args.runs))
        measures = gained(args.measures or [DEFAULT_MEASURE], args)
        shift = system_shift(qrels_a, qrels_b, runs, measures, test=args.test, alpha=args.alpha, seed=args.seed,
                             **evaluation_options(args))
        sections.update({"system order under A and B": shift["means"], "tau (A the reference)": shift["tau"],
                         f"significance against {shift['baseline']} (Holm)": shift["significance"]})
        settings.update({"runs": [r.name for r in runs], "baseline": shift["baseline"], "test": args.test,
                         "alpha": args.alpha, **evaluation_options(args)})
    print(render(sections, settings, args.format))
    return 0
