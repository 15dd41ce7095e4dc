"""nDCG Lab's entry script: navigation over the pages and the sidebar state; pages do the rest.

``ndcg-lab app`` runs this file, as ``streamlit hello`` runs its bundled script; from a checkout,
``streamlit run app.py`` runs the root app.py, which calls :func:`main`. Importing the module
draws nothing.
"""
import streamlit as st

from ndcg_lab.ui import allocators

allocators.set_defaults()   # before numpy and pyarrow load: what `ndcg-lab app` sets, for `streamlit run app.py`

from metrics.io.memory import limit_arenas, no_huge_pages  # noqa: E402
from ndcg_lab.ui import admission, contrast, keyboard, projector, reconnect, session, share, state  # noqa: E402
from ndcg_lab.ui.paths import PACKAGE  # noqa: E402

ICON = PACKAGE / "static" / "icon.png"
limit_arenas()   # script runs are threads: two glibc arenas, not 16, keep what large inputs leave
no_huge_pages()  # numpy's arrays in small pages, had numpy loaded before set_defaults (an AppTest's)

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
    ("views/course.py", "Course", ":material/menu_book:"),
]


def main() -> None:
    """Declare the pages (by absolute path, whichever script Streamlit runs) and run the chosen one,
    once this run is admitted (:mod:`ndcg_lab.ui.admission`)."""
    # The icon is the package's own file: a Material icon here becomes a favicon that every
    # visitor's browser fetches from fonts.gstatic.com, a third party (and a failed request offline).
    st.set_page_config(page_title="nDCG Lab", page_icon=str(ICON), layout="wide")
    # A projector view (ndcg_lab.ui.projector) draws nothing of the workbench: no menu, no sidebar.
    on_projector = projector.requested()
    if session.settings().deployment is not None:   # several processes: a reconnect may reach another
        reconnect.rerun_on_reconnect()
    with admission.admitted():  # a burst of visitors is served in order of arrival
        navigation = st.navigation([
            st.Page(PACKAGE / path, title=title, icon=icon, default=(i == 0))
            for i, (path, title, icon) in enumerate(PAGES)
        ], position="hidden" if on_projector else "sidebar")
        state.remember(None if on_projector else state.sidebar())
        if not on_projector:   # both draw into the sidebar, which a projector view must not have
            keyboard.reach_scrolling()
            contrast.fix_contrast()
        state.run_page(navigation)


if __name__ == "__main__":
    main()
elif __name__ == "app":  # imported by the ASGI server of `streamlit run` (st.App: the /s/ short links)
    app = st.App(__file__, routes=share.routes())
