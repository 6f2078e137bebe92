#!/usr/bin/env node
// The process entry of `plinth`: the CLI (src/cli/) decides the rest. Kept this small so that a
// command loads only the modules it needs (`plinth help` or `keys` do not load the server).
import { runCli } from './cli/index.js';

runCli(process.argv.slice(2));
