"""What each research page's numbers mean: the formula, the published source, and the assumptions
(paired topics, the correction family, the seed), as Markdown text for the pages' "Method" parts
and for the documentation. Plain text only: the pages place it, the CLI may print it.

Every source named here is a published paper or book; :data:`REFERENCES` holds the full entries.
"""
from __future__ import annotations

from ..stats import CORRECTIONS, TESTS, family_label
from ..stats.behaviour import SWAP_METHODS, distinct_values, tau_values
from ..stats.behaviour.uncertainty import FEW_SYSTEMS

REFERENCES: dict[str, str] = {
    "Benjamini & Hochberg 1995": "Y. Benjamini, Y. Hochberg. Controlling the false discovery rate: a practical and "
                                 "powerful approach to multiple testing. J. Royal Statistical Society B 57(1), 1995.",
    "Buckley & Voorhees 2004": "C. Buckley, E. M. Voorhees. Retrieval evaluation with incomplete information. "
                               "SIGIR 2004.",
    "Carterette 2012": "B. Carterette. Multiple testing in statistical analysis of systems-based information "
                       "retrieval experiments. ACM TOIS 30(1), 2012.",
    "Cormack, Clarke & Büttcher 2009": "G. V. Cormack, C. L. A. Clarke, S. Büttcher. Reciprocal rank fusion "
                                       "outperforms Condorcet and individual rank learning methods. SIGIR 2009.",
    "Efron & Tibshirani 1993": "B. Efron, R. J. Tibshirani. An Introduction to the Bootstrap. Chapman & Hall, 1993.",
    "Fisher 1935": "R. A. Fisher. The Design of Experiments. Oliver & Boyd, 1935.",
    "Fox & Shaw 1994": "E. A. Fox, J. A. Shaw. Combination of multiple searches. TREC-2, 1994.",
    "Holm 1979": "S. Holm. A simple sequentially rejective multiple test procedure. Scandinavian J. Statistics "
                 "6(2), 1979.",
    "Järvelin & Kekäläinen 2002": "K. Järvelin, J. Kekäläinen. Cumulated gain-based evaluation of IR techniques. "
                                  "ACM TOIS 20(4), 2002.",
    "Kendall 1938": "M. G. Kendall. A new measure of rank correlation. Biometrika 30(1/2), 1938.",
    "Sakai 2006": "T. Sakai. Evaluating evaluation metrics based on the bootstrap. SIGIR 2006.",
    "Sakai 2007": "T. Sakai. Alternatives to Bpref. SIGIR 2007.",
    "Sakai 2014": "T. Sakai. Statistical reform in information retrieval? SIGIR Forum 48(1), 2014.",
    "Sakai 2016": "T. Sakai. Topic set size design. Information Retrieval Journal 19(3), 2016.",
    "Smucker, Allan & Carterette 2007": "M. D. Smucker, J. Allan, B. Carterette. A comparison of statistical "
                                        "significance tests for information retrieval evaluation. CIKM 2007.",
    "Student 1908": "Student (W. S. Gosset). The probable error of a mean. Biometrika 6(1), 1908.",
    "Voorhees & Buckley 2002": "E. M. Voorhees, C. Buckley. The effect of topic set size on retrieval experiment "
                               "error. SIGIR 2002.",
    "Webber, Moffat & Zobel 2010": "W. Webber, A. Moffat, J. Zobel. A similarity measure for indefinite rankings. "
                                   "ACM TOIS 28(4), 2010.",
    "Wilcoxon 1945": "F. Wilcoxon. Individual comparisons by ranking methods. Biometrics Bulletin 1(6), 1945.",
    "Yilmaz & Aslam 2006": "E. Yilmaz, J. A. Aslam. Estimating average precision with incomplete and imperfect "
                           "judgments. CIKM 2006.",
    "Yilmaz, Aslam & Robertson 2008": "E. Yilmaz, J. A. Aslam, S. Robertson. A new rank correlation coefficient "
                                      "for information retrieval. SIGIR 2008.",
}

_TEST_SOURCES = {"t": "Student 1908", "wilcoxon": "Wilcoxon 1945",
                 "randomization": "Fisher 1935; Smucker, Allan & Carterette 2007", "bootstrap": "Sakai 2006"}
