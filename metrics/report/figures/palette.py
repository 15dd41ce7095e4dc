"""The colours of every figure: Okabe and Ito's palette, which readers with any common form of
colour blindness (deuteranopia, protanopia, tritanopia) can tell apart, with its three light
colours darkened so that every line stands out from the white plot.

Okabe, M. & Ito, K. (2008), "Color Universal Design": eight colours chosen so that no two collapse
into one under the three dichromacies. Lines, markers and the parts of a chart a reader must see
need a contrast of 3:1 against the plot's background (WCAG 2.1, 1.4.11 non-text contrast); on
white, Okabe-Ito's orange (2.25:1), sky blue (2.31:1) and yellow (1.32:1) fall short. They are
replaced by darker companions of the same hue (brown, slate blue, olive), chosen to reach 3:1 and
to stay at least 15 CIELAB units from every other colour under the three simulated dichromacies,
as the eight originals do (tests/metrics/report/figures/test_palette.py checks both).

Systems take the colours in :data:`SYSTEMS` order; the roles that carry a meaning (better, worse, a
swap) take named colours, and a figure never relies on colour alone where a marker or a label can
say it too.
"""
from __future__ import annotations

BLACK = "#000000"
BLUE = "#0072B2"
BLUISH_GREEN = "#009E73"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
"""Okabe-Ito's five colours that reach 3:1 on white (21, 5.19, 3.42, 3.87 and 3.06:1)."""
BROWN = "#8A4800"
"""Okabe-Ito's orange (#E69F00) darkened: 6.98:1 on white."""
SLATE_BLUE = "#485A7E"
"""Okabe-Ito's sky blue (#56B4E9) darkened: 6.91:1 on white."""
OLIVE = "#90964E"
"""Okabe-Ito's yellow (#F0E442) darkened: 3.15:1 on white."""
GREY = "#767676"
"""The neutral for ties, baselines and reference lines (4.54:1 on white)."""

PLOT_BACKGROUND = "#FFFFFF"
"""What every line is drawn on: the plotly_white template's plot area, in the app's light theme."""

SYSTEMS: tuple[str, ...] = (BLUE, BROWN, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SLATE_BLUE, BLACK, OLIVE)
"""The order systems take them: blue first, then the others of Okabe-Ito's eight, each light colour
in its darker companion's place."""

BETTER = BLUISH_GREEN
"""A system better than its baseline (blue-green against vermillion: apart in every dichromacy,
unlike green against red)."""
WORSE = VERMILLION
TIE = GREY
ACCENT = BLUE
"""One series alone (a histogram, a mean difference)."""
HIGHLIGHT = VERMILLION
"""What the reader should look at: a swap, the tuned setting, a threshold."""
