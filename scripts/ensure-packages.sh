#!/usr/bin/env bash
# Installs, with apt-get and only when missing, what the tests need beside Node:
# Debian's Chromium for the browser tests (npm packages that download their own browser
# cannot work on machines that only reach the registries) and redis-server for the shared
# rate-limit counters, and curl for the README's walk-through. PostgreSQL is installed by
# scripts/pg-cluster.sh.
# apt's chatter goes to .tmp/apt.log; a failure prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
# The README's walk-through (run by packages/server/test/readme.pglite.test.ts) uses curl.
command -v curl >/dev/null 2>&1 || missing+=(curl)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[packages] installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != "0" ]; then SUDO=sudo; else SUDO=; fi
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}"; } >.tmp/apt.log 2>&1; then
  tail -n 40 .tmp/apt.log >&2
  echo "[packages] apt-get install ${missing[*]} failed" >&2
  exit 1
fi
