import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultAuthSettings } from '../settings/index.js';
import { validateAuthSettings } from '../settings/validate.js';
import { ConfigError, findProject, loadConfig, parseSupabaseConfig, projectSettingsOf, SUPABASE_LOCAL_JWT_SECRET } from './index.js';

// A Supabase CLI project folder's supabase/config.toml (issue 33): read into typed settings,
// mapped onto Plinth's where Plinth has them; unknown keys ignored, a wrong type one line.
const F = '/app/supabase/config.toml';
const parse = (text: string, env: Record<string, string> = {}) => parseSupabaseConfig(text, F, '/app/supabase', env);
const refusal = (text: string) => {
  try {
    parse(text);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('supabase/config.toml', () => {
  it('an empty file takes the Supabase CLI defaults: port 54321, ./seed.sql, the local JWT secret', () => {
    const s = parse('');
    expect(s.api.port).toBe(54321);
    expect(s.api.schemas).toEqual(['public', 'graphql_public']);
    expect(s.db.seed).toEqual({ enabled: true, sql_paths: ['./seed.sql'] });
    expect(s.auth.jwt_secret).toBe(SUPABASE_LOCAL_JWT_SECRET);
    expect(s.auth.signing_keys_path).toBeNull();
  });

  it('reads the keys Plinth acts on, resolves env() and paths, and ignores keys it does not know', () => {
    const s = parse(
      `project_id = "demo"
[api]
port = 54400
schemas = ["public", "personal"]
some_future_key = { a = 1 }
[db.seed]
sql_paths = ["./seeds/a.sql", "./seeds/b.sql"]
[auth]
site_url = "http://127.0.0.1:3000"
additional_redirect_urls = ["https://127.0.0.1:3000"]
jwt_expiry = 7200
jwt_secret = "env(MY_JWT_SECRET)"
signing_keys_path = "./signing_keys.json"
enable_anonymous_sign_ins = true
[auth.email]
enable_confirmations = true
[auth.sms.test_otp]
"1234567890" = "123456"
[auth.external.google]
enabled = true
client_id = "cid"
secret = "env(GOOGLE_SECRET)"
[storage.buckets.avatars]
public = true
file_size_limit = "5MiB"
allowed_mime_types = ["image/png"]
[studio]
enabled = true
[analytics]
enabled = false
`,
      { MY_JWT_SECRET: 'a-secret-of-at-least-thirty-two-characters!' },
    );
    expect(s.project_id).toBe('demo');
    expect(s.api).toMatchObject({ port: 54400, schemas: ['public', 'personal'] });
    expect(s.db.seed.sql_paths).toEqual(['./seeds/a.sql', './seeds/b.sql']);
    expect(s.auth.jwt_secret).toBe('a-secret-of-at-least-thirty-two-characters!');
    expect(s.auth.signing_keys_path).toBe('/app/supabase/signing_keys.json');
    expect(s.auth.enable_anonymous_sign_ins).toBe(true);
    expect(s.auth.sms.test_otp).toEqual({ '1234567890': '123456' });
    // An unset variable is no value (the Supabase CLI's reading), never the literal text.
    expect(s.auth.external.google).toMatchObject({ enabled: true, client_id: 'cid', secret: null });
    expect(s.storage.buckets.avatars).toEqual({ public: true, file_size_limit: 5 * 1024 * 1024, allowed_mime_types: ['image/png'] });
    // Enabled sections Plinth does not serve are named (for the start line); disabled ones are not.
    expect(s.notActedOn).toEqual(['[studio]']);

    const { settings, notes } = projectSettingsOf(s);
    expect(settings).toMatchObject({
      port: 54400,
      data_dir: join('supabase', '.plinth'),
      migrations_dir: join('supabase', 'migrations'),
      db: { seed: [join('supabase', 'seeds/a.sql'), join('supabase', 'seeds/b.sql')] },
      storage: { buckets: { avatars: { public: true, file_size_limit: 5242880, allowed_mime_types: ['image/png'] } } },
    });
    expect(settings.auth).toMatchObject({
      allowed_redirect_urls: ['http://127.0.0.1:3000', 'https://127.0.0.1:3000'],
      session_duration_seconds: 7200,
      magic_link_enabled: true,
      magic_link_url: 'http://127.0.0.1:3000',
      anonymous_sign_in_enabled: true,
    });
    expect(projectSettingsOf(parse('[auth.email]\nenable_signup = false\n')).settings.auth).toMatchObject({
      magic_link_enabled: false,
      anonymous_sign_in_enabled: false,
    });
    expect(notes.join('\n')).toMatch(/enable_confirmations/);
    expect(notes.join('\n')).toMatch(/auth\.external \(google\)/);
  });

  it("the mapped auth settings pass Plinth's own validation (a Supabase folder's defaults never stop a start)", () => {
    const s = parse('[auth]\nminimum_password_length = 6\njwt_expiry = 600\n');
    const { settings, notes } = projectSettingsOf(s);
    expect(validateAuthSettings({ ...defaultAuthSettings(), ...(settings.auth as object) })).toEqual([]);
    expect(notes.join('\n')).toMatch(/minimum_password_length = 6: Plinth asks for at least 8/);
    expect(notes.join('\n')).toMatch(/jwt_expiry = 600/);
  });

  it('a wrong type is one line naming the key and the fix', () => {
    expect(refusal('[api]\nport = "54321"')).toBe(`config: ${F}: api.port must be a whole number from 0 to 65535, e.g. port = 54321`);
    expect(refusal('[auth]\nenable_signup = "yes"')).toMatch(/auth\.enable_signup must be true or false/);
    expect(refusal('[db.seed]\nsql_paths = "./seed.sql"')).toMatch(/db\.seed\.sql_paths must be a list of strings/);
    expect(refusal('[auth]\njwt_secret = "env(UNSET_SECRET_VAR)"')).toMatch(
      /auth\.jwt_secret reads env\(UNSET_SECRET_VAR\), which is not set/,
    );
    expect(refusal('[storage.buckets.a]\nfile_size_limit = "lots"')).toMatch(/storage\.buckets\.a\.file_size_limit must be a size/);
    expect(refusal('[api\nport = 1')).toMatch(/is not valid TOML/);
  });
});

describe('finding a Supabase project folder', () => {
  const folder = (files: Record<string, string>) => {
    const d = mkdtempSync(join(tmpdir(), 'plinth-sbcfg-'));
    dirs.push(d);
    for (const [f, text] of Object.entries(files)) {
      mkdirSync(join(d, f, '..'), { recursive: true });
      writeFileSync(join(d, f), text);
    }
    return d;
  };

  it('is found from the folder, from supabase/ and from below, and served on 127.0.0.1 at [api] port', () => {
    const d = folder({ 'supabase/config.toml': '[api]\nport = 54400\n', 'src/lib/x.ts': '' });
    for (const from of [d, join(d, 'supabase'), join(d, 'src/lib')]) {
      const p = findProject(from, {});
      expect(p?.root).toBe(d);
      expect(p?.supabase?.settings.api.port).toBe(54400);
    }
    const config = loadConfig({}, { project: findProject(d, {}) }, d);
    expect(config).toMatchObject({ port: 54400, host: '127.0.0.1', dataDir: join(d, 'supabase', '.plinth') });
    // HOST still wins, as for any project.
    expect(loadConfig({ HOST: '0.0.0.0' }, { project: findProject(d, {}) }, d).host).toBe('0.0.0.0');
  });

  it('[storage.image_transformation] enabled = false turns image transforms off, as STORAGE_IMAGE_TRANSFORMS=false does', () => {
    const on = folder({ 'supabase/config.toml': '[storage.image_transformation]\nenabled = true\n' });
    expect(loadConfig({}, { project: findProject(on, {}) }, on).storage.imageTransforms).toBe(true);
    expect(loadConfig({ STORAGE_IMAGE_TRANSFORMS: 'false' }, { project: findProject(on, {}) }, on).storage.imageTransforms).toBe(false);
    const off = folder({ 'supabase/config.toml': '[storage.image_transformation]\nenabled = false\n' });
    expect(loadConfig({}, { project: findProject(off, {}) }, off).storage.imageTransforms).toBe(false);
    expect(() => parse('[storage.image_transformation]\nenabled = "no"\n')).toThrow(/storage\.image_transformation\.enabled/);
  });

  it('plinth.json wins in the same folder; env() reads supabase/.env', () => {
    const d = folder({ 'supabase/config.toml': '[auth]\njwt_secret = "env(SB_SECRET)"\n', 'plinth.json': '{}' });
    expect(findProject(d, {})?.supabase).toBeUndefined();
    const e = folder({
      'supabase/config.toml': '[auth]\njwt_secret = "env(SB_SECRET)"\n',
      'supabase/.env': 'SB_SECRET=from-the-supabase-env-file\n',
    });
    expect(findProject(e, {})?.supabase?.settings.auth.jwt_secret).toBe('from-the-supabase-env-file');
    expect(findProject(e, { SB_SECRET: 'the-environment-wins-over-the-file' })?.supabase?.settings.auth.jwt_secret).toBe(
      'the-environment-wins-over-the-file',
    );
  });
});
