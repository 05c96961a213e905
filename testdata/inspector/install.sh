#!/bin/sh
# install.sh — installs node_modules from package-lock.json unless the
# installed tree already came from this very lock file (a copy of it in
# node_modules/.pircan-installed says so), so a changed pin reinstalls.
# Run by dev/test and, lazily under a file lock, by internal/nodeclient.
set -eu
cd "$(dirname "$0")"
if cmp -s package-lock.json node_modules/.pircan-installed 2>/dev/null; then exit 0; fi
npm ci --no-audit --no-fund
cp package-lock.json node_modules/.pircan-installed
