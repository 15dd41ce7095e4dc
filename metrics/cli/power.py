"""``power QRELS RUN RUN [RUN ...] -m M``: discriminative power (ASL of every pair by the paired
bootstrap and the randomised Tukey HSD, the share significant at alpha), swap rates by topic-set
size, and the topics needed (Sakai's topic-set-size designs), per measure, seeded."""
from __future__ import annotations

import argparse

import pandas as pd

from ..engines import evaluate
from ..evaluation import as_runs
from ..io import read_qrels
from ..report.behaviour import FORMATS, render
from ..stats import DEFAULT_SEED, paired_matrix
from ..stats.behaviour import discriminative_power
from ..stats.behaviour.power import DEFAULT_ALPHA, DEFAULT_DELTA, DEFAULT_POWER, DEFAULT_TRIALS
from . import named_runs
from .agreement import need_runs, settings_of
from .eval import add_evaluation_options, evaluation_options, gained

DEFAULT_MEASURE = "nDCG@10"


def register(sub) -> None:
    p = sub.add_parser("power", help="discriminative power, swap rates and topic-set size of a measure",
                       description="ASL of every pair of systems (paired bootstrap, randomised Tukey HSD), "
                                   "the share significant at alpha, swap rates by topic-set size, and the "
                                   "topics needed to detect --delta with --power at --alpha.",
                       formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+", help="two or more runs")
    p.add_argument("-m", "--measure", action="append", dest="measures",
                   help=f"measure (repeatable; default {DEFAULT_MEASURE})")
    p.add_argument("--delta", type=float, default=DEFAULT_DELTA, help="minimum detectable difference")
    p.add_argument("--power", type=float, default=DEFAULT_POWER, help="power 1 - beta of the topic-set design")
    p.add_argument("--alpha", type=float, default=DEFAULT_ALPHA, help="significance level")
    p.add_argument("--resamples", type=int, default=DEFAULT_TRIALS,
                   help="bootstrap resamples, Tukey HSD permutations and swap-rate trials per size")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of every random draw")
    add_evaluation_options(p)
    p.add_argument("--format", choices=FORMATS, default="table")
    p.set_defaults(handler=run)


def run(args) -> int:
    measures = gained(args.measures or [DEFAULT_MEASURE], args)
    qrels, runs = read_qrels(args.qrels), as_runs(named_runs(args.runs))
    need_runs(runs)
    options = evaluation_options(args)
    frame = evaluate(qrels, runs, measures, **options)
    names = [r.name for r in runs]
    parts: dict[str, list] = {"share": [], "asl": [], "topics": [], "swap_summary": [], "swaps": []}
    n_topics = 0
    for m in dict.fromkeys(frame["measure"].astype(str)):
        x = paired_matrix(frame, m, names, options["missing"]).to_numpy()
        n_topics = x.shape[0]
        out = discriminative_power(x, names, alpha=args.alpha, delta=args.delta, power=args.power,
                                   resamples=args.resamples, seed=args.seed)
        parts["share"].append(pd.DataFrame([{"measure": m, "pairs": len(out["asl"]),
                                             **{f"significant_{k}": v for k, v in out["share"].items()}}]))
        for key in ("asl", "topics", "swap_summary", "swaps"):
            parts[key].append(out[key].assign(measure=m)[["measure", *out[key].columns]])
    sections = {f"share of pairs with ASL < {args.alpha:g}": parts["share"], "asl": parts["asl"],
                "topics needed": parts["topics"], "swap rate by topic-set size": parts["swap_summary"],
                "swap rate by topic-set size and difference": parts["swaps"]}
    settings = settings_of(args, qrels, runs, seed=args.seed, resamples=args.resamples, alpha=args.alpha,
                           delta=args.delta, power=args.power, topics=n_topics,
                           asl="paired bootstrap (Sakai 2006) and randomised Tukey HSD, (1 + count) / (1 + B)")
    print(render({k: pd.concat(v, ignore_index=True) for k, v in sections.items()}, settings, args.format))
    return 0
