#!/usr/bin/env bash
# Prints the path of a Node binary of the given major version, installed from the npm registry
# (the `node` package brings the official binary) into .tmp/node-<major> and kept for the next
# run. The README names Node 22 and 24: the smoke test (smoke-node.sh) and the package test
# (packages/server/test/package.pglite.test.ts) run on these. Usage: scripts/node-version.sh 22
set -euo pipefail
cd "$(dirname "$0")/.."
MAJOR="${1:-24}"
DIR=".tmp/node-$MAJOR"
NODE="$DIR/node_modules/node/bin/node"
if ! [ -x "$NODE" ] || [ "$("$NODE" -p 'process.versions.node.split(".")[0]' 2>/dev/null)" != "$MAJOR" ]; then
  rm -rf "$DIR"; mkdir -p "$DIR"
  # A package.json of its own, so npm installs here and not into the workspace above.
  echo '{ "private": true }' >"$DIR/package.json"
  echo "[node] installing Node $MAJOR from the npm registry (node@$MAJOR) into $DIR" >&2
  if ! (cd "$DIR" && npm install --no-audit --no-fund --no-package-lock "node@$MAJOR" >install.log 2>&1); then
    tail -n 20 "$DIR/install.log" >&2
    echo "[node] npm install node@$MAJOR failed" >&2
    exit 1
  fi
fi
echo "$(pwd)/$NODE"
