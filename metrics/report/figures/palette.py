"""The colours of every figure: Okabe and Ito's palette, which readers with any common form of
colour blindness (deuteranopia, protanopia, tritanopia) can tell apart.

Okabe, M. & Ito, K. (2008), "Color Universal Design": eight colours chosen so that no two collapse
into one under the three dichromacies. Systems take them in :data:`SYSTEMS` order; the roles that
carry a meaning (better, worse, a swap) take named colours, and a figure never relies on colour
alone where a marker or a label can say it too.
"""
from __future__ import annotations

BLACK = "#000000"
ORANGE = "#E69F00"
SKY_BLUE = "#56B4E9"
BLUISH_GREEN = "#009E73"
YELLOW = "#F0E442"
BLUE = "#0072B2"
VERMILLION = "#D55E00"
REDDISH_PURPLE = "#CC79A7"
GREY = "#999999"
"""Not one of the eight: the neutral for ties, baselines and reference lines."""

OKABE_ITO: tuple[str, ...] = (BLACK, ORANGE, SKY_BLUE, BLUISH_GREEN, YELLOW, BLUE, VERMILLION, REDDISH_PURPLE)
"""The eight colours in the order of Okabe & Ito (2008)."""

SYSTEMS: tuple[str, ...] = (BLUE, ORANGE, BLUISH_GREEN, VERMILLION, REDDISH_PURPLE, SKY_BLUE, BLACK, YELLOW)
"""The order systems take them: the strongest contrast on white first, yellow (1.3:1 on white)
last, so that up to seven systems are drawn in colours that stand out from the page."""

BETTER = BLUISH_GREEN
"""A system better than its baseline (blue-green against vermillion: apart in every dichromacy,
unlike green against red)."""
WORSE = VERMILLION
TIE = GREY
ACCENT = BLUE
"""One series alone (a histogram, a mean difference)."""
HIGHLIGHT = VERMILLION
"""What the reader should look at: a swap, the tuned setting, a threshold."""
