/**
 * `plinth gen types [--out F] [--url URL --key K]`: the TypeScript types of the tables, for
 * `createClient<Database>()`; from a running server's URL (any folder, no project needed), from
 * the project's running server, or from its database opened here.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Config } from '../config/index.js';
import { type Args, flagValue, UsageError } from './args.js';
import type { CommandContext } from './context.js';
import { fail } from './output.js';
import { callServer, serverOf } from './running.js';

/** The OpenAPI document: from the running embedded server, else from an in-process Plinth. */
async function openApiDocument(config: Config): Promise<object> {
  const server = serverOf(config);
  if (server) {
    const { status, body } = await callServer(config, server, 'GET', '/api/v1/openapi.json');
    if (status !== 200) fail(`the server answered ${status} for /api/v1/openapi.json`);
    return body;
  }
  const { buildApp } = await import('../app.js');
  const plinth = await buildApp({ config: { ...config, logLevel: 'warn' } });
  try {
    const res = await plinth.app.inject({ url: '/api/v1/openapi.json', headers: { authorization: `Bearer ${plinth.keys.secretKey}` } });
    return res.json() as object;
  } finally {
    await plinth.close();
  }
}

/** The types from a server's URL: --key, else PLINTH_SECRET_KEY. */
async function fromUrl(url: string, key: string | undefined): Promise<string> {
  if (!key) throw new UsageError('--url needs the secret key: --key sk_… (or PLINTH_SECRET_KEY)');
  const { generateTypesFromServer } = await import('@plinth/sdk/gen');
  const { data, error } = await generateTypesFromServer(url, key);
  if (error) {
    const why =
      error.status === 0 ? `it does not answer (${error.message})` : `it answered ${error.status} ${error.code}: ${error.message}`;
    fail(`cannot read the tables of ${url}: ${why}`);
  }
  return data;
}

export function check(args: Args): void {
  if (args.positional[0] !== 'types') throw new UsageError('plinth gen makes types only: plinth gen types [--out file.ts]');
  const url = flagValue(args, 'url');
  if (url === undefined && args.flags.key !== undefined) {
    throw new UsageError('--key goes with --url: plinth gen types --url http://localhost:8080 --key sk_…');
  }
  if (url !== undefined && !/^https?:\/\/[^/]/.test(url)) {
    throw new UsageError(`--url must be the server's base URL, e.g. --url http://localhost:8080, got "${url}"`);
  }
}

export async function run({ args, config }: CommandContext): Promise<void> {
  const url = flagValue(args, 'url');
  const source =
    url !== undefined
      ? await fromUrl(url, flagValue(args, 'key') ?? config.secretKey ?? undefined)
      : (await import('@plinth/sdk/gen')).generateTypes(await openApiDocument(config));
  const out = flagValue(args, 'out');
  if (out === undefined) {
    process.stdout.write(source);
    return;
  }
  const file = resolve(out);
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, source);
  } catch (err) {
    fail(`cannot write ${out}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  process.stderr.write(`wrote ${out}\n`);
}
