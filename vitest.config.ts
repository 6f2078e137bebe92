import { defineConfig } from 'vitest/config';

// PLINTH_TEST_DB=pglite|postgres picks the database every server test runs against;
// scripts/test.sh runs the suite once for each.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts', 'bench/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    reporters: ['default'],
  },
});
