#!/usr/bin/env node
// `npx plinth` from the repository root: the CLI of packages/server (the `plinth` package),
// which builds what changed first for `start` and `dev` (packages/server/bin/plinth.mjs).
await import('../packages/server/bin/plinth.mjs');