_TEST_FORMULAS = {
    "t": "t = mean(d) / (sd(d) / √n) on n − 1 degrees of freedom, two-sided",
    "wilcoxon": "the signed ranks of the non-zero |dᵢ|, exact distribution where SciPy allows, else the "
                "tie-corrected normal approximation",
    "randomization": "p = share of sign flips of the dᵢ whose |mean| reaches the observed |mean(d)| (every "
                     "pattern up to 16 non-zero differences, else seeded random flips, p = (1 + hits) / (1 + B))",
    "bootstrap": "the dᵢ shifted to mean 0 and resampled with replacement; p = (1 + #{|t*| ≥ |t|}) / (1 + B), "
                 "t studentised",
}
_CORRECTION_SOURCES = {"holm": "Holm 1979", "bonferroni": "Bonferroni", "bh": "Benjamini & Hochberg 1995",
                       "none": ""}


def correction_sentence(correction: str, family: str) -> str:
    """The correction and its family, with the source, and why descriptive measures stay out."""
    source = _CORRECTION_SOURCES.get(correction, "")
    return (f"Correction: {family_label(correction, family)}" + (f" ({source})" if source else "")
            + ". Descriptive measures (Judged@k, NumRet, NumRel, NumRelRet, unj, IDCG) are shown but never "
              "tested or marked, and join no family: they describe the pools, not a system's quality.")


def compare_method(*, test: str, correction: str, family: str, alpha: float, seed: int, resamples: int,
                   permutations: int, topics: int | None = None) -> str:
    """The Compare page's Method text."""
    n = f"n = {topics} topics" if topics else "n topics"
    return "\n".join([
        f"**Formula.** For each of the {n}, dᵢ = systemᵢ − baselineᵢ; Δ = mean(d), Δ% = Δ / baseline mean. "
        f"{TESTS[test]} ({_TEST_SOURCES[test]}): {_TEST_FORMULAS[test]}. "
        "Confidence intervals: percentile bootstrap over topics "
        f"(Efron & Tibshirani 1993), {resamples:,} resamples. Effect size: paired Cohen's d = mean(d) / sd(d). "
        "Effect sizes and intervals beside the p-value, as Sakai 2014 asks.",
        "",
        f"**Assumptions.** Paired topics: every system is scored on the same {n} (a topic a run lacks scores 0); "
        "the topics are a sample from a population of topics, the systems are fixed. "
        + correction_sentence(correction, family)
        + f" ▲/▼ when the corrected p < {alpha:g}. Seed {seed} for every random draw ({permutations:,} sign "
          "flips for the randomisation test): the same seed gives the same p-values and intervals.",
        "",
        "**All systems at once.** Tukey HSD on the systems × topics two-way layout (Carterette 2012): "
        "simultaneous intervals for every pair, the topic effect removed.",
    ])


def where_method(*, level: float, resamples: int, seed: int) -> str:
    """The Where it differs page's Method text."""
    return "\n".join([
        "**Formula.** For first stage F, re-ranked run R and the oracle O (F's top K sorted by gain, the "
        "rest left in place; IDCG from the qrels): share of the headroom reached = (R − F) / (O − F) of the "
        "means; relative improvement = (R − F) / F, a share of the first stage's own mean, so the same gain "
        "reads larger over a weak first stage. No external benchmark band is implied. Rank bands split "
        "each run's nDCG into the contributions of ranks 1–3, 4–10, …; they add up to the total "
        "(Järvelin & Kekäläinen 2002).",
        "",
        f"**Assumptions.** Paired topics (a topic a run lacks scores 0). Intervals: percentile bootstrap over "
        f"topics (Efron & Tibshirani 1993), {int(level * 100)}%, {resamples:,} resamples, seed {seed}; the "
        "depth sweep's p-values are corrected over the depths with the sidebar's correction.",
    ])


def judgments_method() -> str:
    """The Judgments page's Method text."""
    return "\n".join([
        "**Formula.** One measure under three treatments of unjudged documents: gain 0 (trec_eval's "
        "default), condensed (unjudged documents removed before scoring: Sakai 2007), inferred (proxy labels "
        "fill them). Judged@k = judged documents in the top k / min(k, retrieved). Bpref (Buckley & "
        "Voorhees 2004) and infAP (Yilmaz & Aslam 2006) are other measures, built for incomplete judgments: "
        "they are ranked in a table of their own, never against the treatments of another measure.",
        "",
        "**Assumptions.** Where every top-k document is judged (Judged@k = 1 for every system), the three "
        "treatments give the same values: a difference then comes from the measure, not from the "
        "judgments. Kendall's τ-b (Kendall 1938) between the orders; over fewer than "
        f"{FEW_SYSTEMS} systems it takes a handful of values.",
    ])


