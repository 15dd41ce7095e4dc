"""metrics.report.figures.compare: the comparison figures carry the per-query numbers, the colours
of each sign and the names in the hover, from small hand-made frames."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.colors
import pytest

from metrics.errors import MetricsError
from metrics.report.figures import compare as figs
from metrics.report.figures import density
from metrics.report.figures.compare import BETTER, TIE, WORSE

BLUE = "#0072B2"   # Okabe-Ito blue: a single series, a CI across 0


def per_query(baseline: list[float], system: list[float], **extra) -> pd.DataFrame:
    """The frame of metrics.stats.per_query, built by hand: delta = system - baseline."""
    frame = pd.DataFrame({"qid": [f"q{i + 1}" for i in range(len(baseline))], "baseline": baseline,
                          "system": system, **extra})
    frame["delta"] = frame["system"] - frame["baseline"]
    return frame


# deltas: q1 0.25 - 0.5 = -0.25, q2 0.7 - 0.2 = +0.5, q3 0.4 - 0.4 = 0, q4 0.35 - 0.3 = +0.05
ROWS = per_query([0.5, 0.2, 0.4, 0.3], [0.25, 0.7, 0.4, 0.35], text=["first topic", "", None, "fourth"])


def test_sign_colors_with_and_without_tolerance():
    delta = [0.1, -0.2, 0.0, 1e-12, -1e-12]
    assert figs.sign_colors(delta) == [BETTER, WORSE, TIE, TIE, TIE]
    assert figs.sign_colors(delta, tolerance=0.15) == [TIE, WORSE, TIE, TIE, TIE]


def test_delta_bars_sorted_from_most_helped_with_sign_colours():
    fig = figs.delta_bars(ROWS, measure="nDCG@10", baseline="bm25", system="ce")
    (bars,) = fig.data
    assert list(bars.x) == ["q2", "q4", "q3", "q1"]
    assert np.asarray(bars.y) == pytest.approx([0.5, 0.05, 0.0, -0.25])
    assert list(bars.marker.color) == [BETTER, BETTER, TIE, WORSE]
    assert [row[0] for row in bars.customdata] == ["q2", "q4", "q3", "q1"]
    assert [float(row[1]) for row in bars.customdata] == [0.2, 0.3, 0.4, 0.5]     # baseline values
    assert [float(row[2]) for row in bars.customdata] == [0.7, 0.35, 0.4, 0.25]   # system values
    assert [row[3] for row in bars.customdata] == ["", "fourth", "", "first topic"]
    assert "bm25: %{customdata[1]:.4f}" in bars.hovertemplate and "ce: %{customdata[2]:.4f}" in bars.hovertemplate
    assert fig.layout.yaxis.title.text == "Δ nDCG@10 (ce − bm25)"
    assert fig.layout.xaxis.title.text == "query (sorted by difference; 4 queries)"
    assert list(fig.layout.xaxis.categoryarray) == ["q2", "q4", "q3", "q1"]
    assert fig.layout.shapes[0].y0 == 0 and fig.layout.shapes[0].y1 == 0   # the zero line


def test_delta_bars_ties_break_by_qid_and_ticks_go_beyond_sixty_queries():
    tied = per_query([0.5, 0.5, 0.5], [0.6, 0.6, 0.6]).assign(qid=["b", "c", "a"])
    assert list(figs.delta_bars(tied, measure="AP", baseline="x", system="y").data[0].x) == ["a", "b", "c"]
    many = per_query([0.0] * 61, [0.1] * 61)
    assert figs.delta_bars(many, measure="AP", baseline="x", system="y").layout.xaxis.showticklabels is False
    assert figs.delta_bars(many.head(60), measure="AP", baseline="x", system="y").layout.xaxis.showticklabels


def test_hover_text_of_names_and_topics_is_inert():
    rows = per_query([0.1], [0.2], text=["<b>bold</b> %{x}" + "z" * 100])
    fig = figs.delta_bars(rows, measure="AP", baseline="bm<25>", system="%{y}")
    (bars,) = fig.data
    assert "bm&lt;25&gt;: " in bars.hovertemplate and "%\u200b{y}: " in bars.hovertemplate
    topic = bars.customdata[0][3]
    assert topic.startswith("&lt;b&gt;bold&lt;/b&gt; %\u200b{x}") and topic.endswith("z…")
    # cut at 80 characters before escaping: the 16 of "<b>bold</b> %{x}", 63 z and an ellipsis
    assert topic.count("z") == 80 - 16 - 1


def test_paired_scatter_points_diagonal_and_square_axes():
    fig = figs.paired_scatter(ROWS, measure="nDCG@10", baseline="bm25", system="ce")
    diagonal, points = fig.data
    assert (list(diagonal.x), list(diagonal.y)) == ([0.0, 1.0], [0.0, 1.0])   # values within [0, 1]
    assert list(points.x) == [0.5, 0.2, 0.4, 0.3] and list(points.y) == [0.25, 0.7, 0.4, 0.35]
    assert list(points.marker.color) == [WORSE, BETTER, TIE, BETTER]
    assert [row[0] for row in points.customdata] == ["q1", "q2", "q3", "q4"]
    assert "bm25: %{x:.4f}" in points.hovertemplate and "ce: %{y:.4f}" in points.hovertemplate
    assert list(fig.layout.xaxis.range) == pytest.approx([-0.02, 1.02])
    assert fig.layout.yaxis.scaleanchor == "x"
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("bm25: nDCG@10", "ce: nDCG@10")


def test_paired_scatter_range_follows_values_above_one():
    fig = figs.paired_scatter(per_query([1.0, 3.0], [2.5, 0.5]), measure="DCG@10", baseline="a", system="b")
    assert list(fig.data[0].x) == [0.0, 3.0]
    # lo = 0, hi = 3: 2% margins of the span 3 on each side
    assert list(fig.layout.yaxis.range) == pytest.approx([-0.06, 3.06])


def test_delta_histogram_bins_and_mean_line():
    fig = figs.delta_histogram(ROWS, measure="AP", baseline="bm25", system="ce")
    (hist,) = fig.data
    assert np.asarray(hist.x) == pytest.approx([-0.25, 0.5, 0.0, 0.05])
    assert hist.nbinsx == 10                       # 2 * ceil(sqrt(4)) = 4, raised to at least 10
    zero, mean = fig.layout.shapes
    assert zero.x0 == 0
    assert mean.x0 == pytest.approx((-0.25 + 0.5 + 0.0 + 0.05) / 4) and mean.line.color == BETTER
    assert fig.layout.annotations[0].text == "mean Δ = +0.0750"
    worse = figs.delta_histogram(per_query([0.5] * 100, [0.4] * 100), measure="AP", baseline="a", system="b")
    assert worse.data[0].nbinsx == 20              # 2 * ceil(sqrt(100))
    assert worse.layout.shapes[1].line.color == WORSE


def test_profile_figure_band_and_significant_points():
    profile = pd.DataFrame({"k": [1, 2, 3], "diff": [0.1, -0.05, -0.2], "ci_low": [0.02, -0.1, -0.3],
                            "ci_high": [0.2, 0.01, -0.1]})
    fig = figs.profile_figure(profile, measure_label="nDCG@k", baseline="bm25", system="ce", level=0.9)
    band, line = fig.data
    assert list(band.x) == [1, 2, 3, 3, 2, 1]
    assert list(band.y) == [0.2, 0.01, -0.1, -0.3, -0.1, 0.02]   # upper bounds out, lower bounds back
    assert band.name == "90% CI"
    assert list(line.y) == [0.1, -0.05, -0.2]
    assert list(line.marker.color) == [BETTER, BLUE, WORSE]   # CI above 0, across 0, below 0
    assert [list(c) for c in line.customdata] == [[0.02, 0.2], [-0.1, 0.01], [-0.3, -0.1]]
    assert fig.layout.yaxis.title.text == "Δ nDCG@k (ce − bm25)"


def test_figures_refuse_frames_without_their_columns():
    with pytest.raises(MetricsError, match="delta_bars: frame lacks column"):
        figs.delta_bars(ROWS.drop(columns="delta"), measure="AP", baseline="a", system="b")
    with pytest.raises(MetricsError, match="profile_figure: frame lacks column"):
        figs.profile_figure(pd.DataFrame({"k": [1]}), measure_label="AP", baseline="a", system="b")


def test_figures_html_escapes_headings_and_loads_plotly_once():
    bars = figs.delta_bars(ROWS, measure="AP", baseline="a", system="b")
    page = figs.figures_html({"<Δ>": bars, "again": bars}, "a & b")
    assert "<title>a &amp; b</title>" in page and "<h2>&lt;Δ&gt;</h2>" in page
    assert page.count("<h2>") == 2 and page.count("cdn.plot.ly") == 1



# --------------------------------------------------------------------------- beyond MAX_MARKS queries

def many_queries(n: int = figs.MAX_MARKS + 1) -> pd.DataFrame:
    """``n`` queries of baseline 0.51: a third helped, a third tied, a third hurt, by 0.1 each."""
    sign = np.resize([1, 0, -1], n)
    return per_query([0.51] * n, list(0.51 + 0.1 * sign))


def test_delta_bars_of_many_queries_are_one_filled_step_line_per_sign():
    rows = many_queries()
    fig = figs.delta_bars(rows, measure="AP", baseline="a", system="b")
    assert [t.type for t in fig.data] == ["scatter"] * 3 and [t.name for t in fig.data] == ["helped", "tied", "hurt"]
    helped, tied, hurt = fig.data
    expected = rows.sort_values(["delta", "qid"], ascending=[False, True], kind="stable")["qid"].tolist()
    assert [*helped.x, *tied.x, *hurt.x] == expected == list(fig.layout.xaxis.categoryarray)
    assert (len(helped.x), len(tied.x), len(hurt.x)) == (334, 334, 333)
    assert np.asarray(helped.y) == pytest.approx([0.1] * 334) and np.asarray(hurt.y) == pytest.approx([-0.1] * 333)
    assert (helped.line.color, tied.line.color, hurt.line.color) == (BETTER, TIE, WORSE)
    assert all(t.fill == "tozeroy" and t.mode == "lines" and t.line.shape == "hv" for t in fig.data)
    assert [row[0] for row in hurt.customdata] == list(hurt.x)     # the hover names each query
    assert "Δ = %{y:+.4f}" in hurt.hovertemplate and fig.layout.hovermode == "x"
    # one query fewer: one bar per query, as before
    (bars,) = figs.delta_bars(rows.head(figs.MAX_MARKS), measure="AP", baseline="a", system="b").data
    assert bars.type == "bar" and len(bars.x) == figs.MAX_MARKS


def test_paired_scatter_of_many_queries_is_a_density_of_their_counts():
    rows = many_queries()
    fig = figs.paired_scatter(rows, measure="AP", baseline="a", system="b<i>")
    density, diagonal = fig.data
    assert density.type == "heatmap" and diagonal.name == "y = x (no change)"
    z = np.asarray(density.z, dtype=float)
    assert z.shape == (figs.DENSITY_BINS, figs.DENSITY_BINS) and np.nansum(z) == 1001
    # [0, 1] in 40 cells of 0.025: the baseline's 0.51 in column 20, the system's 0.61, 0.51 and 0.41
    # in rows 24, 20 and 16; every other cell empty, so blank (NaN)
    cells = {(int(i), int(j)): int(z[i, j]) for i, j in zip(*np.nonzero(np.nan_to_num(z)))}
    assert cells == {(24, 20): 334, (20, 20): 334, (16, 20): 333}
    assert np.isnan(z).sum() == figs.DENSITY_BINS ** 2 - 3
    assert fig.layout.title.text == "1001 queries: 334 above the diagonal, 333 below it, 334 on it"
    assert density.text[24][20] == "a in [0.500, 0.525)<br>b&lt;i&gt; in [0.600, 0.625)"
    assert density.text[39][39].endswith("in [0.975, 1.000]")    # the last cell holds its upper edge
    assert density.colorscale[0] == (0.0, "rgb(74, 152, 201)") and density.colorscale[-1][0] == 1
    assert (density.zmin, density.zmax) == (1, 334) and list(density.colorbar.tickvals) == [1, 100, 334]
    # one query fewer: one point per query, as before
    _, points = figs.paired_scatter(rows.head(figs.MAX_MARKS), measure="AP", baseline="a", system="b").data
    assert points.mode == "markers" and len(points.x) == figs.MAX_MARKS


def test_the_density_colours_are_a_log_scale_of_the_counts():
    # stops at 1, 10, 100, 1000 and the top count, where the linear bar has them, coloured by their log
    fig = figs.paired_scatter(per_query([0.0] * 1500 + [1.0], [0.0] * 1500 + [1.0]), measure="AP", baseline="a",
                              system="b")
    scale = fig.data[0].colorscale
    assert [s[0] for s in scale] == pytest.approx([0, 9 / 1499, 99 / 1499, 999 / 1499, 1])
    logs = [np.log(t) / np.log(1500) for t in (1, 10, 100, 1000, 1500)]
    assert [s[1] for s in scale] == plotly.colors.sample_colorscale("Blues", [0.6 + 0.4 * w for w in logs])
    assert list(fig.data[0].colorbar.tickvals) == [1, 1000, 1500]   # 10 and 100 too close to 1 to label
    assert density._spaced([1, 10, 100, 1000, 1500]) == [1, 1000, 1500]
    assert density._spaced([1, 50, 100]) == [1, 50, 100]
    assert density._spaced([1, 2]) == [1, 2]
