#!/usr/bin/env node
// `npx plinth` from the repository root (README.md, CLI). npm links this bin at `npm ci`, before
// the server is built, so it is a file kept in git that loads the built CLI.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../packages/server/dist/main.js', import.meta.url);
if (!existsSync(main)) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  process.stderr.write(`plinth: the server is not built yet; run npm run build (or npm start) in ${root}\n`);
  process.exit(1);
}
await import(main.href);
