"""Rendering helpers of the Query explorer: grade chips, the lists table, per-rank tables, and the
query-text section.

HTML tables (st.table / st.html) keep their text in the DOM, so a browser test
can read them.
"""
from __future__ import annotations

import html
from collections.abc import Mapping
from functools import partial

import pandas as pd
import streamlit as st

from metrics.analysis import querytext
from metrics.report import export
from metrics.report.figures import curves as figures
from metrics.report.figures import querytext as fq
from metrics.report.figures.explain import grade_color, text_color
from ndcg_lab.ui import state
from ndcg_lab.ui.charts import plotly_chart
from ndcg_lab.ui.tables import first_rows
from ndcg_lab.ui.text import md, plain_frame

CHIP_STYLE = ("display:inline-block;min-width:1.6em;padding:0 .35em;margin-right:.35em;border-radius:.6em;"
              "text-align:center;font-weight:600;font-size:.85em;border:1px solid rgba(0,0,0,.15);")


def query_labels(order: pd.DataFrame, topic_text: Mapping[str, str], qids: list[str]) -> dict[str, str]:
    """{qid: the query picker's label}: the id, the start of its topic, the mean over systems and,
    ordered by a difference, A − B. One pass over ``order``'s columns: the picker has a label for
    each of its thousands of queries on every run, where a row lookup per query took a second."""
    index = order.index.astype(str)
    means = dict(zip(index, order["mean"].to_numpy()))
    differences = dict(zip(index, order["difference"].to_numpy())) if "difference" in order.columns else None
    labels = {}
    for qid in qids:
        text = topic_text.get(qid, "")
        label = f"{qid} · {text[:70]}" if text else qid
        label += f" · mean {means[qid]:.3f}"
        if differences is not None:
            label += f" · A−B {differences[qid]:+.3f}"
        labels[qid] = label
    return labels


def find_queries(qids: list[str], topic_text: Mapping[str, str], search: str) -> list[str]:
    """The queries that ``search`` finds, best match first: the query whose id is exactly the
    search, then ids that start with it, ids that contain it, and last the queries whose topic text
    contains it (case-insensitive); each group keeps the order of ``qids``. "32" opens query 32
    before query 42 whose text mentions 32."""
    needle = search.strip().lower()
    if not needle:
        return list(qids)
    groups: list[list[str]] = [[], [], [], []]
    for qid in qids:
        low = str(qid).lower()
        if low == needle:
            groups[0].append(qid)
        elif low.startswith(needle):
            groups[1].append(qid)
        elif needle in low:
            groups[2].append(qid)
        elif needle in topic_text.get(qid, "").lower():
            groups[3].append(qid)
    return [q for group in groups for q in group]


def grade_label(grade, status: str) -> str:
    """How a grade reads in a table: "3", "? (unjudged)", "2 (inferred)" or "" (not retrieved)."""
    if status == "not retrieved":
        return ""
    if status == "unjudged" or pd.isna(grade):
        return "? (unjudged)"
    return f"{int(grade)} (inferred)" if status == "inferred" else str(int(grade))


def chip(grade, status: str = "judged") -> str:
    """A coloured grade chip (HTML): the grade, or "?" for an unjudged document."""
    text = "?" if status == "unjudged" or pd.isna(grade) else str(int(grade))
    if status == "inferred":
        text += "*"
    return (f'<span style="{CHIP_STYLE}background:{grade_color(grade, status)};'
            f'color:{text_color(grade, status)}" title="{html.escape(grade_label(grade, status))}">{text}</span>')


