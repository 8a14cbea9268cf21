#!/bin/sh
# Install the servers bench/probe/measure.py runs into DIR (outside the repository):
#   npm:    package.json's packages into DIR/node_modules, and ts_server.mjs beside them
#   python: requirements.txt's packages into DIR/.venv
# Usage: bench/probe/install.sh DIR
set -eu
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:?usage: install.sh DIR}
mkdir -p "$dir"
cp "$here/package.json" "$here/ts_server.mjs" "$dir/"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
[ -x "$dir/.venv/bin/python" ] || python3 -m venv "$dir/.venv"
"$dir/.venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements.txt" >&2
# The last 1.x of the Python SDK (session era only), which many published servers still pin.
[ -x "$dir/.venv-v1/bin/python" ] || python3 -m venv "$dir/.venv-v1"
"$dir/.venv-v1/bin/pip" install --quiet --disable-pip-version-check -r "$here/requirements-v1.txt" >&2
