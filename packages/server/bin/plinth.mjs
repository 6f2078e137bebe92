#!/usr/bin/env node
// `plinth`, the CLI: npm links it as node_modules/.bin/plinth. Plain ESM kept in git (npm links
// it at install, before any build). In a clone of the repository, `start` and `dev` first build
// what changed since the last build (scripts/build.mjs --if-stale: ~50 ms when nothing did).
import { execFileSync } from 'node:child_process';
import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/main.js', import.meta.url);
const build = fileURLToPath(new URL('../../../scripts/build.mjs', import.meta.url));
// An installed package has no tsconfig.json and no scripts/ beside it: nothing to build there.
const clone = existsSync(new URL('../tsconfig.json', import.meta.url)) && existsSync(build);
const command = process.argv[2];
if (clone && !cluster.isWorker && (command === 'start' || command === 'dev' || !existsSync(main))) {
  try {
    execFileSync(process.execPath, [build, '--if-stale'], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch {
    process.exit(1);
  }
}
if (!existsSync(main)) {
  process.stderr.write(`plinth: the server is not built; run npm run build in ${fileURLToPath(new URL('../../..', import.meta.url))}\n`);
  process.exit(1);
}
await import(main.href);
