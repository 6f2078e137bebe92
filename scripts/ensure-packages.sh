#!/usr/bin/env bash
# Installs, with apt-get and only when missing, what the tests need beside Node:
# Debian's Chromium for the browser tests (npm packages that download their own browser
# cannot work on machines that only reach the registries) and redis-server for the shared
# rate-limit counters, nginx for the scale-out tests (two instances behind a reverse proxy,
# packages/server/test/cluster.ts), and curl (the README's walk-through, and the console's test
# runs the cURL snippets it generates), python3 (docs/webhooks.md's Python receiver runs in a
# test). PostgreSQL is installed by scripts/pg-cluster.sh.
# apt's chatter goes to .tmp/apt.log; a failure prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
missing=()
command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || missing+=(nginx)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[packages] installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
if [ "$(id -u)" != "0" ]; then SUDO=sudo; else SUDO=; fi
if ! { $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}"; } >.tmp/apt.log 2>&1; then
  tail -n 40 .tmp/apt.log >&2
  echo "[packages] apt-get install ${missing[*]} failed" >&2
  exit 1
fi
