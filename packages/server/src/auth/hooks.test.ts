import { describe, expect, it } from 'vitest';
import type { Db } from '../db/index.js';
import { createHookRunner, type FunctionHookRunner, hookTarget } from './hooks.js';

// The hook runner's targets (auth/hooks.ts); the SQL-function hooks end to end are in
// supabase/auth/hooks.test.ts.
const noDb = {} as Db;

describe('hook targets', () => {
  it('reads pg-functions:// of the project’s schemas and function:<name>; refuses the rest with a sentence', () => {
    expect(hookTarget('pg-functions://postgres/public/claims')).toEqual({ kind: 'sql', schema: 'public', name: 'claims' });
    expect(hookTarget('function:access-token')).toEqual({ kind: 'function', name: 'access-token' });
    expect(hookTarget(null)).toBeNull();
    for (const bad of [
      'pg-functions://postgres/auth/x',
      'pg-functions://postgres/public/x"; drop',
      'https://example.com',
      'function:../x',
      3,
    ])
      expect(typeof hookTarget(bad), String(bad)).toBe('string');
  });
});

describe('function:<name> hooks', () => {
  it('call the plugged-in runner with the event and read its JSON answer', async () => {
    const calls: Array<[string, string]> = [];
    const runner: FunctionHookRunner = async (name, body) => {
      calls.push([name, body]);
      return { status: 200, body: JSON.stringify({ claims: { plan: 'pro' } }) };
    };
    const hooks = createHookRunner(noDb, () => runner);
    expect(await hooks.run({ kind: 'function', name: 'claims' }, { user_id: 'u' }, null)).toEqual({ claims: { plan: 'pro' } });
    expect(calls).toEqual([['claims', '{"user_id":"u"}']]);
  });

  it('fail when no functions are served, when the function answers non-2xx, or answers no JSON', async () => {
    await expect(createHookRunner(noDb, () => null).run({ kind: 'function', name: 'x' }, {}, null)).rejects.toThrow(/no functions/);
    const status = (s: number, body: string) => createHookRunner(noDb, () => async () => ({ status: s, body }));
    await expect(status(500, '{}').run({ kind: 'function', name: 'x' }, {}, null)).rejects.toThrow(/answered 500/);
    await expect(status(200, 'oops').run({ kind: 'function', name: 'x' }, {}, null)).rejects.toThrow(SyntaxError);
  });
});
