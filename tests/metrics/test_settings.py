"""Operator settings from the environment, and the gate for server paths and URLs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from metrics import settings
from metrics.errors import MetricsError
from metrics.settings import Settings, check_server_source, load

SECRET = "root:x:0:0:the first line that must never be quoted"


# -- defaults -------------------------------------------------------------------------

def _meminfo_total() -> int:
    """MemTotal from /proc/meminfo (kB), independent of os.sysconf."""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no MemTotal")


def test_personal_defaults(tmp_path):
    s = load({"HOME": str(tmp_path)})
    assert (s.mode, s.shared, s.data_roots, s.url_schemes, s.server_files) == (
        "personal", False, (), frozenset(), False)
    assert (s.upload_files, s.upload_bytes, s.quota_bytes, s.quota_runs) == (64, 4 * 10**9, None, None)
    assert s.ttl == 7 * 24 * 3600 and s.open_workspaces == 32 and s.workspace_memory is None
    assert s.home == tmp_path / ".local" / "share" / "ndcg-lab"


def test_line_bound_and_inflate_budget():
    s = load({})
    assert s.max_line == 10**6 and s.inflate_total is None and s.inflate_budget == s.inflate_limit
    s = load({"NDCG_LAB_MAX_LINE": "64KiB", "NDCG_LAB_INFLATE_LIMIT": "1GB", "NDCG_LAB_INFLATE_TOTAL": "3GB"})
    assert (s.max_line, s.inflate_limit, s.inflate_budget) == (65536, 10**9, 3 * 10**9)
    with pytest.raises(MetricsError, match="NDCG_LAB_MAX_LINE"):
        load({"NDCG_LAB_MAX_LINE": "long"})


def test_shared_defaults_bound_everything():
    s = load({"NDCG_LAB_MODE": "Shared "})
    assert s.mode == "shared" and s.shared and not s.server_files  # no server files unless configured
    assert (s.upload_files, s.upload_bytes, s.quota_bytes, s.quota_runs) == (16, 512 * 10**6, 2 * 10**9, 200)
    assert s.workspace_memory == 512 * 10**6


def test_inflate_limit_defaults_to_4_gb_or_a_quarter_of_ram():
    ram = _meminfo_total()
    cgroup = Path("/sys/fs/cgroup/memory.max")
    if cgroup.exists() and cgroup.read_text().strip().isdigit():
        ram = min(ram, int(cgroup.read_text().strip()))
    expected = min(4_000_000_000, ram // 4)
    # sysconf and /proc/meminfo count the same RAM; allow their rounding (a few pages)
    assert abs(load({}).inflate_limit - expected) <= 1 << 20


def test_home_honours_ndcg_lab_home_then_xdg(tmp_path):
    assert load({"NDCG_LAB_HOME": str(tmp_path / "lab")}).home == tmp_path / "lab"
    assert settings.home({"XDG_DATA_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg" / "ndcg-lab"


# -- values ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, expected", [
    ("123", 123), ("512MB", 512 * 10**6), ("512 mb", 512 * 10**6), ("1.5GB", 1_500_000_000),
    ("2GiB", 2 * 2**30), ("64k", 64_000), ("10KiB", 10 * 1024), ("1tb", 10**12)])
def test_sizes(text, expected):
    assert load({"NDCG_LAB_INFLATE_LIMIT": text}).inflate_limit == expected
    assert load({"NDCG_LAB_QUOTA_BYTES": text}).quota_bytes == expected


def test_counts_durations_and_unlimited():
    s = load({"NDCG_LAB_UPLOAD_FILES": "3", "NDCG_LAB_QUOTA_RUNS": "unlimited", "NDCG_LAB_TTL": "12h",
              "NDCG_LAB_MODE": "shared", "NDCG_LAB_QUOTA_BYTES": "none", "NDCG_LAB_OPEN_WORKSPACES": "2"})
    assert (s.upload_files, s.quota_runs, s.ttl, s.quota_bytes, s.open_workspaces) == (3, None, 12 * 3600, None, 2)
    assert load({"NDCG_LAB_TTL": "1w"}).ttl == 7 * 86400
    assert load({"NDCG_LAB_TTL": "30m"}).ttl == 1800
    assert load({"NDCG_LAB_TTL": "never"}).ttl is None


@pytest.mark.parametrize("variable, value", [
    ("NDCG_LAB_MODE", "public"),
    ("NDCG_LAB_INFLATE_LIMIT", "lots"), ("NDCG_LAB_INFLATE_LIMIT", "4 GX"), ("NDCG_LAB_INFLATE_LIMIT", "0"),
    ("NDCG_LAB_INFLATE_LIMIT", "-5"), ("NDCG_LAB_INFLATE_LIMIT", "unlimited"),  # inflating is always bounded
    ("NDCG_LAB_UPLOAD_FILES", "0"), ("NDCG_LAB_UPLOAD_FILES", "2.5"), ("NDCG_LAB_UPLOAD_BYTES", "big"),
    ("NDCG_LAB_QUOTA_RUNS", "many"), ("NDCG_LAB_QUOTA_BYTES", "1e9"),
    ("NDCG_LAB_TTL", "7"),  # a bare number would be seven seconds
    ("NDCG_LAB_TTL", "7 days"), ("NDCG_LAB_TTL", "0d"),
    ("NDCG_LAB_OPEN_WORKSPACES", "zero"), ("NDCG_LAB_URL_SCHEMES", "s3,file"), ("NDCG_LAB_URL_SCHEMES", "3x"),
    ("NDCG_LAB_DATA_ROOTS", "relative/folder"), ("NDCG_LAB_DATA_ROOTS", "/no/such/folder/anywhere")])
def test_a_bad_value_is_one_line_naming_the_variable(variable, value):
    with pytest.raises(MetricsError) as caught:
        load({variable: value})
    message = str(caught.value)
    assert message.startswith(variable) and "\n" not in message
    assert repr(value.split(",")[-1]) in message  # quotes the value (the bad item of a list)


def test_roots_are_resolved_and_schemes_normalised(tmp_path):
    real, other = tmp_path / "real", tmp_path / "other"
    real.mkdir()
    other.mkdir()
    (tmp_path / "link").symlink_to(real)
    s = load({"NDCG_LAB_DATA_ROOTS": os.pathsep.join([str(tmp_path / "link"), str(other), "", str(real)]),
              "NDCG_LAB_URL_SCHEMES": " S3, gs:// ,https,"})
    assert s.data_roots == (real.resolve(), other.resolve())  # the link resolved, the repeat dropped
    assert s.url_schemes == {"s3", "gs", "https"} and s.server_files


# -- the gate for server files --------------------------------------------------------

@pytest.fixture
def tree(tmp_path):
    """data/ (the root) with a run, a link inside, links that escape; secret/ outside it."""
    data, secret = tmp_path / "data", tmp_path / "secret"
    data.mkdir()
    secret.mkdir()
    (data / "runs").mkdir()
    (data / "runs" / "bm25.run").write_text("q1 Q0 d1 1 1.0 bm25\n")
    (secret / "passwd").write_text(SECRET + "\n")
    (data / "same.run").symlink_to(data / "runs" / "bm25.run")
    (data / "escape.run").symlink_to(secret / "passwd")
    (data / "escape-dir").symlink_to(secret)
    (tmp_path / "data2").mkdir()  # shares the root's name as a prefix
    (tmp_path / "data2" / "x.run").write_text("q1 Q0 d1 1 1.0 x\n")
    return tmp_path


def _allowed(tree, **extra) -> Settings:
    return Settings(data_roots=(tree / "data",), **extra)


def _refused(src, config, match: str) -> str:
    with pytest.raises(MetricsError, match=match) as caught:
        check_server_source(src, config)
    message = str(caught.value)
    assert SECRET not in message and "root:x" not in message and "\n" not in message
    return message


def test_off_unless_roots_are_listed(tree):
    for config in (Settings(), Settings(mode="shared")):
        _refused(tree / "data" / "runs" / "bm25.run", config, "turned off")
        _refused("/etc/passwd", config, "turned off")
        _refused("s3://bucket/run.txt", config, "turned off")


def test_a_path_under_a_root_is_resolved(tree):
    config = _allowed(tree)
    run = str((tree / "data" / "runs" / "bm25.run").resolve())
    assert check_server_source(tree / "data" / "runs" / "bm25.run", config) == run
    assert check_server_source(str(tree / "data" / "same.run"), config) == run  # a link that stays inside
    assert check_server_source(f"file://{tree}/data/runs/bm25.run", config) == run
    assert check_server_source(tree / "data" / "runs", config) == str((tree / "data" / "runs").resolve())
    assert check_server_source(tree / "data", config) == str((tree / "data").resolve())


@pytest.mark.parametrize("relative", [
    "secret/passwd",                  # plainly outside
    "data/../secret/passwd",          # climbs out
    "data/runs/../../secret/passwd",
    "data/escape.run",                # a symlink whose target is outside
    "data/escape-dir/passwd",         # through a symlinked folder
    "data2/x.run",                    # the root's name as a string prefix is not the root
    "data/../secret/no-such-file",    # outside: refused without saying whether it exists
])
def test_escapes_are_refused_without_quoting_the_file(tree, relative):
    message = _refused(tree / relative, _allowed(tree), "outside the folders")
    assert str(tree / "data") in message  # names the root to use instead


def test_system_files_are_refused(tree):
    _refused("/etc/passwd", _allowed(tree), "outside the folders")
    _refused("file:///etc/passwd", _allowed(tree), "outside the folders")
    _refused("FILE:///etc/passwd", _allowed(tree, url_schemes=frozenset({"s3"})), "not allowed")
    _refused("~root/.bashrc", _allowed(tree), "outside the folders")


def test_missing_and_special_files_under_a_root(tree):
    _refused(tree / "data" / "nope.run", _allowed(tree), "no such file")
    dev = Settings(data_roots=(Path("/dev").resolve(),))
    _refused("/dev/zero", dev, "not a regular file")
    _refused("bad\x00path", _allowed(tree), "NUL byte")


def test_globs_are_checked_by_their_folder(tree):
    config = _allowed(tree)
    assert check_server_source(f"{tree}/data/runs/*.run", config) == f"{(tree / 'data' / 'runs').resolve()}/*.run"
    assert check_server_source(f"{tree}/data/*/b*.run", config) == f"{(tree / 'data').resolve()}/*/b*.run"
    _refused(f"{tree}/data/*/../../secret/*", config, "may not hold '..'")
    _refused(f"{tree}/secret/*", config, "outside the folders")
    _refused("/etc/pass*", config, "outside the folders")


@pytest.mark.parametrize("pattern", ["data/*/passwd", "data/escape*", "data/**/passwd", "data/*.run",
                                     "data/escape-dir/*"])
def test_a_glob_matching_a_file_outside_through_a_symlink_is_refused(tree, pattern):
    """The folder of ``data/*/passwd`` is the root, but the match data/escape-dir/passwd is the
    secret: every file a pattern matches is resolved and checked."""
    _refused(f"{tree}/{pattern}", _allowed(tree), "outside the folders")


def test_urls_need_a_listed_scheme(tree):
    assert check_server_source("s3://bucket/run.txt", _allowed(tree, url_schemes=frozenset({"s3"}))) == \
        "s3://bucket/run.txt"
    assert check_server_source("S3://bucket/run.txt", Settings(url_schemes=frozenset({"s3"}))) == "S3://bucket/run.txt"
    _refused("https://example.com/run.txt", _allowed(tree), "turned off|not allowed")
    _refused("https://example.com/run.txt", _allowed(tree, url_schemes=frozenset({"s3"})), "'https' are not allowed")
    _refused("http://169.254.169.254/latest/meta-data", Settings(url_schemes=frozenset({"s3"})), "not allowed")
    _refused("s3://b/x::file:///etc/passwd", Settings(url_schemes=frozenset({"s3"})), "chained")
    _refused("simplecache::s3://b/x", Settings(url_schemes=frozenset({"s3"})), "chained")
    _refused("1nvalid://x", Settings(url_schemes=frozenset({"s3"})), "no valid scheme")
    # only URLs allowed: local paths are refused
    _refused(tree / "data" / "runs" / "bm25.run", Settings(url_schemes=frozenset({"s3"})), "only URLs")
