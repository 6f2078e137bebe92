#!/usr/bin/env bash
# npm run fuzz: the long hostile-input run (packages/server/test/fuzz.test.ts) on both databases,
# FUZZ_RUNS requests each (default 10,000), seeded (FUZZ_SEED) so a failure can be replayed.
# `npm test` runs the same file with fewer requests.
set -euo pipefail
cd "$(dirname "$0")/.."
export FUZZ_RUNS="${FUZZ_RUNS:-10000}"
PG_URL=$(scripts/pg-cluster.sh start)
status=0
echo "== fuzz on PGlite (embedded), $FUZZ_RUNS requests"
PLINTH_TEST_DB=pglite npx vitest run packages/server/test/fuzz.test.ts || status=1
echo "== fuzz on PostgreSQL, $FUZZ_RUNS requests"
PLINTH_TEST_DB=postgres TEST_DATABASE_URL="$PG_URL" npx vitest run packages/server/test/fuzz.test.ts || status=1
exit $status
