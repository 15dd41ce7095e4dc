"""ndcg_lab.ui.paths: the package's folder holds the entry script, the pages, the Streamlit settings
and the samples, and a page's path for st.page_link does not depend on the entry script's folder."""
from __future__ import annotations

from pathlib import Path

from ndcg_lab.app import PAGES
from ndcg_lab.ui import paths

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_folder_holds_the_app_its_settings_and_the_samples():
    assert paths.PACKAGE == ROOT / "ndcg_lab" and paths.APP == ROOT / "ndcg_lab" / "app.py"
    assert (paths.PACKAGE / ".streamlit" / "config.toml").is_file()
    assert {p.name for p in paths.SAMPLES.iterdir() if p.is_dir()} >= {"legal", "web"}


def test_view_is_the_absolute_path_of_a_page_app_py_declares():
    declared = {str(paths.PACKAGE / file) for file, _, _ in PAGES}
    for name in ("data", "learn", "query"):
        page = paths.view(name)
        assert Path(page).is_absolute() and page in declared, page
