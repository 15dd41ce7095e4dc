"""nDCG Lab's evaluation library: exact to trec_eval, vectorised, no UI.

    import metrics
    frame = metrics.evaluate("qrels.txt", ["bm25.run", "ce.run"], ["nDCG@10", "AP"])
    metrics.means(frame)
"""

from .engines import evaluate
from .errors import MetricsError
from .evaluation import DEFAULT_MEASURES, as_runs, curve, curve_ranked, evaluate_ranked, means, rank_run
from .io import Qrels, Run, read_qrels, read_run
from .linting import lint
from .measures import parse as parse_measure
from .measures import with_gain

__version__ = "0.1.0"

__all__ = ["MetricsError", "DEFAULT_MEASURES", "evaluate", "evaluate_ranked", "means", "curve", "curve_ranked",
           "rank_run", "as_runs", "read_run", "read_qrels", "lint", "Run", "Qrels", "parse_measure", "with_gain",
           "standardise", "__version__"]


def __getattr__(name: str):
    """``metrics.standardise`` (z-scores per topic, :mod:`metrics.stats.standardisation`), imported on first
    use: it needs pandas and the stats package, which ``import metrics`` alone does not load."""
    if name == "standardise":
        from .stats.standardisation import standardise
        return standardise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
