import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OverloadDoc } from '../../lib/openapi';
import { argValue, planRpc, renderRpc } from './rpc';

// The function call builder: fields to arguments (typed by the function's own argument types,
// anything unparsable sent as typed for the server to refuse), and the SDK code shown.

const add: OverloadDoc = {
  signature: 'add(a integer, b integer default)',
  args: [
    { name: 'a', kind: 'integer', type: 'integer', required: true },
    { name: 'b', kind: 'integer', type: 'integer', required: false },
  ],
  set: false,
  volatility: 'immutable',
};
const search: OverloadDoc = {
  signature: 'search(q text, tags text[], opts jsonb default)',
  args: [
    { name: 'q', kind: 'string', type: 'string', required: true },
    { name: 'tags', kind: 'array', type: 'array', required: true },
    { name: 'opts', kind: 'json', type: 'json', required: false },
  ],
  set: true,
  volatility: 'stable',
};

describe('function calls in the API explorer', () => {
  it('types the fields by the arguments, leaves out empty optional ones, asks for required ones', () => {
    expect(planRpc(add, { fields: { a: '2', b: '' }, get: false, limit: undefined }, true)).toEqual({
      plan: { args: { a: 2 }, get: false, steps: [] },
    });
    expect(planRpc(add, { fields: { a: '' }, get: false, limit: undefined }, true)).toEqual({ error: 'Give a (integer).' });
    expect(planRpc(add, { fields: { a: 'two' }, get: true, limit: 5 }, true)).toEqual({
      plan: { args: { a: 'two' }, get: true, steps: [] },
    });
    expect(planRpc(search, { fields: { q: '', tags: '["a","b"]', opts: '{"x":1}' }, get: true, limit: 10 }, false)).toEqual({
      plan: { args: { q: '', tags: ['a', 'b'], opts: { x: 1 } }, get: false, steps: [{ method: 'limit', args: [10] }] },
    });
  });

  it('writes the SDK call that sends the same request', () => {
    expect(renderRpc('add', { args: { a: 1, b: 2 }, get: false, steps: [] })).toBe("client\n  .rpc('add', { a: 1, b: 2 })");
    expect(renderRpc('search', { args: { q: 'x' }, get: true, steps: [{ method: 'limit', args: [10] }] })).toBe(
      "client\n  .rpc('search', { q: 'x' }, { get: true })\n  .limit(10)",
    );
  });

  it('never throws on any text, and a number typed is sent as that number (property)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('integer', 'number', 'boolean', 'json', 'array', 'object', 'string') as fc.Arbitrary<'json'>,
        fc.string(),
        (kind, text) => {
          expect(() => argValue(kind, text)).not.toThrow();
        },
      ),
    );
    fc.assert(
      fc.property(fc.integer(), (n) => {
        expect(argValue('integer', String(n))).toBe(n);
      }),
    );
  });
});
