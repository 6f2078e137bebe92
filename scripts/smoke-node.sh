#!/usr/bin/env bash
# The smoke test (scripts/smoke.mjs) on another Node version, installed from the npm registry
# by scripts/node-version.sh. Needs the build (npm run build). Usage: scripts/smoke-node.sh 24
set -euo pipefail
cd "$(dirname "$0")/.."
NODE=$(scripts/node-version.sh "${1:-24}")
"$NODE" scripts/smoke.mjs
