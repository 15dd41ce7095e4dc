"""The Learn NDCG page's sandbox: its state (one :class:`Sandbox` in session state, which widgets
change through callbacks), its editor and second system, the numbers it shows in words and
formulas, and the page's texts: glossary, formulas, notes on the other measures.
"""
from __future__ import annotations

from urllib.parse import urlencode

import pandas as pd
import streamlit as st

import metrics
from metrics.analysis import sandbox
from metrics.analysis.sandbox import PRESETS, Sandbox
from ndcg_lab.ui.text import md

ss = st.session_state
DEFAULT_PRESET = "legal"
LINKED = ("g", "k", "gain", "names", "missed", "guess", "vs")
"""Query parameters of a sandbox link (:func:`metrics.analysis.sandbox.to_params`)."""

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


# -- state: one Sandbox in session state; widgets write to it through callbacks -------------------
def current() -> Sandbox:
    """The sandbox of this session."""
    return ss["learn_sb"]


def _set(sb: Sandbox) -> None:
    ss["learn_sb"] = sb
    ss.pop("learn_error", None)


def on_preset() -> None:
    _set(PRESETS[ss["learn_preset"]].sandbox)


def _on_grade(i: int) -> None:
    _set(current().regraded(i, grade_value(ss[f"learn_grade_{i}"])))


def on_cutoff() -> None:
    _set(current().replace(cutoff=int(ss["learn_k"])))


def on_gain() -> None:
    _set(current().replace(gain=ss["learn_gain"]))


def _on_size() -> None:
    _set(current().resized(int(ss["learn_n"])))


def _on_missed() -> None:
    raw = ss.get("learn_missed", "").replace(" ", "")
    try:
        missed = tuple(int(g) for g in raw.split(",") if g)
        _set(current().replace(missed=missed))
    except (ValueError, metrics.MetricsError):
        ss["learn_error"] = f"Missed documents: {raw!r} is not a list of grades 1-4 such as 3,2."


def _on_versus() -> None:
    raw = ss.get("learn_vs", "")
    try:
        _set(current().replace(versus=tuple(n.strip() for n in raw.split(",") if n.strip())))
    except metrics.MetricsError as exc:
        ss["learn_error"] = f"Second system: {exc}"


def _on_guess(name: str) -> None:
    guesses = dict(current().guesses)
    guesses[name] = int(ss[f"learn_guess_{name}"])
    _set(current().replace(guesses=tuple(guesses.items())))


def _ideal() -> None:
    _set(current().ideal())


def _reverse() -> None:
    _set(current().reversed())


def _shuffle() -> None:
    _set(current().shuffled(int(ss.get("learn_seed", 0))))


def _move(i: int, step: int) -> None:
    _set(current().moved(i, step))


def on_apply(move: dict) -> None:
    _set(sandbox.apply_move(current(), move))


def load() -> Sandbox:
    """The session's sandbox, loaded from the address when it is a link (not this page's own
    address) naming another list, else the default preset's; its widgets' values set from it
    (before they are drawn: no widget passes its own default)."""
    params = st.query_params
    linked = {key: params[key] for key in LINKED if params.get(key)}
    if "learn_sb" not in ss or (linked.get("g") and linked != ss.get("learn_written", linked)):
        ss["learn_sb"] = PRESETS[DEFAULT_PRESET].sandbox
        if "g" in params:
            try:
                ss["learn_sb"] = sandbox.from_params(params.to_dict())
                same = [key for key, preset in PRESETS.items() if preset.sandbox == ss["learn_sb"]]
                if same:
                    ss["learn_preset"] = same[0]
            except metrics.MetricsError as exc:
                ss["learn_error"] = f"The link's sandbox could not be restored: {exc}"
    ss.setdefault("learn_preset", DEFAULT_PRESET)
    sb = current()
    for i, grade in enumerate(sb.grades):
        ss[f"learn_grade_{i}"] = grade_option(grade)
    ss["learn_k"], ss["learn_gain"], ss["learn_n"] = sb.cutoff, sb.gain, len(sb)
    ss["learn_missed"] = ",".join(map(str, sb.missed))
    if "learn_error" not in ss or not ss["learn_error"].startswith("Second system"):
        ss["learn_vs"] = ", ".join(sb.versus)
    for name in sb.unjudged:
        ss[f"learn_guess_{name}"] = sb.guess_of(name)
    return sb


