"""Paired significance tests, bootstrap intervals, effect sizes and multiple-testing corrections.

Array functions take per-query values aligned by query (same queries, same
order); ``diffs`` is ``system - baseline``, one column per comparison
(a 1-D array is one comparison). Frame functions (:func:`compare`,
:func:`versus_baseline`) take the tidy ``system, qid, measure, value`` frame
of :func:`metrics.evaluate` and align queries by qid (sorted as strings), so
the same inputs always meet the same random draws.

Every random draw comes from ``numpy.random.default_rng(seed)``: the same
seed, the same queries and the same number of draws give the same p-value on
every call, whatever else is tested alongside (ranx's randomisation test is
not reproducible). One sign matrix (randomisation) and one resample-count
matrix (bootstrap) serve every comparison of a call, so a batch of systems x
measures costs one pass over the draws.

Choices, stated once:

- t-test: two-sided paired t-test, as ``scipy.stats.ttest_rel``; all
  differences zero gives p = 1, all equal and non-zero gives p = 0.
- Wilcoxon: ``scipy.stats.wilcoxon`` on the differences with
  ``zero_method="wilcox"`` (zero differences dropped, as scipy and R's
  ``wilcox.test``), no continuity correction, ``method="auto"`` (exact
  distribution up to 50 non-zero differences without ties, exhaustive
  permutations up to 13 with ties or zeros, else the tie-corrected normal
  approximation); all differences zero gives p = 1.
- Randomisation (Fisher's paired permutation test): the statistic is the
  mean difference, the null flips the sign of each query's difference.
  Up to ``exact_max`` (16) non-zero differences every one of the 2^n sign
  patterns is enumerated and p = #{|T| >= |t|} / 2^n (scipy's exact
  ``permutation_test(permutation_type="samples")``); beyond, ``permutations``
  random sign vectors give p = (1 + #{|T| >= |t|}) / (1 + permutations)
  (scipy's and Phipson & Smyth's rule, never 0).
- Bootstrap test: Sakai's (2006) studentised paired bootstrap. The
  differences are shifted to mean 0 (w = d - mean d), resampled with
  replacement, and p = (1 + #{|t*| >= |t|}) / (1 + resamples) with
  t = mean / (sd / sqrt n).
- Confidence intervals: percentile bootstrap over queries (``level``, 95%),
  of each system's mean and of the mean difference, from the same resamples.
- Effect size: paired Cohen's d = mean(d) / sd(d) (ddof = 1).
- Wins / ties / losses: d > tolerance / |d| <= tolerance / d < -tolerance.
- Corrections across the family of all (system, measure) comparisons:
  Bonferroni, Holm (step-down) and Benjamini-Hochberg (step-up, FDR).
- Tukey HSD: by default the two-way (randomised block: systems x queries)
  version, whose error term removes the query effect, as Carterette (2012)
  and Sakai (2014) use for IR; ``design="one-way"`` is
  ``scipy.stats.tukey_hsd`` on the per-query values, which ignores pairing.
- Ranking stability: Kendall's tau-b between system orderings (scipy's
  ``kendalltau`` default).
"""
from .agreement import kendall_tau, ranking_stability, tukey_hsd
from .bootstrap import bootstrap_ci, bootstrap_means, bootstrap_pvalues, paired_bootstrap, resample_chunks
from .common import (
    CORRECTIONS,
    DEFAULT_LEVEL,
    DEFAULT_PERMUTATIONS,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    EXACT_MAX,
    TESTS,
    TIE_TOLERANCE,
)
from .comparison import COMPARE_COLUMNS, compare, difference_profile, paired_matrix, per_query, versus_baseline
from .corrections import adjust, benjamini_hochberg, bonferroni, holm
from .paired import (
    effect_size,
    paired_pvalues,
    paired_randomization,
    paired_ttest,
    paired_wilcoxon,
    randomization_pvalues,
    sign_bytes,
    sign_matrix,
    ttest_pvalues,
    wilcoxon_pvalues,
    wins_ties_losses,
)

__all__ = ["COMPARE_COLUMNS", "CORRECTIONS", "DEFAULT_LEVEL", "DEFAULT_PERMUTATIONS", "DEFAULT_RESAMPLES",
           "DEFAULT_SEED", "EXACT_MAX", "TESTS", "TIE_TOLERANCE", "adjust", "benjamini_hochberg",
           "bonferroni", "bootstrap_ci", "bootstrap_means", "bootstrap_pvalues", "compare",
           "difference_profile", "effect_size", "holm", "kendall_tau", "paired_bootstrap", "paired_matrix",
           "paired_pvalues", "paired_randomization", "paired_ttest", "paired_wilcoxon", "per_query",
           "randomization_pvalues", "ranking_stability", "resample_chunks", "sign_bytes", "sign_matrix",
           "ttest_pvalues", "tukey_hsd", "versus_baseline", "wilcoxon_pvalues", "wins_ties_losses"]
