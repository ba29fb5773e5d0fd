#!/usr/bin/env bash
# replbench entry point: make sure the Python environment exists, then hand everything to the harness.
# The environment is built once per machine and requirements.txt (REPLBENCH_VENV_CACHE, default
# ~/.cache/replbench/venv-<its sha256>) and linked as .venv, so a fresh clone reuses it; the tests keep the type
# checker's caches there too (docs/development.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)"
export REPLBENCH_VENV_CACHE="${REPLBENCH_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/replbench}"
if [[ ! -x "$venv/bin/python" || "$(cat "$stamp" 2>/dev/null)" != "$want" ]]; then
  cache="$REPLBENCH_VENV_CACHE"
  shared="$cache/venv-$want"
  mkdir -p "$cache"
  exec 9>"$cache/venv.lock"
  flock 9  # one build at a time: another clone may be making the same environment
  if [[ ! -f "$shared/.complete" ]]; then
    echo "replbench: preparing the Python environment (first use on this machine)..." >&2
    rm -rf "$shared"
    python3 -m venv "$shared"
    "$shared/bin/pip" install --quiet --disable-pip-version-check -r "$root/requirements.txt"
    echo "$want" > "$shared/.requirements.sha256"
    touch "$shared/.complete"
  fi
  flock -u 9
  rm -rf "$venv"
  ln -s "$shared" "$venv"
fi
cd "$root"
exec "$venv/bin/python" -m replbench "$@"
