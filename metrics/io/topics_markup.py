"""The markup parsers of :mod:`metrics.io.topics`: TREC SGML ``<top>`` blocks and TREC XML ``<topic>``
elements, each topic as ``(qid, {field: text}, line)``. Formats and rules are stated there.
"""
from __future__ import annotations

import bisect
import re
from xml.parsers import expat

from ..errors import MetricsError

__all__ = ["read_sgml", "read_xml"]

_SGML_FIELDS = {"num": "qid", "title": "title", "desc": "description", "narr": "narrative", "smry": "summary",
                "con": "concepts", "def": "definitions", "fac": "factors", "dom": "domain", "nat": "nationality"}
_LABEL = re.compile(r"^\s*(number|topic|title|description|narrative|summary|concepts?(\(s\))?|"
                    r"definitions?(\(s\))?|domain|factors?(\(s\))?|nationality)\s*:\s*", re.IGNORECASE)
_TAG = re.compile(r"<(/?)([A-Za-z][\w.-]*)[^<>]*>")
_XML_ID_ATTRS = ("number", "id", "qid", "num", "topic_id", "query_id")
_XML_ID_CHILDREN = ("number", "num", "qid", "query_id", "topic_id", "id", "identifier")


class _Lines:
    """1-based line of a character offset (bisection over the newline positions)."""

    def __init__(self, text: str):
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def __call__(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1


# --------------------------------------------------------------------------- TREC SGML


def read_sgml(text: str, source: str) -> list:
    """Topics of ``<top>`` blocks: every tag starts a field that runs to the next tag."""
    line_of = _Lines(text)
    topics: list[tuple] = []
    fields: dict[str, list[str]] | None = None   # the open topic's fields, None between topics
    field: str | None = None
    top_at = field_start = 0

    def close(end: int) -> None:
        if fields is not None and field is not None:
            value = " ".join(text[field_start:end].split())
            fields.setdefault(field, []).append(value)

    for m in _TAG.finditer(text):
        closing, tag = m.group(1) == "/", m.group(2).lower()
        if tag == "top":
            if not closing:
                if fields is not None:
                    raise MetricsError(f"a new <top> begins before the topic of line {line_of(top_at)} is closed "
                                       "with </top>", source=source, line=line_of(m.start()),
                                       fix="end every topic with </top>")
                fields, top_at, field = {}, m.start(), None
                continue
            if fields is None:
                raise MetricsError("</top> without a <top> before it", source=source, line=line_of(m.start()),
                                   fix="every topic is <top> ... </top>")
            close(m.start())
            topics.append(_sgml_topic(fields, line_of(top_at), source))
            fields, field = None, None
            continue
        if fields is None:
            continue                     # markup around the topics (<topics>, a DOCTYPE, ...)
        close(m.start())
        field, field_start = (None, 0) if closing else (_SGML_FIELDS.get(tag, tag), m.end())
    if fields is not None:
        raise MetricsError("the topic that starts here is not closed (</top> is missing)", source=source,
                           line=line_of(top_at), fix="end every topic with </top>")
    if not topics:
        raise MetricsError("no <top> ... </top> topics found", source=source, line=1,
                           fix="TREC topics look like <top> <num> Number: 301 <title> ... </top>")
    return topics


def _sgml_topic(fields: dict, line: int, source: str) -> tuple:
    values = {name: _LABEL.sub("", " ".join(v for v in parts if v)).strip() for name, parts in fields.items()}
    qid = values.pop("qid", "").split()
    if not qid:
        raise MetricsError("topic without a number (<num>)", source=source, line=line,
                           fix="give every topic a <num> Number: ... line")
    return qid[0], values, line


# --------------------------------------------------------------------------- TREC XML


def read_xml(text: str, source: str) -> list:
    """``<topic>`` elements anywhere in the document, read with expat (which knows its line)."""
    parser = expat.ParserCreate()
    topics, stack, current = [], [], None   # current: [line, attrs, {field: [text]}, own text, depth]
    field: list | None = None

    def start(tag, attrs):
        nonlocal current, field
        stack.append(tag)
        if current is None and tag.lower() == "topic":
            current = [parser.CurrentLineNumber, {k.lower(): v for k, v in attrs.items()}, {}, [], len(stack)]
        elif current is not None and len(stack) == current[4] + 1:
            field = current[2].setdefault(tag.lower(), [])
            field.append("")

    def end(tag):
        nonlocal current, field
        if current is not None and len(stack) == current[4] + 1:
            field = None
        elif current is not None and len(stack) == current[4]:
            topics.append(_xml_topic(current, source))
            current = None
        stack.pop()

    def chars(data):
        if current is None:
            return
        if field is not None:
            field[-1] += data
        elif len(stack) == current[4]:
            current[3].append(data)

    parser.StartElementHandler, parser.EndElementHandler, parser.CharacterDataHandler = start, end, chars
    try:
        parser.Parse(text, True)
    except expat.ExpatError as exc:
        raise MetricsError(f"malformed XML: {expat.errors.messages[exc.code]} (column {exc.offset + 1})",
                           source=source, line=exc.lineno,
                           fix="check the tags near this line (every <topic> closed, & written as &amp;)") from None
    if not topics:
        raise MetricsError("no <topic> elements found", source=source, line=1,
                           fix='TREC XML topics look like <topics><topic number="1">...</topic></topics>')
    return topics


def _xml_topic(current: list, source: str) -> tuple:
    line, attrs, children, own, _ = current
    values = {name: "\n".join(" ".join(p.split()) for p in parts) for name, parts in children.items()}
    qid = next((attrs.pop(a) for a in _XML_ID_ATTRS if a in attrs), None)
    if qid is None:
        qid = next((values.pop(c) for c in _XML_ID_CHILDREN if c in values), None)
    qid = (qid or "").strip()
    if not qid:
        raise MetricsError("topic without a number", source=source, line=line,
                           fix='give it a number attribute (<topic number="1">) or a <number> child')
    body = " ".join("".join(own).split())
    if body:
        values = {"query": body, **values}
    values.update({k: v for k, v in attrs.items() if k not in values})
    return qid, values, line
