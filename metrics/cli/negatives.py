"""``python -m metrics negatives QRELS RUN [RUN ...]``: hard negatives as training data.

Positives are the judged documents with grade >= ``--min-grade``; negatives the
judged non-relevant documents (grade <= 0) that any run ranks in its top
``--depth`` (with ``--include-unjudged`` also unjudged documents ranked above
every relevant one), at most ``--per-query`` per query, ordered by best rank
across runs, then by the number of runs (more first), then docno. See
``metrics.judgments``.
"""
from __future__ import annotations

import sys

from .. import io
from ..analysis.judgments import training_set
from ..errors import MetricsError
from ..evaluation import as_runs
from ..ranking import rank
from . import named_runs, positive_int


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "negatives", help="export hard negatives (and positives) for training",
        description="Mine hard negatives from runs: judged non-relevant documents ranked high, "
                    "paired with the judged relevant ones. TSV: qid, positive_docno, negative_docno "
                    "triples; JSONL: one line per query with positives and negatives, their grades and ranks.")
    p.add_argument("qrels")
    p.add_argument("runs", nargs="+")
    p.add_argument("--depth", type=positive_int, default=100, help="mine negatives from each run's top N (default 100)")
    p.add_argument("--per-query", type=positive_int, default=10, help="at most N negatives per query (default 10)")
    p.add_argument("--min-grade", type=positive_int, default=1, help="minimum grade of a positive (default 1)")
    p.add_argument("--include-unjudged", action="store_true",
                   help="also use unjudged documents ranked above every relevant one as negatives (unverified)")
    p.add_argument("--format", choices=("tsv", "jsonl"), default="tsv")
    p.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")
    p.add_argument("--ties", choices=("score", "rank"), default="score",
                   help="score: trec_eval order (score desc, docno desc); rank: use the rank column")
    p.add_argument("--on-duplicate", choices=("error", "first"), default="error")
    p.set_defaults(handler=run)


def run(args) -> int:
    qrels = io.read_qrels(args.qrels)
    parsed = as_runs(named_runs(args.runs), on_duplicate=args.on_duplicate)
    ranked = {r.name: rank(r, qrels, ties=args.ties) for r in parsed}
    data = training_set(qrels, ranked, depth=args.depth, per_query=args.per_query, min_grade=args.min_grade,
                        include_unjudged=args.include_unjudged)
    text = data.to_tsv() if args.format == "tsv" else data.to_jsonl()
    if args.output:
        try:
            with open(args.output, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(text)
        except OSError as exc:
            raise MetricsError(f"cannot write {args.output}: {exc.strerror or exc}",
                               fix="check the directory exists and is writable") from None
        n_neg = data.negatives.num_rows
        print(f"wrote {args.output}: {len(data.queries)} queries, {data.positives.num_rows} positives, "
              f"{n_neg} negatives", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
