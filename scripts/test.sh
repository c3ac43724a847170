#!/usr/bin/env bash
# Set up everything from nothing (a virtualenv in .venv) and run the whole test suite:
# lint (ruff), types (mypy), then pytest. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
echo "== ruff" >&2
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
echo "== mypy" >&2
.venv/bin/mypy
echo "== pytest" >&2
.venv/bin/pytest "$@"
