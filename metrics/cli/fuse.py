"""``python -m metrics fuse RUN RUN ... --method rrf -o fused.run``: fuse runs into one TREC run.

The formulas, the normalisations and the tie rule are those of :mod:`metrics.analysis.fusion`
(the dashboard calls the same function). The run goes to ``-o`` (or stdout), its recipe
(inputs by digest, method, parameters) to ``--recipe`` as JSON, and a one-line summary to
stderr.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pyarrow.compute as pc

from .. import io
from ..analysis import fusion
from ..errors import MetricsError
from . import named_runs


def register(sub) -> None:
    methods = ", ".join(f"{m.name} ({m.describe})" for m in fusion.METHODS.values())
    p = sub.add_parser(
        "fuse", help="fuse runs into one (RRF, CombSUM, CombMNZ, Borda, Condorcet, ...) and write a TREC run",
        description="Fuse two or more runs into one TREC run. Ranks follow the canonical order (score "
                    "descending, ties docno descending); normalisations are per query and per run; the fused "
                    f"run is written by fused score, ties docno descending. Methods: {methods}.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("runs", nargs="+", help="the runs to fuse (TREC text, CSV/TSV, parquet, JSON; .gz etc.)")
    p.add_argument("--method", default="rrf", type=str.lower,
                   help=f"one of {', '.join(fusion.METHODS)} (ranx's names such as comb_sum are accepted)")
    p.add_argument("--k", type=float, default=60.0, help="the RRF constant: score Σ 1/(k + rank)")
    p.add_argument("--norm", default=None,
                   help=f"score normalisation for score-based methods: {', '.join(fusion.NORMS)} "
                        "(default minmax; rank-based methods take none)")
    p.add_argument("--weights", default=None, metavar="W1,W2,...",
                   help="one weight per run, in the order given (commas or spaces)")
    p.add_argument("--depth", type=int, default=None, metavar="N",
                   help="fuse only the top N documents of every run and query (default: all)")
    p.add_argument("--keep", type=int, default=None, metavar="N",
                   help="write only the top N fused documents per query (default: all)")
    p.add_argument("--name", default=None, help="run tag of the fused run (default: the method)")
    p.add_argument("-o", "--output", default="-", help="where to write the fused run (- for stdout)")
    p.add_argument("--recipe", default=None, metavar="PATH", help="write the recipe as JSON here")
    p.add_argument("--on-duplicate", choices=("error", "first"), default="error")
    p.set_defaults(handler=run)


def parse_weights(text: str | None) -> list[float] | None:
    """``"0.7,0.3"`` or ``"0.7 0.3"`` -> [0.7, 0.3]."""
    if text is None:
        return None
    parts = [x for x in re.split(r"[,\s]+", text.strip()) if x]
    try:
        return [float(x) for x in parts]
    except ValueError:
        raise MetricsError(f"--weights {text!r}: weights must be numbers", fix="e.g. --weights 0.7,0.3") from None


def run(args) -> int:
    if len(args.runs) < 2:
        raise MetricsError(f"fusion needs at least two runs, got {len(args.runs)}", fix="give two or more runs")
    fused, recipe = fusion.fuse(named_runs(args.runs), args.method, k=args.k, norm=args.norm,
                                weights=parse_weights(args.weights), depth=args.depth, keep=args.keep,
                                name=args.name, on_duplicate=args.on_duplicate)
    if args.output == "-":
        io.to_trec(fused, sys.stdout.buffer)
        sys.stdout.buffer.flush()
    else:
        io.to_trec(fused, args.output)
    if args.recipe:
        Path(args.recipe).write_text(recipe.to_json() + "\n", encoding="utf-8")
    n_queries = pc.count_distinct(fused.table["qid"]).as_py()
    print(f"fused {recipe.label()}: {len(fused):,} lines, {n_queries:,} queries"
          + ("" if args.output == "-" else f" -> {args.output}"), file=sys.stderr)
    for finding in fused.findings:
        print(f"note: {finding.message}", file=sys.stderr)
    return 0
