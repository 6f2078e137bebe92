import type { ArgDoc, FunctionDoc, OverloadDoc } from '../../lib/openapi';
import { js, type Step } from '../../lib/rest';

/**
 * The API explorer's function call (`/api/v1/rpc/{function}`, docs/api.md "Functions"): the
 * argument fields to the arguments `client.rpc()` sends, and the SDK code that sends them. No
 * DOM: unit-tested in Node.
 */

export interface RpcRequest {
  /** Each argument's field as typed (an empty field of an optional argument leaves it out). */
  fields: Record<string, string>;
  get: boolean;
  limit: number | undefined;
}

export interface RpcPlan {
  args: Record<string, unknown>;
  get: boolean;
  /** After `rpc()`: `limit()` for a function that returns a set. */
  steps: Step[];
}

/**
 * A field's text as the JSON value of its argument's kind; what does not parse is sent as typed,
 * so the server's own refusal (`invalid_value`) is what the user sees, as their app would.
 * @example argValue('integer', '42') // 42
 * @example argValue('json', '{"a":1}') // { a: 1 }
 */
export function argValue(kind: ArgDoc['kind'], text: string): unknown {
  const t = text.trim();
  if (kind === 'integer' || kind === 'number') return t !== '' && Number.isFinite(Number(t)) ? Number(t) : text;
  if (kind === 'boolean') return t === 'true' ? true : t === 'false' ? false : text;
  if (kind === 'json' || kind === 'array' || kind === 'object') {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

/**
 * The call the fields make, or the first reason they make none.
 * @example planRpc(add.overloads[0], { fields: { a: '1', b: '2' }, get: false, limit: undefined })
 *   // { plan: { args: { a: 1, b: 2 }, get: false, steps: [] } }
 */
export function planRpc(overload: OverloadDoc, r: RpcRequest, mayGet: boolean): { plan: RpcPlan } | { error: string } {
  const args: Record<string, unknown> = {};
  for (const a of overload.args) {
    const text = r.fields[a.name] ?? '';
    if (text === '' && a.kind !== 'string') {
      if (a.required) return { error: `Give ${a.name} (${a.type}).` };
      continue;
    }
    if (text === '' && !a.required) continue;
    args[a.name] = argValue(a.kind, text);
  }
  const steps: Step[] = overload.set && r.limit !== undefined ? [{ method: 'limit', args: [r.limit] }] : [];
  return { plan: { args, get: r.get && mayGet, steps } };
}

/**
 * The SDK call of a plan, as the snippet shows it.
 * @example renderRpc('add', { args: { a: 1 }, get: false, steps: [] }) // "client\n  .rpc('add', { a: 1 })"
 */
export function renderRpc(fn: string, plan: RpcPlan, client = 'client'): string {
  const args = [js(fn), js(plan.args, Object.keys(plan.args).length > 2 ? 2 : 0, 1), ...(plan.get ? ['{ get: true }'] : [])];
  const lines = [client, `  .rpc(${args.join(', ')})`];
  for (const s of plan.steps) lines.push(`  .${s.method}(${s.args.map((a) => js(a)).join(', ')})`);
  return lines.join('\n');
}

/** A function's starting fields: each argument empty. */
export const emptyFields = (fn: FunctionDoc, overload: number): Record<string, string> =>
  Object.fromEntries((fn.overloads[overload]?.args ?? []).map((a) => [a.name, '']));