def behaviour_method(*, seed: int, resamples: int, draws: int, swap_method: str = "disjoint") -> str:
    """The Measure behaviour page's Method text."""
    return "\n".join([
        "**Formula.** Kendall's τ-b (Kendall 1938) = (concordant − discordant) / √((n₀ − tₓ)(n₀ − t_y)) over "
        "the system pairs; τ_AP (Yilmaz, Aslam & Robertson 2008) = 2 / (N − 1) Σᵢ C(i) / (i − 1) − 1, which "
        "weighs a swap near the top more, symmetrised here. The interval of a τ is a percentile bootstrap over "
        f"topics (Efron & Tibshirani 1993): {resamples:,} resamples of the topics, the systems' means and "
        "their τ recomputed on each. ASL: paired bootstrap (Sakai 2006) and randomised Tukey HSD "
        "(Carterette 2012). Swap rates (Voorhees & Buckley 2002) by topic-set size, "
        f"{SWAP_METHODS[swap_method]}. Topics needed: Sakai 2016.",
        "",
        "**Assumptions.** Paired topics (a topic a run lacks scores 0); topics sampled, systems fixed. "
        + swap_rise_note(swap_method)
        + f" Incomplete judgments: each random reduction is drawn {draws} times; the curve is the mean over "
          f"the draws and the band spans the lowest to the highest. Seed {seed}.",
    ])


def fusion_method(*, test: str, correction: str, family: str) -> str:
    """The Fusion page's Method text."""
    return "\n".join([
        "**Formula.** RRF (Cormack, Clarke & Büttcher 2009): score(d) = Σᵣ wᵣ / (k + rankᵣ(d)); CombSUM and "
        "CombMNZ (Fox & Shaw 1994): the sum of normalised scores, times the number of runs that retrieve d "
        f"for CombMNZ. The fused run is tested like any run: {TESTS[test]} against the baseline and the best "
        "input.",
        "",
        "**Assumptions.** Paired topics. " + correction_sentence(correction, family) + " Choosing k or the "
        "weights on the topics reported on overfits; the sweep tunes on one half of a seeded 2-fold split "
        "(seed 0) and reports on the other.",
    ])


def few_systems_warning(systems: int) -> str | None:
    """A plain warning when a τ over ``systems`` systems can only take a few values; None from
    :data:`FEW_SYSTEMS` systems on."""
    if systems >= FEW_SYSTEMS or systems < 2:
        return None
    values = ", ".join(_fraction(v) for v in tau_values(systems))
    return (f"Only {systems} systems: Kendall's τ between their orders can take only "
            f"{distinct_values(systems)} values ({values}), and τ_AP {distinct_values(systems, 'tau_ap')}. "
            "One swapped pair moves τ by a large step, so read it as an order, not as an estimate; "
            f"add runs (at least {FEW_SYSTEMS}) for a τ that can say how far two orders agree.")


def swap_rise_note(method: str = "disjoint") -> str:
    """Why a swap rate can rise as topics are added (disjoint sets), or why it does not (resampled)."""
    if method == "disjoint":
        return ("The two topic sets are disjoint, so as n nears half the topics they become near-complements: "
                "their differences average to the full set's, and on a pair whose overall difference is small "
                "a lead on one half forces a deficit on the other. The swap rate of such pairs then rises with n; "
                "that is the split, not the measure. Compare measures at one n, within one bin of |Δ|.")
    return ("The two topic sets are drawn with replacement, independently, so they overlap and never become "
            "complements; the rate falls as n grows.")


def _fraction(value: float) -> str:
    for den in range(1, 13):
        num = round(value * den)
        if abs(num / den - value) < 1e-9:
            return f"{num}" if den == 1 else f"{num}/{den}"
    return f"{value:.3f}"


METHOD_PAGES = ("Compare", "Where it differs", "Judgments", "Measure behaviour", "Fusion")

__all__ = ["CORRECTIONS", "METHOD_PAGES", "REFERENCES", "behaviour_method", "compare_method", "correction_sentence",
           "few_systems_warning", "fusion_method", "judgments_method", "swap_rise_note", "where_method"]