# -- the editor ---------------------------------------------------------------------------------------
def editor(sb: Sandbox, per_rank: pd.DataFrame) -> None:
    """The ranking: order buttons, one row per document (grade, up, down, its DCG term), the size
    of the list and the relevant documents it missed."""
    k = sb.cutoff
    st.subheader("Your ranking")
    b1, b2, b3, b4 = st.columns([1.2, 1, 1, 1.2], vertical_alignment="bottom")
    b1.button("Ideal order", key="learn_ideal", on_click=_ideal, help="Sort by grade, best first (unjudged as 0).")
    b2.button("Reverse", key="learn_reverse", on_click=_reverse)
    b3.button("Shuffle", key="learn_shuffle", on_click=_shuffle, help="A permutation drawn with the seed.")
    b4.number_input("Seed", 0, 10_000, 0, key="learn_seed")
    for i, name in enumerate(sb.names):
        row = per_rank.iloc[i]
        c = st.columns([0.4, 0.8, 1.3, 0.75, 0.75, 2.4], vertical_alignment="center")
        c[0].markdown(f"**{i + 1}**")
        c[1].markdown(md(name))
        c[2].selectbox(f"Grade of {md(name)} at rank {i + 1}", GRADE_OPTIONS, key=f"learn_grade_{i}",
                       on_change=_on_grade, args=(i,), label_visibility="collapsed")
        c[3].button("↑", key=f"learn_up_{i}", on_click=_move, args=(i, -1), disabled=i == 0,
                    help=f"Move {md(name)} up", width="stretch")
        c[4].button("↓", key=f"learn_down_{i}", on_click=_move, args=(i, 1), disabled=i == len(sb) - 1,
                    help=f"Move {md(name)} down", width="stretch")
        cut = "" if i < k else " · below k"
        c[5].caption(f"{row['gain']:g} / log2({i + 2}) = {row['contribution']:.3f}{cut}")
    s1, s2 = st.columns(2)
    s1.number_input("Documents in the list", 1, sandbox.MAX_DOCS, key="learn_n", on_change=_on_size)
    s2.text_input("Relevant documents the list missed (grades)", key="learn_missed", on_change=_on_missed,
                  placeholder="e.g. 3,2", help="They count in IDCG and recall, as documents a system failed "
                                               "to retrieve do.")


def second_system(sb: Sandbox) -> None:
    """The second system's order of the same documents and both systems under both gains."""
    st.text_input("Second system's order (document names, best first, comma separated)", key="learn_vs",
                  on_change=_on_versus, placeholder=", ".join(reversed(sb.names)),
                  help="Leave empty for no second system. Every document of your list, once each.")
    if sb.versus:
        both = systems_both_gains(sb)
        st.table(both.style.format({c: "{:.4f}" for c in both.columns if c != "ranking"}))
        st.markdown(flip_message(both, sb.cutoff))


def guesses(sb: Sandbox) -> None:
    """A guessed grade per unjudged document (the *inferred* strategy's)."""
    if sb.unjudged:
        st.markdown("Guess a grade for each unjudged document (used by the *inferred* strategy):")
        cols = st.columns(min(len(sb.unjudged), 6))
        for i, name in enumerate(sb.unjudged):
            cols[i % len(cols)].selectbox(f"Guess for {md(name)}", list(sandbox.GRADES), key=f"learn_guess_{name}",
                                          on_change=_on_guess, args=(name,))
    else:
        st.caption("No document is unjudged: set a grade to ? to see the strategies disagree.")


# -- the numbers in words and formulas ----------------------------------------------------------------
def gain_word(sb: Sandbox) -> str:
    """``exp`` or ``linear``: the suffix of the sandbox's scores under its gain."""
    return "exp" if sb.gain == "exp" else "linear"


