"""metrics.io.topics_markup: TREC SGML <top> blocks and TREC XML <topic> elements, topic by topic,
with the line of each topic and of each error."""
from __future__ import annotations

import pytest

from metrics.errors import MetricsError
from metrics.io.topics_markup import read_sgml, read_xml

SGML = """<topics>
<top>
<num> Number: 301
<title> International   Organized Crime
<desc> Description:
Identify organizations that participate in
international criminal activity.
</top>

<top>
<num> Number: 302 <title> Poliomyelitis and Post-Polio
</top>
</topics>
"""


def test_sgml_fields_labels_and_lines():
    (q301, fields, line), (q302, fields2, line2) = read_sgml(SGML, "t.sgml")
    assert (q301, line, q302, line2) == ("301", 2, "302", 10)
    # labels ("Number:", "Description:") are dropped and whitespace collapses to one blank
    assert fields == {"title": "International Organized Crime",
                      "description": "Identify organizations that participate in international criminal activity."}
    assert fields2 == {"title": "Poliomyelitis and Post-Polio"}


@pytest.mark.parametrize("text, line, problem", [
    ("<top>\n<num> 1\n<top>\n<num> 2\n</top>\n", 3, "a new <top> begins before the topic of line 1 is closed"),
    ("<top>\n<num> 1\n</top>\n</top>\n", 4, "</top> without a <top> before it"),
    ("\n<top>\n<num> 1\n", 2, "the topic that starts here is not closed"),
    ("<top>\n<title> no number\n</top>\n", 1, "topic without a number"),
    ("just text\n", 1, "no <top> ... </top> topics found"),
])
def test_sgml_errors_name_the_line(text, line, problem):
    with pytest.raises(MetricsError) as caught:
        read_sgml(text, "t.sgml")
    assert (caught.value.source, caught.value.line) == ("t.sgml", line)
    assert caught.value.problem.startswith(problem)


XML = """<?xml version="1.0"?>
<topics>
  <topic number="1" type="faceted">
    <query>obama   family tree</query>
    <description>Find information on President
      Barack Obama's family history.</description>
  </topic>
  <topic>
    <id>2</id>
    french lick resort
  </topic>
</topics>
"""


def test_xml_ids_from_attributes_or_children_and_own_text_as_query():
    (q1, fields1, line1), (q2, fields2, line2) = read_xml(XML, "t.xml")
    assert (q1, line1, q2, line2) == ("1", 3, "2", 8)
    assert fields1 == {"query": "obama family tree",
                       "description": "Find information on President Barack Obama's family history.",
                       "type": "faceted"}
    assert fields2 == {"query": "french lick resort"}


def test_xml_errors_name_the_line():
    with pytest.raises(MetricsError) as caught:
        read_xml("<topics>\n<topic number='1'>\n<query>a & b</query>\n</topic>\n</topics>", "t.xml")
    assert caught.value.line == 3 and caught.value.problem.startswith("malformed XML")
    with pytest.raises(MetricsError, match="topic without a number") as caught:
        read_xml("<topics>\n\n<topic><query>x</query></topic></topics>", "t.xml")
    assert caught.value.line == 3
    with pytest.raises(MetricsError, match="no <topic> elements found"):
        read_xml("<topics/>", "t.xml")
