import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findProject, loadConfig } from '../config/index.js';
import { createPrincipalResolver, createSupabaseKeys } from '../http/index.js';
import { parseArgs } from './args.js';
import { check, statusOf } from './status.js';

// `plinth status` in a Supabase CLI folder (issue 33) prints what `supabase status` prints, and
// the keys it prints are keys the server takes.
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function folder(toml: string): string {
  const d = mkdtempSync(join(tmpdir(), 'plinth-sbstatus-'));
  dirs.push(d);
  mkdirSync(join(d, 'supabase'));
  writeFileSync(join(d, 'supabase', 'config.toml'), toml);
  return d;
}
const DEMO_ANON =
  'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpc3MiOiJzdXBhYmFzZS1kZW1vIiwicm9sZSI6ImFub24iLCJleHAiOjE5ODM4MTI5OTZ9.CRXP1A7WOeoJeXxjNni43kdQwgnWNReilDMblYTn_I0';

describe('plinth status in a Supabase folder', () => {
  it("prints the API URL and the CLI's local keys, which the server accepts", async () => {
    const d = folder('[api]\nport = 54400\n');
    const config = loadConfig({}, { project: findProject(d, {}) }, d);
    const rows = Object.fromEntries((await statusOf(config)).map(([k, , v]) => [k, v]));
    expect(rows).toMatchObject({
      API_URL: 'http://127.0.0.1:54400',
      JWT_SECRET: 'super-secret-jwt-token-with-at-least-32-characters-long',
      ANON_KEY: DEMO_ANON,
      PUBLISHABLE_KEY: 'sb_publishable_ACJWlzQHlZjBrEguHvfOxg_3BJgxAaH',
    });
    expect(rows.DB_URL).toBeUndefined();
    const who = createPrincipalResolver(
      { publicKey: 'pk_x', secretKey: 'sk_x' },
      async () => {
        throw new Error('not a Plinth token');
      },
      createSupabaseKeys(config.project?.supabase?.settings, config.host) ?? undefined,
    );
    expect((await who(rows.ANON_KEY, undefined)).role).toBe('anon');
    expect((await who(rows.SERVICE_ROLE_KEY, undefined)).role).toBe('service');
    expect((await who(rows.SECRET_KEY, undefined)).role).toBe('service');
  });

  it("prints the keys of the folder's own secret, no sb_ keys off loopback, the database without its password", async () => {
    const d = folder('[auth]\njwt_secret = "a-project-secret-of-at-least-thirty-two-characters"\n');
    const config = loadConfig(
      { HOST: '0.0.0.0', DATABASE_URL: 'postgres://app:hunter2@db.internal:5433/app' },
      { project: findProject(d, {}) },
      d,
    );
    const rows = Object.fromEntries((await statusOf(config)).map(([k, , v]) => [k, v]));
    expect(rows.ANON_KEY).not.toBe(DEMO_ANON);
    expect(rows.PUBLISHABLE_KEY).toBeUndefined();
    expect(rows.DB_URL).toBe('postgresql://db.internal:5433/app');
    expect(JSON.stringify(rows)).not.toContain('hunter2');
  });

  it('takes -o env as the Supabase CLI does, and refuses an unknown format', () => {
    expect(() => check(parseArgs(['status', '-o', 'env']))).not.toThrow();
    expect(() => check(parseArgs(['status', '--output', 'json']))).not.toThrow();
    expect(() => check(parseArgs(['status', '-o', 'yaml']))).toThrow(/prints pretty, env, json, not "yaml"/);
  });
});
