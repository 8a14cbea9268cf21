#!/bin/sh
# Install the official MCP peers the interop tests run against, once, and reuse them:
#   npm:    the packages of package-lock.json into node_modules/ (`npm ci`)
#   python: the Python SDK pinned in py/requirements.txt into .venv/
# Usage: install.sh [npm] [python]   (both when none is named)
# Safe to run concurrently (test binaries in parallel): one installer at a time holds
# .install.lock; a part is reinstalled only when its lock file changed since the last install.
set -eu
cd "$(dirname "$0")"
parts=${*:-npm python}
exec 9>.install.lock
flock 9
for part in $parts; do
  case $part in
    npm)
      if ! cmp -s package-lock.json node_modules/.ferry-installed; then
        npm ci --no-audit --no-fund --loglevel=error >&2
        cp package-lock.json node_modules/.ferry-installed
      fi
      ;;
    python)
      if ! cmp -s py/requirements.txt .venv/.ferry-installed; then
        rm -rf .venv
        python3 -m venv .venv
        .venv/bin/pip install --quiet --disable-pip-version-check -r py/requirements.txt >&2
        cp py/requirements.txt .venv/.ferry-installed
      fi
      ;;
    *)
      echo "install.sh: unknown part $part (npm, python)" >&2
      exit 2
      ;;
  esac
done
