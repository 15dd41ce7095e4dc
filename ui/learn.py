"""Texts and small helpers of the Learn NDCG page: glossary, formulas, notes on the other measures."""
from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd

from metrics.analysis import sandbox

GRADE_OPTIONS = ["4", "3", "2", "1", "0", "?"]
"""Grade choices of the editor, best first; "?" is an unjudged document."""

GLOSSARY = {
    "graded": ("Graded judgments",
               "Relevance judged on a scale (here 0-4: 0 not relevant ... 4 perfectly relevant) instead of "
               "yes/no. A document nobody judged is *unjudged* (\"?\"), which is not the same as judged 0."),
    "cg": ("CG", "Cumulative gain at k: the sum of the gains of the top k documents. It ignores order: "
                 "swapping rank 1 and rank k leaves CG unchanged."),
    "dcg": ("DCG", "Discounted cumulative gain: each document's gain divided by log2(rank + 1), summed over the "
                   "top k. A document counts less the lower it is ranked."),
    "idcg": ("IDCG", "Ideal DCG: the DCG of the best possible ranking of the judged documents (all of them, "
                     "also those the list missed), sorted by gain. It depends on the judgments, not on the list."),
    "ndcg": ("nDCG", "Normalised DCG = DCG / IDCG, between 0 and 1, so queries with many and few relevant "
                     "documents can be averaged. 1 means no better order of the judged documents exists."),
    "map": ("MAP (AP)", "Average precision: the mean of the precision at the rank of every relevant document "
                        "(0 for relevant documents never retrieved). MAP is its mean over queries."),
    "mrr": ("MRR (RR)", "Reciprocal rank: 1 / rank of the first relevant document. MRR is its mean over queries."),
    "pk": ("P@k", "Precision at k: the share of the top k that is relevant (divided by k even when the list is "
                  "shorter)."),
    "rk": ("R@k", "Recall at k: the share of all relevant documents that appear in the top k."),
}

MEASURE_NOTES = {
    "AP": "binary relevance: every grade >= 1 counts the same, so a grade-1 and a grade-4 document at the same "
          "rank give the same AP.",
    "RR": "first hit only: 1 / rank of the first relevant document; nothing after it counts.",
    "P": "order ignored and relevance binary: the share of the top k that is relevant, wherever it sits.",
    "R": "order ignored and relevance binary: the share of all relevant documents found in the top k.",
}

FORMULAS = [
    ("cg", r"\mathrm{CG}@k = \sum_{r=1}^{k} \mathrm{gain}(rel_r)"),
    ("dcg", r"\mathrm{DCG}@k = \sum_{r=1}^{k} \frac{\mathrm{gain}(rel_r)}{\log_2(r+1)},\qquad "
            r"\mathrm{gain}(rel) = 2^{rel}-1 \text{ (exponential) or } rel \text{ (linear)}"),
    ("idcg", r"\mathrm{IDCG}@k = \mathrm{DCG}@k \text{ of the judged documents sorted by gain}"),
    ("ndcg", r"\mathrm{nDCG}@k = \frac{\mathrm{DCG}@k}{\mathrm{IDCG}@k}\quad(0 \text{ when IDCG}@k = 0)"),
    ("map", r"\mathrm{AP} = \frac{1}{R}\sum_{r:\ rel_r \ge 1} P@r,\qquad R = \text{relevant documents in the "
            r"judgments}"),
    ("mrr", r"\mathrm{RR} = \frac{1}{\text{rank of the first relevant document}}"),
    ("pk", r"P@k = \frac{|\{r \le k : rel_r \ge 1\}|}{k}"),
    ("rk", r"R@k = \frac{|\{r \le k : rel_r \ge 1\}|}{R}"),
]


def link(text: str, term: str) -> str:
    """Markdown link from a number's name to its glossary entry on the same page."""
    return f"[{text}](#glossary-{term})"


def anchor(term: str) -> str:
    """An HTML anchor the glossary links jump to."""
    return f'<span id="glossary-{term}"></span>'


def share_query(params: dict) -> str:
    """The query string (``?g=...``) that restores a sandbox."""
    return "?" + urlencode(params, safe=",:?")


def grade_option(grade) -> str:
    return "?" if grade is None else str(int(grade))


def grade_value(option: str):
    return None if option == "?" else int(option)


def fmt(value: float, digits: int = 4) -> str:
    return f"{value:.{digits}f}"


def systems_both_gains(sb: sandbox.Sandbox) -> pd.DataFrame:
    """System A (the list) and B (``sb.versus``) under both gains: AP, RR, P@k and nDCG@k exp / linear."""
    exp = sandbox.compare_systems(sb.replace(gain="exp"))
    linear = sandbox.compare_systems(sb.replace(gain="linear"))
    k = sb.cutoff
    table = exp.drop(columns=[exp.columns[-1]])
    table[f"nDCG@{k} exp"] = exp[exp.columns[-1]]
    table[f"nDCG@{k} linear"] = linear[linear.columns[-1]]
    return table


def flip_message(table: pd.DataFrame, k: int) -> str:
    """Whether the order of the two systems by nDCG@k flips between exponential and linear gain."""
    def verdict(column):
        a, b = table[column].iloc[0], table[column].iloc[1]
        return "they tie" if abs(a - b) <= 1e-9 else ("A (your list) is higher" if a > b else
                                                       "B (second system) is higher")

    exp, linear = verdict(f"nDCG@{k} exp"), verdict(f"nDCG@{k} linear")
    if exp == linear:
        return f"Same order under both gains: {exp}."
    return (f"**The order flips**: under exponential gain {exp}, under linear gain {linear}. Exponential gain "
            "weighs the top grades far more.")
