"""Scrollable regions a keyboard can reach (WCAG 2.1 2.1.1, axe's scrollable-region-focusable).

Streamlit gives a table's scroll box a tab stop only when the table has a fixed pixel size, and a
wide display formula (KaTeX) scrolls sideways with none: a reader without a mouse cannot scroll
either. :func:`reach_scrolling` adds a small script, once per page load, that gives every box
which actually scrolls ``tabindex="0"``, ``role="region"`` and a name, and watches the page for
boxes drawn later. A box that fits its content is left alone (no needless tab stop). The same
script names the unnamed mark groups of Streamlit's own (Vega-Lite) charts, which axe's
svg-img-alt rule requires.
"""
from __future__ import annotations

import streamlit as st

SCRIPT = """<script>
(() => {
  if (window.ndcgLabScrollFocus) return;
  window.ndcgLabScrollFocus = true;
  const CANDIDATES = '.katex-display, [data-testid="stTable"] div, [data-testid="stMarkdownContainer"] pre, '
    + '[data-testid="stMarkdownContainer"] div';
  const names = [['.katex-display', 'Formula, scrolls sideways'], ['[data-testid="stTable"]', 'Table, scrollable']];
  const scrolls = (el) => {
    const style = getComputedStyle(el);
    const x = /(auto|scroll)/.test(style.overflowX) && el.scrollWidth > el.clientWidth;
    const y = /(auto|scroll)/.test(style.overflowY) && el.scrollHeight > el.clientHeight;
    return x || y;
  };
  const mark = () => {
    for (const el of document.querySelectorAll(CANDIDATES)) {
      if (el.hasAttribute('tabindex') || !scrolls(el)) continue;
      if (el.querySelector('a, button, input, select, textarea, [tabindex]')) continue;
      const found = names.find(([selector]) => el.matches(selector) || el.closest(selector));
      el.setAttribute('tabindex', '0');
      el.setAttribute('role', 'region');
      el.setAttribute('aria-label', found ? found[1] : 'Scrollable region');
    }
  };
  // Vega-Lite (st.line_chart) draws mark groups with role="img" and no name: name them after the
  // table that holds their numbers.
  const nameCharts = () => {
    for (const el of document.querySelectorAll('[data-testid="stVegaLiteChart"] [role="img"]:not([aria-label])')) {
      el.setAttribute('aria-label', 'Chart marks; the numbers are in the table "Data of this chart" below');
    }
  };
  let queued = false;
  const both = () => { queued = false; mark(); nameCharts(); };
  const later = () => { if (!queued) { queued = true; requestAnimationFrame(both); } };
  new MutationObserver(later).observe(document.body, {childList: true, subtree: true});
  window.addEventListener('resize', later);
  later();
})();
</script>"""


def reach_scrolling() -> None:
    """Draw the script (in the sidebar, where its empty box takes no room from the page)."""
    with st.sidebar:
        st.html(SCRIPT, unsafe_allow_javascript=True)
