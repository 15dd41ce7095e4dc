"""``python -m metrics bands QRELS RUN_A RUN_B``: where in the ranking RUN_B gains or loses DCG over RUN_A.

DCG@k(B) - DCG@k(A) split by rank band (``--bands 3,10,20,100``: 1-3, 4-10, 11-20, 21-100 and
beyond, up to ``-k``) and by grade, per query (``-q``) and in the mean; per query the bands add
up to the total. Then the relevant documents that only one run retrieves in its top k and the
queries where RUN_A found no relevant document in its top 100 and RUN_B did. The numbers are
:func:`metrics.analysis.bands.bands`'s, the same as on the page "Where it differs".
"""
from __future__ import annotations

import json

import pandas as pd

from .. import __version__
from ..analysis import bands as analysis
from ..errors import MetricsError
from . import named_run
from .eval import add_evaluation_options, evaluation_options
from .headroom import FORMATS, MISSING_NOTE, depth_list


def register(sub) -> None:
    p = sub.add_parser(
        "bands", help="split the DCG@k difference of two runs by rank band and by grade",
        description="DCG@k(RUN_B) - DCG@k(RUN_A) split by rank band and by grade, per query and in the mean "
                    "(the bands add up to the total); the relevant documents only one run retrieves; the "
                    "queries where RUN_A found no relevant document in its top 100 and RUN_B did.")
    p.add_argument("qrels")
    p.add_argument("run_a", help="the baseline run (A)")
    p.add_argument("run_b", help="the other run (B)")
    p.add_argument("-k", type=int, default=100, help="DCG@k: the depth of the comparison (default 100)")
    p.add_argument("--bands", default="3,10,20,100", metavar="E1,E2,...",
                   help="upper ranks of the bands (default 3,10,20,100: 1-3, 4-10, 11-20, 21-100, then beyond up "
                        "to k)")
    p.add_argument("-q", "--per-query", action="store_true", help="print per-query values too")
    p.add_argument("--format", choices=FORMATS, default="table", help="default table")
    add_evaluation_options(p)
    p.set_defaults(handler=run)


def run(args) -> int:
    options = evaluation_options(args)
    run_a, run_b = named_run(args.run_a), named_run(args.run_b)
    result = analysis.bands(args.qrels, run_a, run_b, k=args.k, edges=depth_list(args.bands),
                            gain=args.gain or "linear", **options)
    print(render(result, args.format, args.per_query, options["missing"]))
    return 0


def _plain(frame: pd.DataFrame) -> dict:
    return {str(q): {c: float(v) for c, v in row.items()} for q, row in frame.iterrows()}


def render(result: analysis.Bands, fmt: str, per_query: bool, missing: str = "zero") -> str:
    """The decomposition in one of :data:`FORMATS`."""
    band_means, grade_means = result.means("band"), result.means("grade")
    if fmt == "json":
        out = {"version": __version__, "a": result.a, "b": result.b, "measure": result.measure, "k": result.k,
               "difference": "b - a", "missing_queries": MISSING_NOTE[missing],
               "means": {"by_band": {c: float(v) for c, v in band_means.items()},
                         "by_grade": {c: float(v) for c, v in grade_means.items()},
                         "dcg": {"a": float(result.dcg["a"].mean()), "b": float(result.dcg["b"].mean())}},
               "only_one": [{**r, "other_rank": None if pd.isna(r["other_rank"]) else int(r["other_rank"]),
                             "grade": int(r["grade"]), "rank": int(r["rank"])}
                            for r in result.only_one.to_dict(orient="records")],
               "rescued": result.rescued.to_dict(orient="records"), "lost": result.lost.to_dict(orient="records")}
        if per_query:
            out["per_query"] = {"by_band": _plain(result.by_band), "by_grade": _plain(result.by_grade)}
        return json.dumps(out, indent=2, default=int)
    if fmt == "tsv":
        lines = []
        for what, frame, means in (("band", result.by_band, band_means), ("grade", result.by_grade, grade_means)):
            lines.append("\t".join(["qid", *(f"{what} {c}" if c != "total" else c for c in frame.columns)]))
            rows = list(frame.iterrows()) if per_query else []
            lines += ["\t".join([str(q), *(f"{v:.6f}" for v in row)]) for q, row in rows]
            lines.append("\t".join(["all", *(f"{v:.6f}" for v in means)]))
            lines.append("")
        return "\n".join(lines).rstrip("\n")
    if fmt == "table":
        return _table(result, band_means, grade_means, per_query)
    raise MetricsError(f"unknown format {fmt!r}", fix="use " + ", ".join(FORMATS))


def _table(result: analysis.Bands, band_means: pd.Series, grade_means: pd.Series, per_query: bool) -> str:
    n = len(result.by_band)
    rows = [f"{result.measure}: {result.b} - {result.a} ({n} queries; mean DCG {result.dcg['b'].mean():.4f} - "
            f"{result.dcg['a'].mean():.4f} = {band_means['total']:+.4f})", "", "by rank band (mean over queries)"]
    rows += [f"  {c:>10}  {v:+.4f}" for c, v in band_means.items()]
    rows += ["", "by grade (mean over queries)"]
    rows += [f"  {('grade ' + c) if c != 'total' else c:>10}  {v:+.4f}" for c, v in grade_means.items()]
    if per_query:
        signed = {"float_format": lambda v: f"{v:+.4f}"}
        rows += ["", "per query, by rank band", result.by_band.to_string(**signed),
                 "", "per query, by grade", result.by_grade.add_prefix("grade ").rename(
                     columns={"grade total": "total"}).to_string(**signed)]
    counts = result.only_one.groupby("run", sort=False).size()
    rows += ["", f"relevant documents in one run's top {result.k} only: "
             + ", ".join(f"{run} {int(counts.get(run, 0))}" for run in (result.a, result.b))]
    if len(result.only_one):
        shown = result.only_one.astype({"other_rank": "string"}).fillna("-")
        rows.append(shown.to_string(index=False))
    rows += ["", f"queries where {result.a} has no relevant document in its top {analysis.TOP} and {result.b} "
                 f"has: {len(result.rescued)}" + (f" ({', '.join(result.rescued['qid'])})" if len(result.rescued)
                                                  else ""),
             f"queries where {result.b} has none and {result.a} has: {len(result.lost)}"
             + (f" ({', '.join(result.lost['qid'])})" if len(result.lost) else "")]
    return "\n".join(rows)
