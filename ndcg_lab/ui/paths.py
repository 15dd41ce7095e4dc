"""Where the dashboard's files are: the ``ndcg_lab`` package's folder holds the entry script
(app.py), the pages (views/), the Streamlit settings (.streamlit/) and the sample collections
(sample_data/), in a checkout and in an installed wheel alike."""
from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
APP = PACKAGE / "app.py"
SAMPLES = PACKAGE / "sample_data"


def view(name: str) -> str:
    """The page ``views/<name>.py`` as an absolute path, for ``st.page_link`` and ``st.switch_page``:
    they resolve a relative path against the entry script's folder, which is the checkout's root
    when ``streamlit run app.py`` starts the app there."""
    return str(PACKAGE / "views" / f"{name}.py")
