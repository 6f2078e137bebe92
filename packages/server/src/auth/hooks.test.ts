import { describe, expect, it } from 'vitest';
import type { Db } from '../db/index.js';
import { createHookRunner, type FunctionHookRunner, hookTarget, signHook } from './hooks.js';

// The hook runner's targets (auth/hooks.ts); the SQL-function hooks end to end are in
// supabase/auth/hooks.test.ts.
const noDb = {} as Db;

describe('hook targets', () => {
  it('reads pg-functions:// of the project’s schemas and function:<name>; refuses the rest with a sentence', () => {
    expect(hookTarget('pg-functions://postgres/public/claims')).toEqual({ kind: 'sql', schema: 'public', name: 'claims' });
    expect(hookTarget('function:access-token')).toEqual({ kind: 'function', name: 'access-token' });
    expect(hookTarget(null)).toBeNull();
    // An http(s) URL: the send hooks only (createAuthHooks refuses it for the other two).
    expect(hookTarget('https://hooks.example.com/send')).toEqual({ kind: 'http', url: 'https://hooks.example.com/send', secrets: [] });
    for (const bad of [
      'pg-functions://postgres/auth/x',
      'pg-functions://postgres/public/x"; drop',
      'function:../x',
      'ftp://example.com/x',
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

describe('http(s) send hooks: the Standard Webhooks signature', () => {
  it('signs as the Standard Webhooks reference does (its published test vector)', () => {
    const headers = signHook(
      '{"test": 2432232314}',
      ['v1,whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
      1614265330,
      'msg_p5jXN8AQM9LWM0D4loKWxJek',
    );
    expect(headers).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('gives one signature per secret (a secret being rotated), space-separated', () => {
    const sig = signHook('{}', ['v1,whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'v1,whsec_c2Vjb25kLXNlY3JldC1rZXktaGVyZQ=='], 1, 'msg_1')[
      'webhook-signature'
    ];
    expect(sig.split(' ')).toHaveLength(2);
    expect(sig.split(' ').every((s) => s.startsWith('v1,'))).toBe(true);
  });
});
