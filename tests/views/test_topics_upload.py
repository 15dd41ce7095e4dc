"""Data page (AppTest): topics in TREC SGML and XML are read by the library, the query-text field can
be chosen, and a malformed file is one error line naming the file and the line."""
from __future__ import annotations

import gzip

from tests.conftest import assert_ok

SGML = b"""<top>
<num> Number: 1
<title> wet floor fall
<desc> Description:
A customer slipped on a wet floor in a grocery store.
</top>
<top>
<num> Number: 2
<title> parking lot attack
<desc> Description:
Liability of a landlord for a criminal attack.
</top>
"""
XML = (b'<topics task="legal"><topic number="1">slippery aisle injuries</topic>'
       b'<topic number="2">garage assault</topic></topics>')


def _stored(at):
    from ndcg_lab.ui import state
    return dict(zip(*state.workspace().load_topics("legal")[["qid", "text"]].T.values))


def test_trec_sgml_topics_with_a_field_choice(open_app):
    at = open_app("views/data.py")
    at.file_uploader(key="topics_upload").upload("topics.txt.gz", gzip.compress(SGML)).run()
    assert_ok(at)
    assert _stored(at)["1"] == "wet floor fall"          # the title is the default query text
    at.selectbox(key="topics_field::legal").set_value("description").run()
    assert_ok(at)
    assert _stored(at)["2"] == "Liability of a landlord for a criminal attack."


def test_trec_xml_topics_and_a_malformed_file(open_app):
    at = open_app("views/data.py")
    at.file_uploader(key="topics_upload").upload("topics.xml", XML).run()
    assert_ok(at)
    assert _stored(at) == {"1": "slippery aisle injuries", "2": "garage assault"}
    at.file_uploader(key="topics_upload").upload("bad.xml", b"<topics>\n<topic number='1'>x</topics>").run()
    assert_ok(at)
    assert at.error[0].value.replace("\\", "").startswith("bad.xml line 2:")
