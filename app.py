"""nDCG Lab: the entry point declares navigation and the sidebar state; pages do the rest."""
from pathlib import Path

import streamlit as st

from ui import state

st.set_page_config(page_title="nDCG Lab", page_icon=":material/monitoring:", layout="wide")

HERE = Path(__file__).resolve().parent
# (file, title, icon), in menu order; the first is the landing page. Icons are Material Symbols,
# a font Streamlit ships: an emoji needs an emoji font, which many machines lack (a box instead).
PAGES = [
    ("views/leaderboard.py", "Leaderboard", ":material/leaderboard:"),
    ("views/curves.py", "Curves", ":material/show_chart:"),
    ("views/compare.py", "Compare", ":material/compare_arrows:"),
    ("views/where.py", "Where it differs", ":material/insights:"),
    ("views/fusion.py", "Fusion", ":material/merge:"),
    ("views/query.py", "Query explorer", ":material/manage_search:"),
    ("views/judgments.py", "Judgments", ":material/gavel:"),
    ("views/behaviour.py", "Measure behaviour", ":material/science:"),
    ("views/learn.py", "Learn NDCG", ":material/school:"),
    ("views/data.py", "Data", ":material/folder_open:"),
    ("views/task.py", "Class task", ":material/groups:"),
]

navigation = st.navigation([
    st.Page(path, title=title, icon=icon, default=(i == 0))
    for i, (path, title, icon) in enumerate(PAGES) if (HERE / path).exists()
])
state.remember(state.sidebar())
state.run_page(navigation)
