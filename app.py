"""nDCG Lab: the entry point declares navigation and the sidebar state; pages do the rest."""
import streamlit as st

from ui import state

st.set_page_config(page_title="nDCG Lab", page_icon="📈", layout="wide")

PAGES = [
    st.Page("pages/leaderboard.py", title="Leaderboard", icon="🏆", default=True),
    st.Page("pages/curves.py", title="Curves", icon="📈"),
    st.Page("pages/data.py", title="Data", icon="🗂️"),
]

navigation = st.navigation(PAGES)
state.remember(state.sidebar())
navigation.run()
