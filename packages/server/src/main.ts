#!/usr/bin/env node
// The process entry of `plinth`: the CLI (src/cli/) decides the rest. Kept this small so that a
// command loads only the modules it needs (`plinth help` or `keys` do not load the server).
import module from 'node:module';
import { runCli } from './cli/index.js';

// Node 22.8+: V8 keeps the compiled modules in the temp folder, so a restart does not compile
// the server's modules again (its CPU 3.2 → 3.0 s on Node 22, the 2-core CI machine; issue 32).
// Node 20 has no such cache: nothing happens there.
(module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
runCli(process.argv.slice(2));
