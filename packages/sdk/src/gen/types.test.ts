import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { generateTypes, tsType } from './types.js';

const fixture = new URL('../../test/fixtures/openapi.json', import.meta.url);
const golden = new URL('../../test/types/database.generated.ts', import.meta.url);

describe('generateTypes', () => {
  it('matches the checked-in output that the type test compiles (UPDATE_GOLDEN=1 rewrites it)', () => {
    const source = generateTypes(JSON.parse(readFileSync(fixture, 'utf8')));
    if (process.env.UPDATE_GOLDEN) writeFileSync(golden, source);
    expect(source).toBe(readFileSync(golden, 'utf8'));
  });

  it('takes tables from /api/v1/db paths, views from paths without post, and skips auth schemas', () => {
    const source = generateTypes(JSON.parse(readFileSync(fixture, 'utf8')));
    expect(source).toMatch(/Tables: \{\n {6}comments: \{[\s\S]*\n {6}lists: \{[\s\S]*\n {6}profiles: \{[\s\S]*\n {6}todos: \{/);
    expect(source).toMatch(/Views: \{\n {6}open_todos: \{\n {8}Row: \{/);
    expect(source).not.toContain('User');
  });

  it('writes Relationships from x-plinth-relationships and Functions from x-plinth-overloads', () => {
    const source = generateTypes(JSON.parse(readFileSync(fixture, 'utf8')));
    expect(source).toContain("          comments: { table: 'comments'; cardinality: 'many' };");
    expect(source).toContain("          'lists!todos_list_id_fkey': { table: 'lists'; cardinality: 'one' };");
    // A table without relations embeds nothing (rather than anything, unchecked).
    expect(source).toMatch(/ {6}profiles: \{[\s\S]*?Relationships: Record<never, never>;/);
    expect(source).toContain("        Returns: Database['public']['Tables']['todos']['Row'];\n        SetOf: true;");
    expect(source).toMatch(/ {6}greet:\n {8}\| \{\n {12}Args: \{\n {14}name: string;/);
    expect(source).toContain('      touch: {\n        Args: Record<string, never>;\n        Returns: null;');
  });

  it('falls back to every object schema without paths, and honours x-plinth-kind', () => {
    const source = generateTypes({
      components: {
        schemas: {
          a: { type: 'object', properties: { x: { type: 'integer' } }, required: ['x'] },
          v: { type: 'object', 'x-plinth-kind': 'view', properties: {} },
          n: { type: 'string' },
        },
      },
    });
    expect(source).toContain('      a: {\n        Row: {\n          x: number;\n        };\n        Insert: {\n          x: number;');
    expect(source).toContain('      v: {\n        Row: Record<string, never>;\n      };');
    expect(source).not.toContain(' n: {');
  });

  it("reads a path's schemas through its $refs: rows from get, the create body (and what it requires) from post", () => {
    const json = (schema: object) => ({ content: { 'application/json': { schema } } });
    const source = generateTypes({
      paths: {
        '/api/v1/db/odd%20name': {
          get: { responses: { '200': json({ type: 'array', items: { $ref: '#/components/schemas/odd_name' } }) } },
          post: { requestBody: json({ oneOf: [{ $ref: '#/components/schemas/odd_name.insert' }] }) },
        },
      },
      components: {
        schemas: {
          odd_name: {
            type: 'object',
            properties: { id: { type: 'integer' }, note: { type: ['string', 'null'] } },
            required: ['id', 'note'],
          },
          'odd_name.insert': {
            type: 'object',
            properties: { id: { type: 'integer' }, note: { type: ['string', 'null'] } },
            required: ['id'],
          },
        },
      },
    });
    expect(source).toContain(
      "      'odd name': {\n        Row: {\n          id: number;\n          note: string | null;\n        };\n        Insert: {\n          id: number;\n          note?: string | null;",
    );
  });

  it.each([
    [{ type: 'string', format: 'uuid' }, 'string'],
    [{ type: ['integer', 'null'] }, 'number | null'],
    [{ type: 'string', nullable: true }, 'string | null'],
    [{ type: 'array', items: { type: ['string', 'null'] } }, '(string | null)[]'],
    [{ type: 'array' }, 'Json[]'],
    [{ type: 'object' }, '{ [key: string]: Json | undefined }'],
    [{ enum: ['a', "it's", null], type: ['string', 'null'] }, "'a' | 'it\\'s' | null"],
    [{}, 'Json'],
    [{ oneOf: [{ type: 'string' }, { type: 'integer' }] }, 'string | number'],
  ])('maps %j to %s', (schema, expected) => {
    expect(tsType(schema as Parameters<typeof tsType>[0])).toBe(expected);
  });
});
