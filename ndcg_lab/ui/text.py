"""User-controlled names as inert text on the screen: the one escaping helper of the pages.

Streamlit renders GitHub-flavoured Markdown in ``st.markdown``, captions, headers, expander
labels, messages and in every cell, index entry and header of ``st.table``. A file name, run
tag, collection name, topic or title may hold ``[a](http://x)``, ``<img ...>``, ``**``, ``$``,
``:red[...]`` or a bare URL; :func:`md` escapes exactly the characters that would turn such a
name into markup, so that ordinary names (``bm25_ce``, ``nDCG(dcg='exp-log2')@10``, ``run (2)``)
stay as they are, letter for letter.

GFM's autolinks (``http://``, ``www.``, ``user@host.tld``) are found in the text after the Markdown
is parsed, so no backslash stops them; a WORD JOINER (U+2060, invisible, zero width) before one
does, since an autolink must follow a space or punctuation.
"""
from __future__ import annotations

import os
import re

import pandas as pd

from metrics import settings as settings_module

__all__ = ["md", "plain_frame", "visitor_text", "WORD_JOINER"]

# Inline markup anywhere: escapes, code, emphasis, strikethrough, links and images ([ ]), raw
# HTML and entities (< > &), math ($), table cells (|); a colon that touches the next character
# (emoji :smile:, directives :red[...], autolinks http://).
_INLINE = re.compile(r"([\\`*~\[\]<>&$|]|:(?=\S))")
# Underscore emphasis opens or closes only next to a non-word character (intraword _ is text).
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# Block markers at the start, followed by a space or the end: headings, bullets, rules, setext
# underlines, ordered lists ("1." or "1)"). "-0.5" and "#1" are text and stay as they are.
_BLOCK = re.compile(r"^(\s*)([#+\-=*_]+|\d+(?=[.)]))(?=[.)]?(?:\s|$))")
# CommonMark's line endings: a block marker after a lone \r starts a block as after \n.
_LINE_END = re.compile(r"(\r\n|\r|\n)")
WORD_JOINER = "\u2060"
# Where GFM would start an autolink literal: http(s)://, www., and the local part of an e-mail.
_AUTOLINK = re.compile(r"(?i)(?<![\w\u2060])(?=https?:|www\.|mailto:|xmpp:)|(?<![\w.+\-\u2060])(?=[\w.+-]+@[\w-]+\.\w)")


def md(text) -> str:
    """``text`` escaped for Streamlit Markdown: shown letter for letter (an invisible word joiner
    before what would become an autolink), never as markup."""
    text = _AUTOLINK.sub(WORD_JOINER, str(text))
    text = _INLINE.sub(r"\\\1", text)
    text = _UNDERSCORE.sub(r"\\_", text)
    lines = _LINE_END.split(text)   # lines at even positions, their ends (kept as they are) between
    for i in range(0, len(lines), 2):
        line = lines[i]
        match = _BLOCK.match(line)
        if match:
            marker = match.group(2)
            if marker.isdigit():   # "1." and "1)" start an ordered list: escape the dot
                end = match.end()
                line = line[:end] + "\\" + line[end:]
            else:
                line = line[:match.start(2)] + "\\" + line[match.start(2):]
        lines[i] = line
    return "".join(lines)


def plain_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for ``st.table`` with every text cell, index entry and header escaped."""
    def escape(value):
        return md(value) if isinstance(value, str) else value

    def labels(index: pd.Index) -> pd.Index:
        if isinstance(index, pd.MultiIndex):
            return pd.MultiIndex.from_tuples([tuple(map(escape, t)) for t in index], names=index.names)
        return pd.Index([escape(v) for v in index], name=index.name)

    shown = frame.map(escape) if len(frame.columns) else frame.copy()
    shown.index = labels(frame.index)
    shown.columns = labels(frame.columns)
    return shown


SERVER_FOLDER = "<server folder>"


def visitor_text(text: str, config: settings_module.Settings | None = None) -> str:
    """``text`` (an error for the screen) without the server's folders in shared mode: the
    workspace home (as given and resolved) becomes ``<server folder>``, so that a DuckDB or SQLite
    message about a full disk or a locked file tells a visitor nothing of the server's layout.
    In personal mode the person who runs the server reads it: ``text`` unchanged."""
    config = settings_module.load() if config is None else config
    if not config.shared:
        return text
    for folder in sorted({str(config.home), os.path.realpath(config.home)}, key=len, reverse=True):
        text = text.replace(folder, SERVER_FOLDER)
    return text
