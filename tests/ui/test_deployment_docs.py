"""The lecture setup of docs/deployment.md is tested as written: its nginx site is exactly what
``ndcg_lab.deploy.nginx.site`` generates for the documented parameters, and nginx accepts it
(``nginx -t`` on a whole configuration around it, run as the user); the generated configuration
of ``ndcg-lab app --replicas`` is accepted too."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from ndcg_lab.deploy import nginx

DOC = Path(__file__).resolve().parents[2] / "docs" / "deployment.md"
BACKENDS = [f"127.0.0.1:{port}" for port in (8502, 8503, 8504, 8505)]
NGINX = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/sbin")


def documented_site() -> str:
    blocks = re.findall(r"```nginx\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def test_the_documented_site_is_the_generated_one():
    assert documented_site() == nginx.site("80", BACKENDS, max_body_bytes=512 * 10**6 + 2**20,
                                           server_name="lab.example.edu")


def test_a_site_routes_each_browser_to_its_process_with_the_others_as_backups():
    site = nginx.site("8501", BACKENDS[:2], max_body_bytes=10)
    assert "proxy_pass http://ndcglab_$ndcglab_route;" in site
    group = r"upstream ndcglab_{} \{{\n    server 127.0.0.1:{} [^\n]*;\n    server 127.0.0.1:{} backup;"
    assert re.search(group.format(0, 8502, 8503), site)
    assert re.search(group.format(1, 8503, 8502), site)
    assert "50% 0;\n    * 1;" in site


@pytest.mark.skipif(NGINX is None, reason="nginx is not installed (bash scripts/setup.sh test installs Debian's)")
@pytest.mark.parametrize("which", ["documented site", "replicas"])
def test_nginx_accepts_the_configuration(tmp_path, which):
    run = tmp_path / "run"
    for folder in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (run / "temp" / folder).mkdir(parents=True)
    config = nginx.standalone(run, "127.0.0.1:18501", BACKENDS[:2], max_body_bytes=10**9)
    if which == "documented site":    # the site in a whole configuration run as the user
        config = config[:config.index("    # nDCG Lab: one address")] + \
            "\n".join(f"    {line}" if line else "" for line in documented_site().splitlines()) + "\n}\n"
    (run / "nginx.conf").write_text(config)
    checked = subprocess.run([NGINX, "-t", "-p", str(run), "-c", str(run / "nginx.conf"), "-e", str(run / "error.log")],
                             capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr
