"""The release files agree: one version (``metrics.__version__``) in CITATION.cff, the latest
CHANGELOG.md entry, the package metadata and ``--version``; the license is Apache-2.0 verbatim."""
from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import yaml

import metrics

ROOT = Path(__file__).resolve().parents[1]


def test_citation_is_cff_1_2_with_the_version():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    for key in ("cff-version", "message", "title", "authors", "version", "date-released", "license"):
        assert key in cff, key
    assert cff["cff-version"] == "1.2.0"
    assert cff["license"] == "Apache-2.0"
    assert cff["authors"] == [{"name": "nDCG Lab contributors"}]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(cff["date-released"]))
    assert str(cff["version"]) == metrics.__version__


def test_changelog_latest_entry_is_the_version():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## \[([^\]]+)\]", text, flags=re.M)
    assert versions[0] == "Unreleased"
    assert versions[1] == metrics.__version__


def test_pyproject_reads_the_version_from_the_package():
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in text
    assert 'version = {attr = "metrics.__version__"}' in text
    assert not re.search(r'^version = "', text, flags=re.M)   # no second copy


def test_cli_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "metrics", "--version"], cwd=ROOT, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == f"nDCG Lab {metrics.__version__}"


def test_license_is_the_canonical_apache_2_text():
    # md5 of https://www.apache.org/licenses/LICENSE-2.0.txt
    digest = hashlib.md5((ROOT / "LICENSE").read_bytes()).hexdigest()
    assert digest == "3b83ef96387f14655fc854ddc3c6bd57"
    assert "Copyright 2026 nDCG Lab contributors" in (ROOT / "NOTICE").read_text(encoding="utf-8")
