"""``ndcg-lab app --replicas N``: N app processes on one ``NDCG_LAB_HOME`` behind nginx, one address.

The public address (``--server.address``/``--server.port``, default 127.0.0.1:8501) is nginx's;
the processes listen on 127.0.0.1 at the next N ports. Everything of the deployment lives in
``$NDCG_LAB_HOME/run/``: nginx's configuration (:func:`ndcg_lab.deploy.nginx.standalone`), its
pid, logs and temporary folders, each process's log, and the cookie secret the processes share
(a browser's XSRF cookie, set by one process, must be valid at every other). Every process gets
``NDCG_LAB_DEPLOYMENT`` (so they share the home: :func:`metrics.store.home.lock_home`).

This process supervises: a process that dies is started again (its visitors meanwhile reach
another through nginx), nginx dying ends the deployment, and SIGTERM or Ctrl-C stops everything.
nginx comes from the system (Debian's ``nginx`` package); it runs as the user, no root needed.
"""
from __future__ import annotations

import getpass
import os
import secrets
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import requests
import websockets

from metrics.errors import MetricsError
from ndcg_lab.deploy import nginx, warm

__all__ = ["Deployment", "public_address", "nginx_binary", "RUN_FOLDER", "MAX_REPLICAS"]

RUN_FOLDER = "run"
MAX_REPLICAS = 64
START_TIMEOUT = 90.0    # seconds a process has to answer its health check
CHECK_EVERY = 0.5       # seconds between two looks at the processes


def nginx_binary() -> str:
    """The nginx executable (``NDCG_LAB_NGINX``, else ``nginx`` on the PATH or in /usr/sbin)."""
    wanted = os.environ.get("NDCG_LAB_NGINX")
    found = wanted or shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")
    if not found:
        raise MetricsError("nginx is not installed, and --replicas runs the processes behind it",
                           fix="install Debian's nginx (apt-get install nginx), or set NDCG_LAB_NGINX")
    return found


def public_address(args: Sequence[str]) -> tuple[str, int, list[str]]:
    """(address, port, the other arguments): ``--server.address`` and ``--server.port`` (either
    ``--flag value`` or ``--flag=value``) taken out of the streamlit arguments."""
    found: dict[str, str] = {}
    rest: list[str] = []
    items = iter(args)
    for item in items:
        name, _, value = item.partition("=")
        if name in ("--server.address", "--server.port"):
            found[name] = value if _ else next(items, "")
        else:
            rest.append(item)
    port_text = found.get("--server.port", "8501")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise MetricsError(f"--server.port must be a TCP port, not {port_text!r}")
    return found.get("--server.address") or "127.0.0.1", int(port_text), rest


