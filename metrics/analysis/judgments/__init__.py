"""Incomplete judgments and hard negatives: what the qrels miss, and what runs get wrong.

Every function takes the systems as ``{name: Ranked}`` (``metrics.ranking.rank``
of each run against the same qrels, proxy labels left out) and works on their
flat arrays: a loop over the handful of systems, never over queries.

Definitions used throughout (ranks are 1-based, canonical order):

- *judged*: the real qrels hold the (query, document) pair, any grade; proxy
  labels never count as judgments here.
- *hard negative*: a document judged non-relevant (grade <= 0) that at least
  one system ranks in its top ``depth``.
- *unjudged above the relevant*: an unjudged document that at least one system
  ranks in its top ``depth`` and above every judged relevant document (grade >=
  ``min_grade``) that system retrieves (all of its top ``depth`` when it
  retrieves none). Unverified negatives, used only when asked for.
- *recall failure*: a judged document with grade >= ``min_grade`` that no
  system ranks in its top ``depth``.
- Order of documents within a query (tables and exports): best rank across
  systems, then the number of systems that rank it in the top ``depth`` (more
  first), then docno (ascending, as bytes). Queries in string order.

Modules: ``strategies`` (treatments of unjudged documents, Judged@k warnings, proxy agreement),
``pools`` (to-do lists, judging template, judgment depth, top-k overlap), ``negatives`` (hard
negatives, recall failures, training export), all built on ``rows`` (the stacked top ``depth``
of every system, grouped per query and document).
"""
from .negatives import TrainingSet, hard_negatives, recall_failures, training_set
from .pools import (
    TEMPLATE_PLACEHOLDER,
    first_unjudged,
    judging_pool,
    pool_depth,
    qrels_template,
    topk_jaccard,
    unjudged_top,
)
from .strategies import (
    BEST_GAP,
    MEDIAN_GAP,
    STRATEGIES,
    evaluate_strategies,
    judged_warnings,
    proxy_agreement,
    rank_agreement,
    strategy_table,
)

__all__ = [
    "STRATEGIES", "BEST_GAP", "MEDIAN_GAP", "strategy_table", "rank_agreement", "evaluate_strategies",
    "judged_warnings", "proxy_agreement", "TEMPLATE_PLACEHOLDER", "unjudged_top", "judging_pool",
    "qrels_template", "first_unjudged", "topk_jaccard", "pool_depth", "hard_negatives", "recall_failures",
    "TrainingSet", "training_set",
]
