import { defineConfig } from 'vitest/config';

// PLINTH_TEST_DB=pglite|postgres picks the database every server test runs against;
// scripts/test.sh runs the suite once for each.
// Files named *.pglite.test.ts or *.postgres.test.ts belong to one database's run only.
const onPostgres = process.env.PLINTH_TEST_DB === 'postgres';
// bench/ runs `npm run bench` under load: never beside other tests (it would slow them and
// itself), only in a run of its own: PLINTH_TEST_BENCH=1 npx vitest run bench (scripts/test.sh).
const bench = process.env.PLINTH_TEST_BENCH === '1';

export default defineConfig({
  test: {
    include: bench ? ['bench/**/*.test.ts'] : ['packages/*/src/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', onPostgres ? '**/*.pglite.test.ts' : '**/*.postgres.test.ts'],
    // Deadlines for a test that hangs, not speed limits: on a busy machine one PGlite test server
    // takes seconds to start, and a test may start two (speed is `npm run bench`'s business).
    testTimeout: 120_000,
    hookTimeout: 120_000,
    expect: { poll: { timeout: 20_000 } },
    // A fresh embedded data dir made once, copied by each test server (test/global-setup.ts).
    globalSetup: ['packages/server/test/global-setup.ts'],
    pool: 'forks',
    // One module cache per worker, not one per file: importing the server's modules again for
    // every file was 416 s of the PGlite run's worker time (for 167 s of it no file ran at all).
    // With the cache shared, 35 s. Each test file still starts and stops its own servers and
    // databases; the suite has no module-level state (CONTRIBUTING.md rule 9), and globals a
    // test stubs are restored after it.
    isolate: false,
    unstubGlobals: true,
    maxWorkers: 2,
    reporters: ['default'],
  },
});
