"""Task links: the token in a link, and the join and projector tokens derived from the instructor's."""
from __future__ import annotations

import base64
import hashlib
import hmac

import pytest

from metrics.tasks import TaskNotFound, token_of
from metrics.tasks.links import derived_token

TOKEN = "A" * 16 + "b-_9" * 4  # 32 characters of the URL-safe alphabet


def test_the_token_of_a_link_or_a_bare_token():
    assert token_of(f"https://lab.example.org/ir/task?task={TOKEN}") == TOKEN
    assert token_of(f"  https://x/task?ws=abc&task={TOKEN}#top ") == TOKEN
    assert token_of(TOKEN) == TOKEN
    for bad in (TOKEN[:-1], TOKEN + "A", TOKEN[:-1] + "=", f"https://x/task?task={TOKEN[:20]}", ""):
        with pytest.raises(TaskNotFound):
            token_of(bad)


def test_derived_tokens_are_hmac_sha256_of_the_role_cut_to_192_bits():
    mac = hmac.new(TOKEN.encode(), b"ndcg-lab task join", hashlib.sha256).digest()
    assert derived_token(TOKEN, "join") == base64.urlsafe_b64encode(mac[:24]).decode()
    assert len(base64.urlsafe_b64decode(derived_token(TOKEN, "projector"))) * 8 == 192
    assert derived_token(TOKEN, "join") != derived_token(TOKEN, "projector")
    assert token_of(derived_token(TOKEN, "join")) == derived_token(TOKEN, "join")  # a link's token in turn
