#!/usr/bin/env bash
# replbench entry point: make sure the Python environment exists, then hand everything to the harness.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  echo "replbench: preparing Python environment in .venv (first use)..." >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$root/requirements.txt"
  echo "$want" > "$stamp"
fi
cd "$root"
exec "$venv/bin/python" -m replbench "$@"
