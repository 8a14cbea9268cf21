#!/bin/sh
# Install the browser tests' driver (npm playwright-core, which drives Debian's chromium:
# it downloads no browser) into node_modules/, once, and reuse it. Safe to run
# concurrently: one installer at a time holds .install.lock; the packages are reinstalled
# only when package-lock.json changed since the last install.
set -eu
cd "$(dirname "$0")"
exec 9>.install.lock
flock 9
if ! cmp -s package-lock.json node_modules/.ferry-installed; then
  npm ci --no-audit --no-fund --loglevel=error >&2
  cp package-lock.json node_modules/.ferry-installed
fi