def lists_html(frames: Mapping[str, pd.DataFrame]) -> str:
    """The systems' ranked lists as one HTML table: a column per system, a row per rank, chips for grades."""
    systems = list(frames)
    depth = max((len(f) for f in frames.values()), default=0)
    head = "".join(f"<th>{html.escape(s)}</th>" for s in systems)
    rows = []
    for r in range(depth):
        cells = []
        for s in systems:
            frame = frames[s]
            if r >= len(frame) or frame["status"].iloc[r] == "not retrieved":
                cells.append("<td></td>")
                continue
            row = frame.iloc[r]
            title = row["title"] if "title" in frame.columns and isinstance(row["title"], str) else ""
            tip = f' title="{html.escape(title)}"' if title else ""
            cells.append(f"<td{tip}>{chip(row['grade'], str(row['status']))}"
                         f"<code>{html.escape(str(row['docno']))}</code></td>")
        rows.append(f"<tr><th>{r + 1}</th>{''.join(cells)}</tr>")
    return ('<table data-testid="query-lists" style="border-collapse:collapse;font-size:.9em">'
            f"<thead><tr><th>rank</th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def legend_html() -> str:
    """One line that explains the chip colours."""
    parts = [chip(g) + f"grade {g}" for g in range(5)]
    parts.append(chip(None, "unjudged") + "unjudged")
    parts.append(chip(2, "inferred") + "proxy label (inferred)")
    return '<div style="font-size:.85em">' + " &nbsp; ".join(parts) + "</div>"


PER_RANK_COLUMNS = {
    "rank": "rank", "docno": "docno", "title": "title", "grade": "grade", "gain": "gain",
    "discount": "1/log2(rank+1)", "contribution": "contribution", "dcg": "DCG@rank",
    "ideal_grade": "ideal grade", "ideal_gain": "ideal gain", "idcg": "IDCG@rank", "ndcg": "nDCG@rank",
}


def per_rank_styler(frame: pd.DataFrame, *, digits: int = 4, highlight: int | None = None):
    """Styler of an explain frame: grades as labels, numbers to ``digits`` decimals, row ``highlight`` marked."""
    shown = pd.DataFrame({"rank": frame["rank"].to_numpy()})
    shown["docno"] = [md(d) for d in frame["docno"].fillna("").astype(str)]
    if "title" in frame.columns:
        shown["title"] = [md(t) for t in frame["title"].fillna("").astype(str)]
    shown["grade"] = [grade_label(g, str(s)) for g, s in zip(frame["grade"], frame["status"])]
    for col in ("gain", "discount", "contribution", "dcg"):
        shown[col] = frame[col].to_numpy()
    shown["ideal_grade"] = ["" if pd.isna(g) else str(int(g)) for g in frame["ideal_grade"]]
    for col in ("ideal_gain", "idcg", "ndcg"):
        shown[col] = frame[col].to_numpy()
    shown = shown.rename(columns=PER_RANK_COLUMNS)
    numbers = [PER_RANK_COLUMNS[c] for c in ("discount", "contribution", "dcg", "idcg", "ndcg")]
    formats = {c: f"{{:.{digits}f}}" for c in numbers}
    formats.update({PER_RANK_COLUMNS[c]: "{:g}" for c in ("gain", "ideal_gain")})
    styler = shown.style.format(formats).hide(axis="index")
    chips = [_cell_css(g, str(s)) for g, s in zip(frame["grade"], frame["status"])]
    ideal_chips = ["" if pd.isna(g) else _cell_css(g, "judged") for g in frame["ideal_grade"]]
    styler = styler.apply(lambda _: chips, subset=["grade"]).apply(lambda _: ideal_chips, subset=["ideal grade"])
    if highlight is not None:
        def mark(row):
            on = row["rank"] == highlight
            return ["font-weight:700;background-color:rgba(46,160,67,.15)" if on else "" for _ in row]
        styler = styler.apply(mark, axis=1)
    return styler


def _cell_css(grade, status: str) -> str:
    if status == "not retrieved":
        return ""
    return f"background-color:{grade_color(grade, status)};color:{text_color(grade, status)}"


def simple_styler(frame: pd.DataFrame, formats: dict | None = None):
    """A frame for st.table with numeric formats and no index; its text (docnos, titles, a run's
    name in a header) shown letter for letter, never as Markdown."""
    formats = {md(column): spec for column, spec in (formats or {}).items()}
    return plain_frame(frame).style.format(formats, na_rep="—").hide(axis="index")


def text_section(sel, scores: pd.DataFrame, measure: str, shown: list, *, inferred: bool = False) -> None:
    """The query-text analysis: score against length with trend lines, scores by length bucket, the
    queries where the systems disagree most, search in the topics, documents only one system retrieves."""
    st.subheader("Query text")
    topics = state.topics(sel)
    colors = figures.system_colors(state.all_system_names(sel))
    if len(topics):
        points = querytext.length_vs_score(scores, topics, measure, field="text")
        trend = querytext.length_trend(points)
        st.markdown(f"**{measure} against query length** (terms; dashed: least-squares trend per system)")
        plotly_chart(fq.length_scatter(points, trend, measure=measure, colors=colors), width="stretch",
                        config=figures.FIGURE_CONFIG, key="qt_length")
        buckets = querytext.by_length_bucket(scores, topics, measure, field="text")
        st.markdown("**Scores by length bucket**")
        plotly_chart(fq.bucket_bars(buckets, measure=measure, colors=colors), width="stretch",
                        config=figures.FIGURE_CONFIG, key="qt_buckets")
        words = st.text_input("Search the topics for words (all of them, whole words)", key="qt_words",
                              placeholder="e.g. contract breach")
        if words.strip():
            found = querytext.search_topics(topics, words, fields=["text"])
            st.caption(f"{len(found)} of {len(topics)} topics hold every word")
            st.dataframe(found.merge(scores[scores["measure"] == measure].pivot_table(
                index="qid", columns="system", values="value").reset_index(), on="qid", how="left"),
                hide_index=True, width="stretch", key="qt_found")
    else:
        st.info("No topics in this collection: upload them on the Data page to see score against query length.")
    if len(sel.systems) >= 2:
        st.markdown(f"**Queries where the systems disagree most** on {measure} (spread = best − worst)")
        st.dataframe(disagreement(sel, measure, inferred), hide_index=True, width="stretch", key="qt_disagree")
    if len(shown) >= 2:
        k = st.number_input("Top k for the overlap", min_value=1, max_value=1000, value=10, key="qt_k")
        per_system, unique = overlap(sel, tuple(shown), int(k), inferred)
        st.markdown(f"**Documents retrieved by only one system** in the top {int(k)} (systems side by side above)")
        st.dataframe(per_system, width="stretch", key="qt_overlap")
        shown_unique, more = first_rows(unique, "by system, query and rank")
        if more:   # thousands of queries: megabytes a visit would send; the CSV (made on a click) holds all
            st.caption(f"{more} The CSV holds all {len(unique):,}.")
            st.download_button(f"All {len(unique):,} (CSV)",
                               partial(export.to_csv, unique.set_index("system"), {"top_k": int(k)}),
                               file_name=f"unique-top-{int(k)}-{sel.collection}.csv", mime="text/csv",
                               key="qt_unique_csv")
        st.dataframe(shown_unique, hide_index=True, width="stretch", key="qt_unique")


@st.cache_data(show_spinner=False, max_entries=32, ttl=state.CACHE_TTL, hash_funcs=state.HASH_FUNCS)
def disagreement(sel: state.Selection, measure: str, inferred: bool) -> pd.DataFrame:
    """The ten queries the selected systems disagree on most (:func:`metrics.analysis.querytext.disagreement`
    of the page's scores), cached: a pass over every query of every system."""
    topics = state.topics(sel)
    return querytext.disagreement(state.evaluate(sel, [measure], inferred=inferred),
                                  topics if len(topics) else None, measure,
                                  field="text" if len(topics) else None, top=10)


@st.cache_data(show_spinner=False, max_entries=32, ttl=state.CACHE_TTL, hash_funcs=state.HASH_FUNCS)
def overlap(sel: state.Selection, shown: tuple[str, ...], k: int, inferred: bool) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(per system: documents of its top ``k`` and those only it retrieves, summed over the queries;
    the documents only one system retrieves) of the ``shown`` systems' rankings, cached: the top k
    of every query of every run."""
    rankeds = {name: state.ranked(sel, name, dict(sel.systems)[name], inferred=inferred) for name in shown}
    per_system = querytext.overlap(rankeds, k).groupby("system", sort=False)[
        ["retrieved", "unique", "unique_relevant", "shared_by_all"]].sum()
    return per_system, querytext.unique_documents(rankeds, k)
