import { defineConfig } from 'vitest/config';

// PLINTH_TEST_DB=pglite|postgres picks the database every server test runs against;
// scripts/test.sh runs the suite once for each.
// Files named *.pglite.test.ts or *.postgres.test.ts belong to one database's run only.
const onPostgres = process.env.PLINTH_TEST_DB === 'postgres';

export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', onPostgres ? '**/*.pglite.test.ts' : '**/*.postgres.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // A fresh embedded data dir made once, copied by each test server (test/global-setup.ts).
    globalSetup: ['packages/server/test/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
