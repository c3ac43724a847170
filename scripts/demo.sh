#!/usr/bin/env bash
# The main job on a bundled example: a throw-away git repository with a small
# project, memories with citations into its code, then what happens when the code
# moves on: verification tells moved lines from changed ones, --fix follows the
# moves, and the health report ranks what needs a person.
#
# Installs the core package only into .venv (click, PyYAML, markdown-it-py, the MCP
# SDK): no test tools, no semantic-search extra, no browser, nothing outside .venv.
# `bash scripts/test.sh` installs the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$SECONDS
# Bold headings on a terminal; plain text in a log or a pipe.
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; else bold="" plain=""; fi
progress() { printf '== %s (%ss)\n' "$*" "$((SECONDS - started))"; }

PYTHON=${PYTHON:-python3}
# The venv's own pip costs ~10 s to set up (ensurepip); the pip of $PYTHON can install
# into the venv instead (pip >= 22.3). scripts/setup.sh adds the venv's pip when it needs it.
if [ ! -x .venv/bin/python ]; then
  progress "creating .venv with $("$PYTHON" --version 2>&1)"
  "$PYTHON" -m venv --without-pip .venv
fi
if .venv/bin/python -m pip --version >/dev/null 2>&1; then
  pip=(.venv/bin/python -m pip)
elif "$PYTHON" -m pip --python .venv/bin/python --version >/dev/null 2>&1; then
  pip=("$PYTHON" -m pip --python .venv/bin/python)
else
  .venv/bin/python -m ensurepip --upgrade --default-pip >/dev/null
  pip=(.venv/bin/python -m pip)
fi
stamp=.venv/.core-$(sha256sum pyproject.toml | cut -c1-16)
if [ ! -f "$stamp" ]; then
  progress "installing memory-enhancement (core only) into .venv"
  # One line per package pip collects, so a slow download shows where it is; the whole
  # output goes to .venv/pip.log and is shown when pip fails. No byte-compiling of every
  # dependency up front: Python compiles what the demo imports, on first use.
  if ! "${pip[@]}" install --no-compile --progress-bar off --disable-pip-version-check -e . 2>&1 |
    tee .venv/pip.log | { grep --line-buffered -E '^(Collecting|Successfully)' || true; }; then
    echo "error: pip could not install memory-enhancement; the end of .venv/pip.log:" >&2
    tail -n 20 .venv/pip.log >&2
    exit 1
  fi
  .venv/bin/python -c 'import memory_enhancement' # fail here, not in the first step
  rm -f .venv/.core-*
  touch "$stamp"
fi
ME="$PWD/.venv/bin/memory-enhancement"
PY="$PWD/.venv/bin/python"
work=$(mktemp -d "${TMPDIR:-/tmp}/memory-enhancement-demo.XXXXXX")
export MEMORY_ENHANCEMENT_HOME="$work/home"  # keep the demo's index and state apart
cp -r examples/demo/project "$work/project"
cd "$work/project"
git init -q && git add -A
git -c user.name=demo -c user.email=demo@example.com commit -qm "demo project"
progress "ready"

step() { printf '\n%s$ %s%s\n' "$bold" "${*/#$ME/memory-enhancement}" "$plain"; "$@"; }
show() { printf '\n%s$ %s%s\n' "$bold" "${*/#$ME/memory-enhancement}" "$plain"; "$@" || true; }

echo "Demo repository: $work/project"
step "$ME" add decisions/api-version --tag api \
  --content "# Client and server agree on the API version
The client builds URLs from API_VERSION and the server mounts its routes under the same
prefix. Change both in one commit, or every call returns 404." \
  --citation app/config.py:3 --citation app/client.py:7 --citation app/server.py:5
step "$ME" add pitfalls/retries --tag http --link decisions/api-version \
  --content "# Retries stop at the first non-5xx answer
fetch() retries only server errors; a 4xx is returned at once." \
  --citation app/client.py:11-14 --citation app/config.py:5
step "$ME" list
step "$ME" get decisions/api-version
step "$ME" search "api version prefix"
step "$ME" verify-all

printf '\n%s# The code moves on: a docstring grows (lines move) and the retry count changes.%s\n' \
  "$bold" "$plain"
"$PY" - <<'PY'
from pathlib import Path
config = Path("app/config.py")
config.write_text(config.read_text().replace(
    '"""Settings shared by the client and the server."""',
    '"""Settings shared by the client and the server.\n\nKeep them in one place.\n"""',
).replace("RETRIES = 3", "RETRIES = 5"))
PY
git -c user.name=demo -c user.email=demo@example.com commit -qam "config: document, retry more"
show "$ME" verify-all
step "$ME" verify decisions/api-version --fix
show "$ME" verify-all --format github
step "$ME" graph decisions/api-version --direction both --format mermaid
step "$ME" health --limit 5
echo
echo "Done in $((SECONDS - started))s. Look around in $work/project (memories in .memories/),"
echo "or remove it: rm -rf $work"
