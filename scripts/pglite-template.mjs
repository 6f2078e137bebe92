#!/usr/bin/env node
// Makes (or finds) the embedded database's template for the current system migrations, in
// packages/server/dist/pglite-template/<key>/pgdata, and prints its path (db/template.ts).
// Run by scripts/build.mjs after the server is compiled, and by scripts/pack.mjs, which ships
// it: a new project then starts from a copy of it instead of initdb and every migration.
const started = Date.now();
const { pgliteTemplate } = await import(new URL('../packages/server/dist/db/pglite.js', import.meta.url).href);
try {
  const path = await pgliteTemplate();
  process.stdout.write(`${path}\n`);
  process.stderr.write(`pglite template: ready in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
} catch (err) {
  process.stderr.write(`pglite template: could not be made: ${err?.message ?? err}\n`);
  process.exit(1);
}
