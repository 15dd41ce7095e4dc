"""mkdocs hook: Sphinx cross-reference roles in the library's docstrings (``:func:`evaluate```) are
shown as plain code in the API reference. mkdocstrings renders the role's name as text before the
code (``:func:<code>evaluate</code>``); the name is dropped, the code kept."""
from __future__ import annotations

import re

ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const):(?=<code)")


def on_page_content(html: str, **kwargs) -> str:
    return ROLE.sub("", html)
