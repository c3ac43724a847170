#!/usr/bin/env bash
# Create .venv (once) and install the package with its test and semantic extras.
# Sourced by scripts/test.sh (scripts/demo.sh installs only the core package, on its own);
# safe to run again (it is quick when done).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv" >&2
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
# scripts/demo.sh may have made .venv without its own pip (faster); add it.
.venv/bin/python -m pip --version >/dev/null 2>&1 || .venv/bin/python -m ensurepip --upgrade --default-pip >/dev/null
stamp=.venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "== installing memory-enhancement with its test and semantic-search dependencies" >&2
  .venv/bin/python -m pip install -q -e '.[dev,semantic]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi

# The browser test (tests/test_health_browser.py) drives Debian's headless Chromium. Install it
# when it is missing and we can (root with apt-get); otherwise that test fails and says how.
if ! command -v chromium >/dev/null 2>&1 || ! command -v chromedriver >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing chromium and chromium-driver (apt-get) for the browser test" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -q chromium chromium-driver >/dev/null; then
      echo "== apt-get update, then again" >&2
      { apt-get update -q >/dev/null &&
        apt-get install -y -q chromium chromium-driver >/dev/null; } ||
        echo "== could not install chromium; the browser test will fail and say how" >&2
    fi
  else
    echo "== chromium or chromedriver missing and apt-get is not available as root:" \
      "the browser test will fail (apt-get install -y chromium chromium-driver)" >&2
  fi
fi
