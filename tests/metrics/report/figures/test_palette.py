"""The default colours stay apart for colour-blind readers: every pair of the system palette, and
better against worse, differ by at least 15 CIELAB units (Delta E 1976) under simulated protanopia,
deuteranopia and tritanopia (Machado, Oliveira & Fernandes 2009, severity 1, on linear RGB).
Plotly's D3 palette, the former default, fails this (its green and red: 7 under deuteranopia).

Every colour a chart draws a line or a marker in reaches 3:1 against the plot's white background
(WCAG 2.1, 1.4.11), by WCAG's relative luminance and contrast ratio, checked on hand values first."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import plotly.colors
import plotly.io as pio
import pytest

from metrics.report.figures import palette
from metrics.report.figures.compare import BETTER, WORSE
from metrics.report.figures.curves import LAYOUT, PALETTE, leaderboard_bars

MACHADO = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}
SRGB_TO_XYZ = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
D65 = np.array([0.95047, 1.0, 1.08883])
APART = 15.0


def _linear(hex_colour: str) -> np.ndarray:
    c = np.asarray(plotly.colors.hex_to_rgb(hex_colour)) / 255
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def _lab(linear_rgb: np.ndarray) -> np.ndarray:
    t = SRGB_TO_XYZ @ linear_rgb / D65
    f = np.where(t > 0.008856, np.cbrt(t), 7.787 * t + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def closest_pair(colours, vision: str) -> float:
    """The smallest Delta E between two of ``colours`` as a reader with ``vision`` sees them."""
    seen = [_lab(np.clip(np.array(MACHADO[vision]) @ _linear(c), 0, 1)) for c in colours]
    return min(float(np.linalg.norm(a - b)) for a, b in itertools.combinations(seen, 2))


@pytest.mark.parametrize("vision", sorted(MACHADO))
def test_system_colours_and_better_worse_stay_apart(vision):
    assert closest_pair(PALETTE, vision) >= APART
    assert closest_pair([BETTER, WORSE], vision) >= APART


def test_the_former_d3_palette_fails_the_same_check():
    assert closest_pair(plotly.colors.qualitative.D3, "protanopia") < APART
    assert closest_pair(["#2ca02c", "#d62728"], "deuteranopia") < APART


def test_the_palette_is_the_default_everywhere():
    assert PALETTE == palette.SYSTEMS and len(set(PALETTE)) == 8
    assert LAYOUT["colorway"] == list(PALETTE)   # a trace without a colour of its own takes them too
    bars = leaderboard_bars(pd.DataFrame({"nDCG@10": [0.5, 0.4]}, index=["bm25", "dense"]), "nDCG@10")
    assert list(bars.data[0].marker.color) == ["#0072B2", "#8A4800"]   # Okabe-Ito blue, then the dark orange


def contrast(foreground: str, background: str) -> float:
    """WCAG 2.1's contrast ratio (L1 + 0.05) / (L2 + 0.05), L the relative luminance
    0.2126 R + 0.7152 G + 0.0722 B of the linearised sRGB channels, L1 the lighter."""
    lighter, darker = sorted((float(np.array([0.2126, 0.7152, 0.0722]) @ _linear(c)) for c in (foreground, background)),
                             reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def test_the_contrast_formula_on_hand_values():
    assert contrast("#000000", "#FFFFFF") == pytest.approx(21.0)          # (1 + 0.05) / (0 + 0.05)
    assert contrast("#FFFFFF", "#FFFFFF") == pytest.approx(1.0)
    # 0x76 = 118: ((118/255 + 0.055) / 1.055) ** 2.4 = 0.18116 in each channel, so L = 0.18116
    assert contrast("#767676", "#FFFFFF") == pytest.approx(1.05 / (0.18116 + 0.05), abs=1e-3)   # 4.54
    # Okabe-Ito's orange: R 0xE6 -> 0.79130, G 0x9F -> 0.34670, B 0 -> 0; L = 0.41619
    assert contrast("#E69F00", "#FFFFFF") == pytest.approx(1.05 / (0.2126 * 0.79130 + 0.7152 * 0.34670 + 0.05),
                                                          abs=1e-3)                                  # 2.25


def test_every_line_colour_stands_out_from_the_plot_background():
    assert pio.templates[LAYOUT["template"]].layout.plot_bgcolor == "white"
    assert palette.PLOT_BACKGROUND == "#FFFFFF"
    lines = {**{f"system {i}": c for i, c in enumerate(palette.SYSTEMS)}, "better": palette.BETTER,
             "worse": palette.WORSE, "tie": palette.TIE, "accent": palette.ACCENT, "highlight": palette.HIGHLIGHT,
             "grey": palette.GREY}
    ratios = {role: round(contrast(c, palette.PLOT_BACKGROUND), 2) for role, c in lines.items()}
    assert min(ratios.values()) >= 3.0, ratios
    # Okabe-Ito's three light colours, which the palette replaces, fall short
    assert max(contrast(c, "#FFFFFF") for c in ("#E69F00", "#56B4E9", "#F0E442")) < 3.0
