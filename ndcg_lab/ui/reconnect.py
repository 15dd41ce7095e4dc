"""A browser that reconnects to another server process runs its page there at once.

Streamlit's frontend, when its websocket comes back after a break, asks for a script run only
if the page was running, had just run a fragment, or has a fragment on a timer; otherwise it
keeps the old page on screen and waits for the visitor. Behind nginx (``ndcg-lab app
--replicas``) the websocket of a browser whose process died comes back to another process, in a
new session that never ran the page: the callbacks of the visitor's next action (an upload's
``on_change``, a button's ``on_click``) are not called there, since that session does not know
the widgets yet, so the action would be lost without a word. :func:`rerun_on_reconnect` draws
a fragment on a timer that draws nothing: the frontend then asks for a run as soon as it
reconnects, the new session runs the page from the address (the workspace token is in it), and
the visitor's next action reaches a page the session knows. The timer's own run (once a day, of
an empty fragment) costs nothing.
"""
from __future__ import annotations

from datetime import timedelta

import streamlit as st

__all__ = ["EVERY", "rerun_on_reconnect"]

EVERY = timedelta(days=1)   # below the browser's longest timer (24.8 days), which else fires at once


@st.fragment(run_every=EVERY)
def _marker() -> None:
    """Draws nothing; being on a timer is its whole job."""


def rerun_on_reconnect() -> None:
    """Make the frontend run the page again when its websocket reconnects (see the module)."""
    _marker()
