"""ndcg_lab.ui.text: user-controlled names come out of Streamlit Markdown as inert text, letter for letter.

The second route is a real Markdown renderer (markdown-it, CommonMark with GFM tables and
strikethrough): an escaped name renders to one paragraph whose text is the name itself, with no
link, image, emphasis, code or raw HTML. GFM autolinks (which markdown-it lacks without linkify)
are checked by their rule: a word joiner sits right before them.
"""
from __future__ import annotations

import html
import re

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ndcg_lab.ui.text import WORD_JOINER, md, plain_frame

markdown_it = pytest.importorskip("markdown_it")
RENDER = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"])

HOSTILE = [
    "[link](http://x)",
    "<img src=x onerror=alert(1)>",
    "![img](http://x/a.png)",
    "**bold** and *em* and _em_ and __strong__",
    "~~gone~~",
    "`code`",
    "$x^2$",
    ":red[alarm] :smile:",
    "a | b | c",
    "# heading",
    "- bullet",
    "+ plus",
    "* star",
    "1. first",
    "2) second",
    "---",
    "===",
    "&amp; &lt;",
    "back\\slash",
    "<script>alert(1)</script>",
]
ORDINARY = ["bm25_ce", "nDCG(dcg='exp-log2')@10", "run (2)", "my_run_v2", "-0.5", "#1", "P@5", "snake_case_name"]


def rendered_text(markdown: str) -> str:
    """The one paragraph the renderer makes of ``markdown``, as plain text (an error if it made more)."""
    out = RENDER.render(markdown).strip()
    match = re.fullmatch(r"<p>(.*)</p>", out, flags=re.S)
    assert match, out
    body = match.group(1)
    assert not re.search(r"<(a|img|em|strong|code|s|del|script|h\d|ul|ol|li|hr)\b", body), out
    return html.unescape(body)


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_names_render_as_their_own_text(name):
    assert rendered_text(md(name)).replace(WORD_JOINER, "") == name


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_names_are_unchanged(name):
    assert md(name) == name


def test_the_brief_examples_exactly():
    assert md("[link](http://x)") == "\\[link\\](" + WORD_JOINER + "http\\://x)"
    assert md("<img src=x onerror=alert(1)>") == "\\<img src=x onerror=alert(1)\\>"


@pytest.mark.parametrize("name, before", [
    ("see http://example.com", "http"), ("www.example.com", "www."), ("mail me: bob@example.org", "bob@"),
    ("HTTPS://X.ORG", "HTTPS"),
])
def test_a_word_joiner_stops_gfm_autolinks(name, before):
    escaped = md(name)
    assert WORD_JOINER + before in escaped
    assert escaped.count(WORD_JOINER) == 1


def test_no_word_joiner_inside_a_word():
    assert WORD_JOINER not in md("xhttp") and WORD_JOINER not in md("user.name")


def test_multiline_names_escape_block_markers_on_every_line():
    name = "# one\n- two\n3. three"
    assert md(name) == "\\# one\n\\- two\n3\\. three"


def test_non_strings_are_formatted_then_escaped():
    assert md(42) == "42"
    assert md(None) == "None"


def test_plain_frame_escapes_cells_index_and_headers_but_not_numbers():
    frame = pd.DataFrame({"*m*": ["[a](http://x)", "ok"], "value": [0.5, 1.0]},
                         index=pd.Index(["<b>r</b>", "run_1"], name="system"))
    shown = plain_frame(frame)
    assert list(shown.columns) == ["\\*m\\*", "value"]
    assert list(shown.index) == ["\\<b\\>r\\</b\\>", "run_1"] and shown.index.name == "system"
    assert shown.iloc[0, 0] == md("[a](http://x)") and shown.iloc[1, 0] == "ok"
    assert shown["value"].tolist() == [0.5, 1.0]
    assert frame.iloc[0, 0] == "[a](http://x)"   # the input is not modified


def test_plain_frame_multiindex_and_empty_columns():
    index = pd.MultiIndex.from_tuples([("**a**", 1), ("b", 2)], names=["system", "n"])
    shown = plain_frame(pd.DataFrame({"x": [1, 2]}, index=index))
    assert list(shown.index) == [("\\*\\*a\\*\\*", 1), ("b", 2)] and list(shown.index.names) == ["system", "n"]
    empty = plain_frame(pd.DataFrame(index=pd.Index(["<i>"])))
    assert list(empty.index) == ["\\<i\\>"] and empty.shape == (1, 0)


def test_visitor_text_hides_the_server_folder_in_shared_mode(tmp_path):
    from metrics.settings import Settings
    from ndcg_lab.ui.text import SERVER_FOLDER, visitor_text

    home = tmp_path / "srv"
    home.mkdir()
    (tmp_path / "link").symlink_to(home)
    message = (f'{home}/shared/workspaces/ab.duckdb: the workspace could not be read or changed (Could not '
               f'write file "{home}/shared/workspaces/ab.duckdb.wal": No space left on device)')
    shown = visitor_text(message, Settings(mode="shared", home=tmp_path / "link"))
    assert str(home) not in shown and str(tmp_path) not in shown
    assert shown.startswith(f"{SERVER_FOLDER}/shared/workspaces/ab.duckdb: the workspace could not")
    assert visitor_text(message, Settings(mode="personal", home=home)) == message


def _markup(text: str) -> list[str]:
    """The kinds of markup CommonMark (with GFM tables and strikethrough) makes of ``text``."""
    found = []
    for token in RENDER.parse(text):
        if token.type not in ("paragraph_open", "paragraph_close", "inline", "code_block"):
            found.append(token.type)
        for child in token.children or []:
            if child.type not in ("text", "softbreak", "hardbreak"):
                found.append(child.type)
    return found


def test_hostile_names_titles_and_topic_text_render_as_plain_text():
    from tests.hostile_corpus import HOSTILE_TEXT

    assert _markup("[click](http://example.com) **bold**")           # the parser does see markup
    for text in HOSTILE_TEXT:
        assert _markup(md(text)) == [], text
        assert "$" not in md(text).replace("\\$", "")                  # no KaTeX delimiter is left bare


def test_a_lone_carriage_return_ends_a_line_as_in_commonmark():
    """Found by the fuzz test below (one run in many): a block marker after a lone \\r started a
    setext heading or a list, since only \\n was taken as a line end."""
    for text in ("item \r -", "item\r# title", "a\r\r- b", "x\r\n1. y", "x\r===", "x\r\r> quote"):
        assert _markup(md(text)) == [], text
        assert md(text).replace("\\", "") == text                     # the line ends kept as they were


@settings(max_examples=300, deadline=None, database=None)
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_hostile_text_renders_as_plain_text(rnd):
    from tests.hostile_corpus import fuzz_input

    text = fuzz_input("text", rnd).decode("utf-8", errors="replace")
    assert _markup(md(text)) == [], text
