#!/usr/bin/env bash
# The main job on a bundled example: a throw-away git repository with a small
# project, memories with citations into its code, then what happens when the code
# moves on: verification tells moved lines from changed ones, --fix follows the
# moves, and the health report ranks what needs a person.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
ME="$PWD/.venv/bin/memory-enhancement"
work=$(mktemp -d "${TMPDIR:-/tmp}/memory-enhancement-demo.XXXXXX")
export MEMORY_ENHANCEMENT_HOME="$work/home"  # keep the demo's index and state apart
cp -r examples/demo/project "$work/project"
cd "$work/project"
git init -q && git add -A
git -c user.name=demo -c user.email=demo@example.com commit -qm "demo project"

step() { printf '\n\033[1m$ %s\033[0m\n' "$*"; "$@"; }
show() { printf '\n\033[1m$ %s\033[0m\n' "$*"; eval "$@" || true; }

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

printf '\n\033[1m# The code moves on: a docstring grows (lines move) and the retry count changes.\033[0m\n'
python3 - <<'PY'
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
echo "Done. Look around in $work/project (memories in .memories/), or remove it: rm -rf $work"
