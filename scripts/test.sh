#!/usr/bin/env bash
# The whole test suite: type check, lint, then every test on the embedded database (PGlite)
# and again on a real PostgreSQL (installed with apt-get and started as a throwaway cluster
# when missing). Chromium for the browser tests is installed the same way. Then a smoke test
# on Node 22 and 24.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp

step() { printf '\n== %s\n' "$*"; }

step "build and type check"
npm run build --silent
npx tsc -p packages/server/test/tsconfig.json --noEmit
npx tsc -p packages/console/test/tsconfig.json --noEmit
[ -f packages/sdk/tsconfig.typetest.json ] && npx tsc -p packages/sdk/tsconfig.typetest.json --noEmit

step "lint (biome) and import boundaries"
npx biome check packages bench scripts bin
node scripts/check-boundaries.mjs

step "browser and database prerequisites"
scripts/ensure-packages.sh
PG_URL=$(scripts/pg-cluster.sh start)
trap 'scripts/pg-cluster.sh stop >/dev/null 2>&1 || true' EXIT

status=0
step "tests on PGlite (embedded)"
PLINTH_TEST_DB=pglite npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-pglite.json || status=1

# The bench's smoke test loads the machine: alone, never beside other tests (vitest.config.ts).
step "npm run bench, smoke test (alone)"
PLINTH_TEST_DB=pglite PLINTH_TEST_BENCH=1 npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-bench.json || status=1

step "tests on PostgreSQL"
PLINTH_TEST_DB=postgres TEST_DATABASE_URL="$PG_URL" npx vitest run --reporter=default --reporter=json --outputFile.json=.tmp/vitest-postgres.json || status=1

# Hosted PostgreSQL gives the database owner no superuser: the same suite again as such an owner
# (CREATEROLE, no SUPERUSER, so no event triggers; scripts/pg-cluster.sh owner), on Plinth's
# fallback. The server's tests only (the SDK's and the console's add nothing here). Its own step,
# so the steps above can change without touching it.
step "tests on PostgreSQL as a database owner without superuser"
PG_OWNER=$(scripts/pg-cluster.sh owner)
PLINTH_TEST_DB=postgres TEST_DATABASE_URL="$PG_URL" TEST_DATABASE_OWNER="$PG_OWNER" npx vitest run packages/server --reporter=default --reporter=json --outputFile.json=.tmp/vitest-postgres-owner.json || status=1


# Node 22 and 24 (the versions the README names), installed from the npm registry: a smoke test
# of the built server (start, sign up, a REST round trip under RLS, SIGTERM). The full suite
# stays on the machine's Node; the package test (package.pglite.test.ts) installs on Node 22.
step "smoke test on Node 22 and 24"
scripts/smoke-node.sh 22 || status=1
scripts/smoke-node.sh 24 || status=1

node scripts/summarize-tests.mjs .tmp/vitest-pglite.json .tmp/vitest-bench.json .tmp/vitest-postgres.json .tmp/vitest-postgres-owner.json || status=1
exit $status