def ndcg_line(sb: Sandbox, values: dict) -> str:
    """nDCG@k = DCG@k / IDCG@k with the numbers, CG@k and the measure, each name a glossary link."""
    k, word = sb.cutoff, gain_word(sb)
    dcg, idcg, ndcg = values[f"DCG {word}"], values[f"IDCG {word}"], values[f"nDCG {word}"]
    return (f"{link(f'nDCG@{k}', 'ndcg')} = **{fmt(ndcg)}** = {link(f'DCG@{k}', 'dcg')} / "
            f"{link(f'IDCG@{k}', 'idcg')} = {fmt(dcg)} / {fmt(idcg)} · {link(f'CG@{k}', 'cg')} = "
            f"{values[f'CG {word}']:g} · measure `{sb.measure}`")


def dcg_latex(sb: Sandbox, per_rank: pd.DataFrame, dcg: float) -> str:
    r"""DCG@k as LaTeX: the sum, its non-zero terms gain / log2(rank + 1), four a line, and its value."""
    k = sb.cutoff
    gain_formula = "2^{rel_r}-1" if sb.gain == "exp" else "rel_r"
    terms = [f"\\frac{{{g:g}}}{{\\log_2 {r + 1}}}" for r, g in zip(per_rank["rank"][:k], per_rank["gain"][:k])
             if g > 0] or ["0"]
    lines = [" + ".join(terms[i:i + 4]) for i in range(0, len(terms), 4)]
    return (rf"\begin{{aligned}}\mathrm{{DCG}}@{k} &= \sum_{{r=1}}^{{{k}}} \frac{{{gain_formula}}}{{\log_2(r+1)}}"
            rf" \\ &= " + r" \\ &\quad + ".join(lines) + rf" \\ &= {dcg:.4f}\end{{aligned}}")


def both_gains(values: dict, k: int) -> tuple[pd.DataFrame, str]:
    """DCG, IDCG and nDCG at k under exponential and linear gain, and which nDCG is higher."""
    table = pd.DataFrame({
        "exponential (2^rel − 1)": [values["DCG exp"], values["IDCG exp"], values["nDCG exp"]],
        "linear (rel)": [values["DCG linear"], values["IDCG linear"], values["nDCG linear"]],
    }, index=[f"DCG@{k}", f"IDCG@{k}", f"nDCG@{k}"])
    diff = values["nDCG exp"] - values["nDCG linear"]
    direction = ("higher" if diff > 0 else "lower") if abs(diff) > 5e-5 else "the same"
    return table, (
        f"Here exponential nDCG is **{direction}** ({diff:+.4f}). Exponential gain makes a grade-4 document "
        "worth 15 grade-1 documents (linear: 4), so nDCG with 2^rel − 1 depends mostly on where the top grades "
        "sit: it rewards lists that put them first more and punishes lists that bury them more. With grades "
        "0/1 only, both gains are identical. trec_eval's ndcg_cut uses linear gain; many papers use exponential: "
        "say which.")


def rivals(values: dict, k: int, ndcg: float) -> tuple[pd.DataFrame, str]:
    """AP, RR, P@k and R@k of the list with why each differs from nDCG, and a line of them all."""
    table = pd.DataFrame({
        "measure": [f"{GLOSSARY['map'][0]}", "MRR (RR)", f"P@{k}", f"R@{k}"],
        "value": [values["AP"], values["RR"], values["P"], values["R"]],
        "why it differs from nDCG": [MEASURE_NOTES[m] for m in ("AP", "RR", "P", "R")],
    })
    line = " · ".join(f"{link(label, term)} = {fmt(v)}" for label, term, v in (
        ("AP", "map", values["AP"]), ("RR", "mrr", values["RR"]), (f"P@{k}", "pk", values["P"]),
        (f"R@{k}", "rk", values["R"]))) + f" · {link(f'nDCG@{k}', 'ndcg')} = {fmt(ndcg)}. " \
        "For one query, MAP is AP and MRR is RR; relevant means grade >= 1."
    return table, line
