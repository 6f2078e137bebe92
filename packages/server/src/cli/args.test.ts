import { describe, expect, it } from 'vitest';
import { databaseUrl, databaseWhere } from '../config/index.js';
import { parseArgs, UsageError } from './args.js';

describe('plinth command line', () => {
  it.each([
    [['start', '--port', '9000', '--data-dir=./d'], { command: 'start', positional: [], flags: { port: '9000', 'data-dir': './d' } }],
    [['start', '--migrate'], { command: 'start', positional: [], flags: { migrate: true } }],
    [
      ['start', '--migrate', 'db/migrations', '--port', '1'],
      { command: 'start', positional: [], flags: { migrate: 'db/migrations', port: '1' } },
    ],
    [['start', '--migrate', '--port', '1'], { command: 'start', positional: [], flags: { migrate: true, port: '1' } }],
    // A query that starts with a comment is a query, not a flag.
    [['sql', '-- why\nselect 1', '--data-dir', 'd'], { command: 'sql', positional: ['-- why\nselect 1'], flags: { 'data-dir': 'd' } }],
    [['keys', '--json'], { command: 'keys', positional: [], flags: { json: true } }],
    [[], { command: 'help', positional: [], flags: {} }],
    [['start', '--help'], { command: 'help', positional: ['start'], flags: {} }],
  ])('%j', (argv, expected) => {
    expect(parseArgs(argv)).toEqual(expected);
  });

  it.each([[['keys', '--json=yes']], [['migrate', 'a', 'b']], [['start', '--data-dir=']], [['nope']]])('%j is a usage error', (argv) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
  });
});

describe('DATABASE_URL in messages', () => {
  it('names host, port and database, never the user or password', () => {
    expect(databaseWhere('postgres://app:s3cret@db.example.com/app')).toBe('db.example.com:5432/app');
    expect(databaseWhere('postgresql://u:p@10.0.0.5:6543/x?sslmode=require')).toBe('10.0.0.5:6543/x');
    expect(databaseUrl(' postgres://u:p@h/d ')).toBe('postgres://u:p@h/d');
    expect(databaseUrl('')).toBeNull();
    expect(() => databaseUrl('postgres:///app')).toThrow(/DATABASE_URL has no host/);
    expect(() => databaseUrl('postgres://u:s3cret@')).toThrow(/DATABASE_URL is not a URL/);
  });
});
