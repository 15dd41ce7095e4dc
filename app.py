"""nDCG Lab: the entry point declares navigation and the sidebar state; pages do the rest."""
from pathlib import Path

import streamlit as st

from ui import state

st.set_page_config(page_title="nDCG Lab", page_icon="📈", layout="wide")

HERE = Path(__file__).resolve().parent
# (file, title, icon), in menu order; the first is the landing page.
PAGES = [
    ("views/leaderboard.py", "Leaderboard", "🏆"),
    ("views/curves.py", "Curves", "📈"),
    ("views/compare.py", "Compare", "⚖️"),
    ("views/fusion.py", "Fusion", "🧬"),
    ("views/query.py", "Query explorer", "🔎"),
    ("views/judgments.py", "Judgments", "🧑‍⚖️"),
    ("views/learn.py", "Learn NDCG", "🎓"),
    ("views/data.py", "Data", "🗂️"),
    ("views/task.py", "Class task", "🏫"),
]

navigation = st.navigation([
    st.Page(path, title=title, icon=icon, default=(i == 0))
    for i, (path, title, icon) in enumerate(PAGES) if (HERE / path).exists()
])
state.remember(state.sidebar())
state.run_page(navigation)
