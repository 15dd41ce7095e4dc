"""How the measures behave on a collection: agreement of measures, discriminative power, topic-set
size, incomplete and alternative judgments.

- :mod:`.rankings`: Kendall's tau-b, tau_ap (Yilmaz, Aslam and Robertson 2008), RBO (Webber,
  Moffat and Zobel 2010); system orders, tau matrices, swapped pairs, per-query agreement.
- :mod:`.labels`: confusion matrix, Cohen's weighted kappa, Krippendorff's alpha.
- :mod:`.power`: ASL by paired bootstrap and randomised Tukey HSD (Sakai 2006), ASL curves,
  swap rates (Voorhees and Buckley 2002), topic-set size (Sakai 2016).
- :mod:`.reduction`: seeded reductions of the qrels (share kept, pool depth) and the order
  agreement with the full qrels (Buckley and Voorhees 2004).
- :mod:`.uncertainty`: how much a tau means: its percentile bootstrap interval over topics
  (Efron and Tibshirani 1993) and the few values it can take over a few systems.
- :mod:`.judges`: two qrels for the same topics: label agreement and the system orders.

Statistics take a topics x systems matrix or a system x measure table; the frame functions take
the tidy ``system, qid, measure, value`` frame of :func:`metrics.evaluate`. Every random draw is
seeded (``seed``, reported by every caller).
"""
from .judges import label_agreement, system_shift
from .labels import confusion, krippendorff_alpha, weighted_kappa
from .power import (
    SWAP_METHODS,
    asl_curve,
    discriminative_power,
    pair_asl,
    share_significant,
    swap_rates,
    swap_summary,
    topics_needed,
    tukey_asl,
)
from .rankings import (
    DEFAULT_MEASURES,
    measure_agreement,
    order_of,
    per_query_agreement,
    rbo,
    swapped_pairs,
    system_orders,
    tau_ap,
    tau_ap_matrix,
    tau_ap_symmetric,
)
from .reduction import keep_share, pool_depth, reduction_curves
from .uncertainty import FEW_SYSTEMS, distinct_values, order_correlation, tau_interval, tau_intervals, tau_values

__all__ = ["DEFAULT_MEASURES", "FEW_SYSTEMS", "SWAP_METHODS", "asl_curve", "confusion", "discriminative_power",
           "distinct_values", "keep_share", "krippendorff_alpha", "label_agreement", "measure_agreement",
           "order_correlation", "order_of", "pair_asl", "per_query_agreement", "pool_depth", "rbo",
           "reduction_curves", "share_significant", "swap_rates", "swap_summary", "swapped_pairs", "system_orders",
           "system_shift", "tau_ap", "tau_ap_matrix", "tau_ap_symmetric", "tau_interval", "tau_intervals",
           "tau_values", "topics_needed", "tukey_asl", "weighted_kappa"]
