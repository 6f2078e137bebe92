import { type HttpRequest, send } from '@plinth/sdk';
import { renderChain, runChain, type Step } from '../../lib/rest';
import type { Caller } from '../../lib/search';
import { curlSnippet, renderSdk, type Secret, type SnippetCaller, VARS } from '../../lib/snippets';
import type { Callers, Exchange } from './callers';
import { type RpcPlan, renderRpc } from './rpc';
import type { TestUser } from './CallerPanel';

/** Everything a try-it needs to know about who calls. */
export interface CallSetup {
  callers: Callers;
  caller: Caller;
  /** `secret_key` is null for a role that may not have it (developer, viewer). */
  keys: { public_key: string; secret_key: string | null };
  revealed: boolean;
  user: TestUser | null;
  /** The server's `public_url`: the base of every snippet. */
  publicBase: string;
}

/** What to send: an SDK query-builder chain, or a plain request through the SDK's `send`. */
export type Job =
  | { kind: 'chain'; table: string; steps: Step[]; counted: boolean }
  | { kind: 'raw'; req: HttpRequest; sdkCode: string | null; sdkNote?: string }
  | { kind: 'rpc'; fn: string; plan: RpcPlan };

/** A request that went out, with what the snippets are made from. */
export interface Sent {
  exchange: Exchange;
  caller: SnippetCaller;
  /** The code after `await ` in the SDK snippet (null: the SDK has no call for it). */
  sdkCode: string | null;
  sdkNote?: string;
  counted: boolean;
}

/**
 * Sends a job as the chosen caller and returns the exchange the browser really had, or the
 * reason it could not be sent.
 * @example const sent = await tryIt(setup, { kind: 'chain', table: 'todos', steps, counted: false });
 */
export function tryIt(setup: CallSetup, job: Job, options: { dry?: boolean } = {}): Promise<Sent | { error: string }> {
  return setup.callers.exclusive(() => attempt(setup, job, options.dry === true));
}

/**
 * The request a job would send, built by the same SDK calls as `tryIt` but answered in the
 * browser: its snippets are those of the request the builder sends, before anything is sent.
 * @example const preview = await dryRun(setup, { kind: 'chain', table: 'todos', steps, counted: false });
 */
export function dryRun(setup: CallSetup, job: Job): Promise<Sent | { error: string }> {
  return tryIt(setup, job, { dry: true });
}

async function attempt(setup: CallSetup, job: Job, dry: boolean): Promise<Sent | { error: string }> {
  const { callers, caller, keys } = setup;
  if (caller === 'user' && !setup.user)
    return {
      error: dry
        ? 'Sign in a test user (Call as: Test user): the request carries their token.'
        : 'Sign in a test user first (Call as: Test user).',
    };
  if (caller === 'secret' && keys.secret_key === null) return { error: 'The secret key is not available for your role.' };
  // A dry run sends nothing: its snippets name the secret key by its variable until Reveal.
  if (caller === 'secret' && !setup.revealed && !dry) return { error: 'Reveal the secret key first (Call as: Secret key).' };
  const secretKey = keys.secret_key ?? '';
  const client = caller === 'secret' ? callers.secret(secretKey) : caller === 'user' ? callers.user : callers.anon;
  const log: Exchange[] = [];
  callers.sink = (e) => log.push(e);
  callers.dry = dry;
  try {
    if (job.kind === 'chain') {
      await runChain(client, job.table, job.steps);
    } else if (job.kind === 'rpc') {
      // The SDK's own rpc(), as the snippet shows it.
      let q = client.rpc(job.fn, job.plan.args, job.plan.get ? { get: true } : {}) as unknown as Record<
        string,
        (...a: unknown[]) => unknown
      >;
      for (const s of job.plan.steps) q = q[s.method](...s.args) as typeof q;
      await (q as unknown as PromiseLike<unknown>);
    } else {
      const token = caller === 'user' ? ((await callers.user.auth.getSession()).data?.session?.access_token ?? null) : null;
      await send(callers.http(caller === 'secret' ? secretKey : keys.public_key), { ...job.req, token });
    }
  } catch (err) {
    // A dry run's made-up answer may not be what the call expects: the request is what counts.
    if (!dry) return { error: `The request could not be made: ${(err as Error).message}` };
  } finally {
    callers.sink = null;
    callers.dry = false;
  }
  // The call's own request (a token refresh may have gone first).
  const wanted =
    job.kind === 'chain'
      ? `${callers.base}/api/v1/db/`
      : job.kind === 'rpc'
        ? `${callers.base}/api/v1/rpc/${encodeURIComponent(job.fn)}`
        : `${callers.base}${job.req.path}`;
  const exchange = [...log].reverse().find((e) => e.request.url.startsWith(wanted));
  if (!exchange) return { error: 'The request was not seen leaving the browser.' };
  const snippetCaller: SnippetCaller =
    caller === 'user' ? { kind: 'user', email: setup.user?.email ?? '' } : caller === 'secret' ? { kind: 'secret' } : { kind: 'anon' };
  if (job.kind === 'chain') {
    return { exchange, caller: snippetCaller, sdkCode: renderChain(job.table, job.steps), counted: job.counted };
  }
  if (job.kind === 'rpc') return { exchange, caller: snippetCaller, sdkCode: renderRpc(job.fn, job.plan), counted: false };
  return { exchange, caller: snippetCaller, sdkCode: job.sdkCode, sdkNote: job.sdkNote, counted: false };
}

/**
 * The cURL and SDK snippets of a sent request. Keys and the user's token become variables,
 * unless `inlineKeys` (after Reveal) asks for the keys themselves; the token never appears.
 */
export function snippetsOf(sent: Sent, setup: CallSetup, inlineKeys: boolean): { curl: string; sdk: string } {
  const secrets: Secret[] = [];
  if (!inlineKeys) {
    if (setup.keys.secret_key) secrets.push({ value: setup.keys.secret_key, variable: VARS.secretKey });
    secrets.push({ value: setup.keys.public_key, variable: VARS.publicKey });
  }
  const auth = sent.exchange.request.headers.find(([k]) => k === 'authorization')?.[1];
  const token = auth?.startsWith('Bearer ') ? auth.slice(7) : null;
  if (token && token !== setup.keys.secret_key && token !== setup.keys.public_key) secrets.push({ value: token, variable: VARS.userToken });
  const curl = curlSnippet(sent.exchange.request, { calledBase: setup.callers.base, publicBase: setup.publicBase, secrets });
  const inline = inlineKeys ? (sent.caller.kind === 'secret' ? setup.keys.secret_key : setup.keys.public_key) : null;
  const sdk = sent.sdkCode
    ? renderSdk(sent.caller, setup.publicBase, inline, sent.sdkCode, sent.counted)
    : '// The SDK has no call for this endpoint: use the cURL request (or fetch) as it is.';
  return { curl, sdk };
}
