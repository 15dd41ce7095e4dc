"""A deployment of 2 app processes behind nginx (``ndcg-lab app --replicas 2``), for the tests of
tests/e2e/test_replicas.py; skipped with the reason when nginx is absent (scripts/setup.sh test
installs Debian's).

Fixture
    deployment   module: a :class:`Deployment` on a fresh NDCG_LAB_HOME in shared mode, stopped
                 after the module. ``.url``; ``.ports`` (the processes'); ``.route_to(port)``: the
                 value of the affinity cookie that nginx sends to that process (checked in its
                 access log); ``.pin(context, port)`` gives a browser context that cookie;
                 ``.kill(port)`` SIGKILLs one process (the supervisor starts it again).
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from ndcg_lab.deploy.nginx import COOKIE
from tests.e2e.helpers import ARTIFACTS, REPO_ROOT, SERVER_START_TIMEOUT, _die_with_parent, free_port


def nginx_present() -> bool:
    return bool(os.environ.get("NDCG_LAB_NGINX") or shutil.which("nginx")
                or shutil.which("nginx", path="/usr/sbin:/sbin"))


@dataclass
class Deployment:
    home: Path
    replicas: int = 2
    port: int = 0
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        if not self.port:   # nginx on the port, the processes on the next ones: all free, and ours
            self.port = free_port(1 + self.replicas)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ports(self) -> list[int]:
        return [self.port + i for i in range(1, self.replicas + 1)]

    def start(self) -> Deployment:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        log = open(ARTIFACTS / f"deployment-{self.port}.log", "ab")  # noqa: SIM115
        env = {**os.environ, "NDCG_LAB_HOME": str(self.home), "PYTHONUNBUFFERED": "1",
               "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", **self.env}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "ndcg_lab.ui.console", "app", "--mode", "shared", "--replicas", str(self.replicas),
             "--server.port", str(self.port), "--server.fileWatcherType", "none", "--server.runOnSave", "false",
             "--browser.gatherUsageStats", "false"],
            cwd=REPO_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_die_with_parent)
        log.close()
        deadline = time.monotonic() + 2 * SERVER_START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ndcg-lab app --replicas ended with {self.process.returncode}")
            if all(self._healthy(p) for p in self.ports) and self._healthy(self.port):
                return self
            time.sleep(0.3)
        raise RuntimeError("the deployment did not start")

    def _healthy(self, port: int, cookie: str | None = None) -> bool:
        request = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/health",
                                         headers={"Cookie": f"{COOKIE}={cookie}"} if cookie else {})
        try:
            with urllib.request.urlopen(request, timeout=2) as response:
                return response.read().strip() == b"ok"
        except OSError:
            return False

    def served_by(self, route: str) -> int:
        """The port of the process nginx sends the browser of ``route`` to: a health check with that
        affinity cookie and a probe of its own, found in nginx's access log."""
        probe = secrets.token_hex(6)
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}/_stcore/health?probe={probe}",
                                         headers={"Cookie": f"{COOKIE}={route}"})
        with urllib.request.urlopen(request, timeout=10) as response:
            assert response.read().strip() == b"ok"
        # ``upstream=A, B``: nginx tried A and went on to B, which answered
        pattern = re.compile(rf"probe={probe}\b.*upstream=(?:\S+, )*127\.0\.0\.1:(\d+) route={re.escape(route)}$")
        for _ in range(100):   # nginx writes the line once the answer has gone
            lines = (self.home / "run" / "access.log").read_text().splitlines()
            found = [m for m in map(pattern.search, lines) if m]
            if found:
                return int(found[-1].group(1))
            time.sleep(0.05)
        raise AssertionError(f"no request of the probe {probe} (route {route}) in the access log")

    def route_to(self, port: int, timeout: float = 60) -> str:
        """The affinity cookie's value of the process on ``port``, once nginx sends it there: a process
        restarted after a kill, or too slow to answer on a loaded machine, is passed over by nginx for
        its ``fail_timeout`` (the route then lands on another process)."""
        route = str(self.ports.index(port))
        deadline, seen = time.monotonic() + timeout, []
        while time.monotonic() < deadline:
            try:
                seen.append(self.served_by(route))
            except OSError as error:   # no process answered through nginx this time (a 502)
                seen.append(str(error))
            if seen[-1] == port:
                return route
            time.sleep(0.5)
        raise AssertionError(f"nginx sent route {route} to {sorted(set(map(str, seen)))}, never to {port}, "
                             f"for {timeout:.0f} s")

    def pin(self, page, port: int) -> str:
        """Give the page's browser context the affinity cookie of the process on ``port``."""
        route = self.route_to(port)
        page.context.add_cookies([{"name": COOKIE, "value": route, "url": self.url}])
        return route

    def pid_of(self, port: int) -> int:
        """The pid of the app process on ``port`` (a child of the supervisor)."""
        for child in psutil.Process(self.process.pid).children():
            command = child.cmdline()
            if "streamlit" in command and command[-2:] == ["--server.port", str(port)]:
                return child.pid
        raise AssertionError(f"no app process on {port}")

    def kill(self, port: int) -> None:
        os.kill(self.pid_of(port), signal.SIGKILL)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()


@pytest.fixture(scope="module", name="deployment")
def deployment_fixture(tmp_path_factory):
    if not nginx_present():
        pytest.skip("nginx is not installed (bash scripts/setup.sh test installs Debian's nginx)")
    made = Deployment(tmp_path_factory.mktemp("replicas") / "home").start()
    try:
        yield made
    finally:
        made.stop()
