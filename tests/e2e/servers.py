"""The server the class-task and classroom tests share, and the class-task library on its home.

Fixture
    server   module: an :class:`~tests.e2e.helpers.AppServer` of the test module's own, on a fresh
             NDCG_LAB_HOME, whose public address (NDCG_LAB_PUBLIC_URL) is its own: the links the
             app builds (join, team, projector, personal and short links) open in the test's
             browser. A module takes it with
             ``from tests.e2e.servers import public_server  # noqa: F401  (the fixture `server`)``.
"""
from __future__ import annotations

import pytest

from metrics import settings
from metrics.tasks import Tasks
from tests.e2e.helpers import AppServer


def tasks_of(site) -> Tasks:
    """The class-task library on ``site``'s home (an AppServer or a replicas Deployment: anything
    with ``.home`` and ``.url``), its links built on the site's address, as a teacher's script
    on the server would open it."""
    return Tasks(settings.load({"NDCG_LAB_HOME": str(site.home), "NDCG_LAB_PUBLIC_URL": f"{site.url}/"}))


@pytest.fixture(scope="module", name="server")
def public_server(tmp_path_factory, request):
    """A server of this module's own whose public address is its own (see the module's docstring)."""
    name = request.module.__name__.rsplit(".", 1)[-1].removeprefix("test_").replace("_", "-")
    server = AppServer(home=tmp_path_factory.mktemp(f"ndcg-lab-{name}"))
    server.env["NDCG_LAB_PUBLIC_URL"] = f"{server.url}/"
    server.start()
    yield server
    server.stop()
