#!/usr/bin/env bash
# Create .venv (once) and install the package with its test and semantic extras.
# Sourced by scripts/test.sh and scripts/demo.sh; safe to run again (it is quick when done).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "== creating .venv" >&2
  "$PYTHON" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
stamp=.venv/.installed-$(cat pyproject.toml scripts/setup.sh | sha256sum | cut -c1-16)
if [ ! -f "$stamp" ]; then
  echo "== installing memory-enhancement with its test and semantic-search dependencies" >&2
  # PyTorch's CPU build first, so sentence-transformers does not pull the CUDA one.
  .venv/bin/pip install -q torch==2.13.0
  .venv/bin/pip install -q -e '.[dev,semantic]'
  rm -f .venv/.installed-*
  touch "$stamp"
fi
