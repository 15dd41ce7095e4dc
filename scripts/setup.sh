#!/usr/bin/env bash
# Install what nDCG Lab needs on a Debian machine; safe to run again.
#
#   bash scripts/setup.sh run    # runtime Python packages (requirements.txt)
#   bash scripts/setup.sh test   # + test packages (requirements-dev.txt), Debian's chromium and nginx
#                                # (the tests of ndcg-lab app --replicas), and this checkout as an
#                                # editable package (pip install -e .: the ndcg-lab command)
#
# Chromium comes from Debian (apt-get install chromium -> /usr/bin/chromium); the Playwright
# Python package only drives it, so `playwright install` is never run.
# Environment: PYTHON (default python3), CHROMIUM (default /usr/bin/chromium).
set -euo pipefail

mode="${1:-run}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON="${PYTHON:-python3}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"

case "$mode" in
  run)  requirements=requirements.txt ;;
  test) requirements=requirements-dev.txt ;;
  *)    echo "usage: $0 [run|test]" >&2; exit 64 ;;
esac

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    sudo "$@"
  else
    echo "setup: '$*' needs root and sudo is missing; run it as root once" >&2
    return 1
  fi
}

if [ "$mode" = test ]; then
  if [ -x "$CHROMIUM" ]; then
    echo "setup: chromium present ($CHROMIUM)"
  else
    echo "setup: installing Debian's chromium"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update
    as_root apt-get install -y chromium
    if [ ! -x "$CHROMIUM" ]; then
      echo "setup: apt-get installed chromium but $CHROMIUM is missing" >&2
      exit 1
    fi
  fi
  if command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ]; then
    echo "setup: nginx present"
  else
    echo "setup: installing Debian's nginx"
    export DEBIAN_FRONTEND=noninteractive
    as_root apt-get update
    as_root apt-get install -y nginx
  fi
fi

if "$PYTHON" scripts/check_requirements.py "$requirements" 2>/dev/null; then
  echo "setup: Python packages of $requirements already installed"
else
  echo "setup: installing Python packages of $requirements"
  # pip reads its own configuration (including the machine's constraints file).
  "$PYTHON" -m pip install --disable-pip-version-check -r "$requirements"
  "$PYTHON" scripts/check_requirements.py "$requirements"
fi

if [ "$mode" = test ]; then
  # -I: the import ignores the working folder, so it fails on an install older than ndcg_lab.
  if "$PYTHON" -c "import importlib.metadata as m, sys; sys.exit(m.distribution('ndcg-lab').locate_file('') is None)" 2>/dev/null \
      && "$PYTHON" -I -c "import ndcg_lab.ui.console" 2>/dev/null \
      && command -v ndcg-lab >/dev/null 2>&1; then
    echo "setup: ndcg-lab installed ($(command -v ndcg-lab))"
  else
    echo "setup: installing this checkout as an editable package (ndcg-lab command)"
    "$PYTHON" -m pip install --disable-pip-version-check --no-deps -e .
  fi
fi