@dataclass
class Deployment:
    """N processes and nginx. ``command(port)`` is the streamlit command line of one process."""

    home: Path
    replicas: int
    address: str
    port: int
    command: Callable[[int], list[str]]
    env: dict[str, str]
    max_body_bytes: int
    processes: dict[int, subprocess.Popen] = field(default_factory=dict)
    proxy: subprocess.Popen | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.replicas <= MAX_REPLICAS:
            raise MetricsError(f"--replicas takes 1 to {MAX_REPLICAS} processes, not {self.replicas}")
        if self.port + self.replicas > 65535:
            raise MetricsError(f"the processes listen on the ports after {self.port}: it is too high",
                               fix="choose a lower --server.port")
        self.run = Path(self.home) / RUN_FOLDER
        self.name = f"port{self.port}"

    @property
    def ports(self) -> list[int]:
        return [self.port + i for i in range(1, self.replicas + 1)]

    @property
    def url(self) -> str:
        host = "127.0.0.1" if self.address in ("0.0.0.0", "") else self.address
        return f"http://{host}:{self.port}/"

    def prepare(self) -> Path:
        """Write the run folder: nginx's configuration and temporary folders, the shared cookie
        secret (kept across restarts, so browsers' cookies stay valid). The configuration's path."""
        for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            (self.run / "temp" / folder).mkdir(parents=True, exist_ok=True, mode=0o700)
        secret = self.run / "cookie-secret"
        if not secret.exists():
            secret.touch(mode=0o600)
            secret.write_text(secrets.token_urlsafe(32))
        config = self.run / "nginx.conf"
        user = getpass.getuser() if os.geteuid() == 0 else None
        config.write_text(nginx.standalone(self.run, f"{self.address}:{self.port}",
                                           [f"127.0.0.1:{p}" for p in self.ports],
                                           max_body_bytes=self.max_body_bytes, user=user))
        return config

    def process_env(self) -> dict[str, str]:
        return {**self.env, "NDCG_LAB_DEPLOYMENT": self.name,
                "STREAMLIT_SERVER_COOKIE_SECRET": (self.run / "cookie-secret").read_text().strip()}

    def start_process(self, port: int) -> subprocess.Popen:
        log = open(self.run / f"app-{port}.log", "ab")  # noqa: SIM115 - the child writes it
        try:
            process = subprocess.Popen(self.command(port), env=self.process_env(), stdin=subprocess.DEVNULL,
                                       stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        finally:
            log.close()
        self.processes[port] = process
        return process

    def wait_healthy(self, port: int, deadline: float) -> None:
        while time.monotonic() < deadline:
            process = self.processes[port]
            if process.poll() is not None:
                raise MetricsError(f"the app process on port {port} ended (code {process.returncode})",
                                   source=str(self.run / f"app-{port}.log"), fix="read its log")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=2) as response:
                    if response.read().strip() == b"ok":
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise MetricsError(f"the app process on port {port} did not answer in {START_TIMEOUT:g} s",
                           source=str(self.run / f"app-{port}.log"), fix="read its log")

    def warm_up(self, ports: Sequence[int]) -> None:
        """Each process's first script run (:mod:`.warm`), all at once, before the class arrives; a
        process that fails it is only reported (its first visitor then pays the run)."""
        def one(port: int) -> None:
            try:
                warm.warm_up(f"http://127.0.0.1:{port}")
            except (OSError, TimeoutError, requests.RequestException, websockets.WebSocketException) as exc:
                print(f"the app process on port {port} was not warmed up: {exc}", file=sys.stderr, flush=True)

        threads = [threading.Thread(target=one, args=(port,), daemon=True) for port in ports]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    def _warm_when_healthy(self, port: int) -> None:
        try:
            self.wait_healthy(port, time.monotonic() + START_TIMEOUT)
        except MetricsError:
            return     # the supervisor starts it again
        self.warm_up([port])

    def start(self) -> None:
        """Every process (healthy), then nginx; on any failure everything started is stopped."""
        config = self.prepare()
        binary = nginx_binary()
        try:
            for port in self.ports:
                self.start_process(port)
            deadline = time.monotonic() + START_TIMEOUT
            for port in self.ports:
                self.wait_healthy(port, deadline)
            self.warm_up(self.ports)
            with open(self.run / "nginx.out", "ab") as log:
                self.proxy = subprocess.Popen([binary, "-p", str(self.run), "-c", str(config),
                                               "-e", str(self.run / "error.log")],
                                              stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                              start_new_session=True)
            time.sleep(0.3)
            if self.proxy.poll() is not None:
                raise MetricsError(f"nginx ended at once (code {self.proxy.returncode})",
                                   source=str(self.run / "error.log"), fix="read its error log")
        except BaseException:
            self.stop()
            raise

    def supervise(self, stopping: Callable[[], bool]) -> int:
        """Until ``stopping()``: start again a process that died; 1 if nginx dies, else 0."""
        while not stopping():
            time.sleep(CHECK_EVERY)
            if self.proxy is not None and self.proxy.poll() is not None:
                print(f"nginx ended (code {self.proxy.returncode}); see {self.run / 'error.log'}", file=sys.stderr)
                return 1
            for port, process in list(self.processes.items()):
                if process.poll() is not None and not stopping():
                    print(f"the app process on port {port} ended (code {process.returncode}); starting it again",
                          file=sys.stderr, flush=True)
                    self.start_process(port)
                    threading.Thread(target=self._warm_when_healthy, args=(port,), daemon=True).start()
        return 0

    def stop(self) -> None:
        """SIGTERM to nginx and every process, SIGKILL to those still running 10 s later."""
        running = [p for p in [self.proxy, *self.processes.values()] if p is not None and p.poll() is None]
        for process in running:
            process.terminate()
        deadline = time.monotonic() + 10
        for process in running:
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def serve(self) -> int:
        """Start, print the address, supervise until SIGTERM/SIGINT, stop."""
        stop = []
        previous = {sig: signal.signal(sig, lambda *_: stop.append(True)) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
            print(f"nDCG Lab: {self.url} ({self.replicas} processes on ports {self.ports[0]}-{self.ports[-1]}, "
                  f"nginx; run folder {self.run})", flush=True)
            return self.supervise(lambda: bool(stop))
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
