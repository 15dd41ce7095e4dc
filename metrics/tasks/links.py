"""The links of a class task: tokens, the roles they open, the join and projector tokens derived
from the instructor's.

Roles: ``instructor``, ``join`` (a class joins with it), ``projector`` (the board, read-only)
and ``team`` (one per team). The join and projector tokens are HMAC-SHA256(instructor token,
"ndcg-lab task " + role) cut to 192 bits, so the instructor's page can show them again at any
visit; a team token is 192 random bits. A link is ``<public url>task?task=TOKEN``.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
from dataclasses import dataclass

from ..errors import MetricsError
from ..store.workspaces import TOKEN_BYTES

__all__ = ["ROLES", "PAGE", "PARAM", "TOKEN_BYTES", "TaskNotFound", "Links", "token_of", "derived_token", "address",
           "links_of"]

ROLES = ("instructor", "join", "projector", "team")
PAGE = "task"             # the page's address: <public url>task?task=TOKEN
PARAM = "task"
TOKEN = re.compile(r"[A-Za-z0-9_-]{32}")


class TaskNotFound(MetricsError):
    """No task has this link (mistyped, forged, removed)."""


@dataclass(frozen=True)
class Links:
    """The addresses of a task: ``instructor``, ``join``, ``projector`` (and their tokens)."""

    instructor: str
    join: str
    projector: str
    tokens: dict[str, str]


def token_of(link: str) -> str:
    """The token of a task link (``...?task=TOKEN``) or a bare token."""
    text = str(link).strip()
    match = re.search(r"[?&]" + PARAM + r"=([A-Za-z0-9_-]+)", text)
    token = match.group(1) if match else text
    if not TOKEN.fullmatch(token):
        raise TaskNotFound("no task has this link", fix="copy the whole link the instructor gave")
    return token


def derived_token(token: str, role: str) -> str:
    """The join or projector token of an instructor token: HMAC-SHA256(token, role), 192 bits."""
    digest = hmac.new(token.encode(), f"ndcg-lab task {role}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest[:TOKEN_BYTES]).decode()


def address(public_url: str, token: str) -> str:
    """The link of ``token`` on the server at ``public_url``: ``<public url>task?task=TOKEN``."""
    return f"{public_url}{PAGE}?{PARAM}={token}"


def links_of(public_url: str, instructor_token: str) -> Links:
    """The three links of a task, from its instructor token (the others are derived from it)."""
    tokens = {"instructor": instructor_token, "join": derived_token(instructor_token, "join"),
              "projector": derived_token(instructor_token, "projector")}
    return Links(address(public_url, tokens["instructor"]), address(public_url, tokens["join"]),
                 address(public_url, tokens["projector"]), tokens)
