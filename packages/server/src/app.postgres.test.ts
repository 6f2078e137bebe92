import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Plinth, buildApp } from './app.js';
import { loadConfig } from './config/index.js';
import { type TestDbTarget, freshDbTarget } from '../test/db.js';
import { type GitHubFake, startGitHub } from '../test/oauth.js';

describe('several instances on one PostgreSQL', () => {
  let target: TestDbTarget;
  let instances: Plinth[] = [];
  let gh: GitHubFake;
  beforeAll(async () => {
    target = await freshDbTarget();
    gh = await startGitHub('multi-client', 'multi-secret');
  });
  afterAll(async () => {
    await Promise.all(instances.map((p) => p.close()));
    await target.cleanup();
    await gh?.stop();
  });

  it('two instances starting at once migrate once and share keys and signing key', async () => {
    const config = loadConfig(
      { LOG_LEVEL: 'silent', STATEMENT_TIMEOUT_MS: '500', OAUTH_GITHUB_URL: gh.url, OAUTH_GITHUB_API_URL: gh.url },
      { databaseUrl: target.databaseUrl, port: 0 },
    );
    instances = await Promise.all([0, 1].map(() => buildApp({ config, logger: pino({ level: 'silent' }) })));
    const [a, b] = instances;
    expect(a.keys).toEqual(b.keys);
    expect(a.tokens.jwks()).toEqual(b.tokens.jwks());
    const { rows } = await a.db.query<{ n: number }>('select count(*)::int as n from plinth.schema_migrations where version = 1');
    expect(rows[0].n).toBe(1);
    // A token signed by one instance is accepted by the other.
    const token = (await a.tokens.sign({ sub: crypto.randomUUID() }, 3600)).token;
    await expect(b.tokens.verify(token)).resolves.toMatchObject({ payload: { role: 'authenticated' } });
  }, 60_000);

  it('a statement over the timeout is cancelled: 400 statement_timeout', async () => {
    const [a] = instances;
    const res = await a.app.inject({
      method: 'POST',
      url: '/api/v1/sql',
      headers: { authorization: `Bearer ${a.keys.secretKey}` },
      payload: { query: 'select pg_sleep(3)' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('statement_timeout');
  });

  it('a script that manages its own transaction runs on a connection of its own', async () => {
    const [a] = instances;
    const run = (query: string) =>
      a.app.inject({ method: 'POST', url: '/api/v1/sql', headers: { authorization: `Bearer ${a.keys.secretKey}` }, payload: { query } });
    const res = await run(
      'create table own_tx (v int); begin; insert into own_tx values (1); commit; set role anon; select current_user as who',
    );
    expect(res.statusCode).toBe(200);
    // The role it set did not stay on a pooled connection.
    for (let i = 0; i < 5; i++) {
      const who = await a.db.query<{ who: string }>('select current_user as who');
      expect(who.rows[0].who).not.toBe('anon');
    }
  });

  it('a social sign-in started on one instance finishes on the other, once', async () => {
    const [a, b] = instances;
    await a.settings.updateAuth({
      allowed_redirect_urls: ['https://app.example.com'],
      providers: { github: { enabled: true, client_id: 'multi-client', client_secret: 'multi-secret' } },
    });
    // The other instance hears the change through NOTIFY.
    for (let i = 0; i < 50 && !b.settings.auth().providers.github.enabled; i++) await new Promise((r) => setTimeout(r, 50));
    const started = await a.app.inject({ method: 'GET', url: '/v1/auth/oauth/github?redirect_url=https://app.example.com/cb' });
    expect(started.statusCode, started.body).toBe(302);
    const cookie = String(started.headers['set-cookie']).split(';')[0];
    const atProvider = await fetch(String(started.headers.location), { redirect: 'manual' });
    const cb = new URL(String(atProvider.headers.get('location')));
    const finish = (p: Plinth) => p.app.inject({ method: 'GET', url: `${cb.pathname}${cb.search}`, headers: { cookie } });
    const done = await finish(b);
    expect(done.statusCode, done.body).toBe(302);
    const fragment = new URLSearchParams(new URL(String(done.headers.location)).hash.slice(1));
    await expect(a.tokens.verify(fragment.get('access_token') ?? '')).resolves.toMatchObject({ payload: { role: 'authenticated' } });
    const again = await finish(a);
    expect([again.statusCode, again.json().code]).toEqual([400, 'invalid_state']);
  });
});
