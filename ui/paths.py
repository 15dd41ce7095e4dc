"""Where the dashboard's files are: app.py, views/ and sample_data/ of this checkout (an editable
install) or, for a regular install, the copy under ``<prefix>/share/ndcg-lab``."""
from __future__ import annotations

import sys
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parents[1]
INSTALLED = Path(sys.prefix) / "share" / "ndcg-lab"


def app_dir() -> Path:
    """The folder holding app.py: the checkout when it has one, else the installed copy."""
    return CHECKOUT if (CHECKOUT / "app.py").is_file() else INSTALLED
