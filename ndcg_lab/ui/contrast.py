"""Text that meets WCAG 2.1 AA contrast (4.5:1) where Streamlit's own colours fall short.

Streamlit draws captions in its text colour at 60% opacity (#828180 on white: 3.9:1), the labels of
disabled widgets fainter still (#acabaa: 2.3:1; a read-only link disables every form, and its
labels are what tells the reader what the form was), st.json's numbers in #268bd2 (3.7:1) and
the "empty" of an empty st.table in #808495 (3.7:1).
The theme has no setting for any of these, so :func:`fix_contrast` adds one style sheet per page
with darker colours that keep the hierarchy: captions 6.6:1 on white (5.8:1 on the sidebar's
grey), disabled labels 5.4:1 (4.7:1), json values 6.9:1. Checked by
tests/e2e/test_accessibility.py (axe's color-contrast).
"""
from __future__ import annotations

import streamlit as st

CAPTION = "#5e5d5b"
DISABLED = "#6b6a68"
JSON_VALUE = "#1d5f8c"

CSS = f"""<style>
[data-testid="stCaptionContainer"] {{ opacity: 1 !important; }}
[data-testid="stCaptionContainer"], [data-testid="stCaptionContainer"] * {{ color: {CAPTION} !important; }}
.stElementContainer:has(:disabled, [aria-disabled="true"]) [data-testid="stWidgetLabel"] *,
.stElementContainer:has(:disabled, [aria-disabled="true"]) label * {{ color: {DISABLED} !important; }}
[data-testid="stJson"] .variable-value, [data-testid="stJson"] .variable-value * {{ color: {JSON_VALUE} !important; }}
[data-testid="stTableStyledEmptyTableCell"] {{ color: {CAPTION} !important; }}
</style>"""


def fix_contrast() -> None:
    """Draw the style sheet (in the sidebar, where its empty box takes no room from the page)."""
    with st.sidebar:
        st.html(CSS)
