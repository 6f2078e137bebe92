import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../config/index.js';
import { parseProjectFile } from '../../config/project.js';
import { parseSupabaseConfig, projectSettingsOf } from '../../config/supabase.js';
import { createTestServer, type TestServer } from '../../../test/harness.js';
import { restClient } from '../../../test/supabase-rest.js';

// Schemas other than public on /rest/v1 (`Accept-Profile` / `Content-Profile`, postgrest-js's
// `.schema()`): only the ones the project exposes, read and written through the same planner as
// public, under the caller's privileges and policies; Plinth's own schemas never.
let t: TestServer;
let anon: ReturnType<typeof restClient>;

const SCHEMA = `
create schema crm;
create type crm.stage as enum ('lead', 'won');
create table crm.deals (id int primary key, title text not null, stage crm.stage not null default 'lead', secret boolean not null default false);
create table crm.notes (id int primary key, deal_id int not null references crm.deals, body text not null);
create function crm.stage_of(deal int) returns crm.stage language sql stable as $$ select stage from crm.deals where id = deal $$;
create table crm.hidden (id int primary key);
alter table crm.deals enable row level security;
create policy visible on crm.deals using (not secret) with check (not secret);
grant usage on schema crm to anon;
grant select, insert, update on crm.deals to anon;
grant select on crm.notes to anon;
grant execute on function crm.stage_of(int) to anon;
create table public.deals (id int primary key, title text);
grant select on public.deals to anon;
create policy all_public on public.deals for select using (true);
insert into public.deals values (1, 'a public deal');
insert into crm.deals values (1, 'Acme', 'won', false), (2, 'Globex', 'lead', false), (3, 'Hidden Co', 'lead', true);
insert into crm.notes values (1, 1, 'signed'), (2, 1, 'paid');
`;

beforeAll(async () => {
  t = await createTestServer({}, { project: { api: { schemas: ['public', 'crm'] } } });
  // As a migration runs (the database's owner): the SQL runner may not create schemas on PostgreSQL.
  await t.db.script(SCHEMA);
  await t.schema.reload();
  anon = restClient(t, t.as.anon);
});
afterAll(() => t?.stop());

describe('Accept-Profile and Content-Profile on /rest/v1', () => {
  it('reads a table of an exposed schema, with embedding and filters, under its policies', async () => {
    const { data, error } = await anon
      .schema('crm')
      .from('deals')
      .select('title, stage, notes(body)')
      .order('id')
      .order('id', { referencedTable: 'notes' });
    expect(error).toBeNull();
    expect(data).toEqual([
      { title: 'Acme', stage: 'won', notes: [{ body: 'signed' }, { body: 'paid' }] },
      { title: 'Globex', stage: 'lead', notes: [] },
    ]);
    // The same name in public is another table.
    const pub = await anon.from('deals').select('title');
    expect(pub.data).toEqual([{ title: 'a public deal' }]);
  });

  it('writes to an exposed schema (an enum of that schema cast right), and the policy still checks', async () => {
    const ins = await anon.schema('crm').from('deals').insert({ id: 4, title: 'Initech', stage: 'won' }).select('id, stage').single();
    expect(ins.error).toBeNull();
    expect(ins.data).toEqual({ id: 4, stage: 'won' });
    const refused = await anon.schema('crm').from('deals').insert({ id: 5, title: 'Sneaky', secret: true });
    expect(refused.error?.code).toBe('42501');
    const upd = await anon.schema('crm').from('deals').update({ stage: 'won' }).eq('id', 2).select('stage');
    expect(upd.data).toEqual([{ stage: 'won' }]);
  });

  it('calls a function of an exposed schema', async () => {
    const { data, error } = await anon.schema('crm').rpc('stage_of', { deal: 1 });
    expect(error).toBeNull();
    expect(data).toBe('won');
  });

  it("answers PostgREST's errors naming the schema, and the privileges still hold", async () => {
    const missing = await anon.schema('crm').from('nope').select();
    expect(missing.error?.code).toBe('PGRST205');
    expect(missing.error?.message).toBe("Could not find the table 'crm.nope' in the schema cache");
    const closed = await anon.schema('crm').from('hidden').select();
    expect(closed.error?.code).toBe('42501');
    const fn = await anon.schema('crm').rpc('nope', {});
    expect(fn.error?.message).toBe('Could not find the function crm.nope without parameters in the schema cache');
  });

  it('refuses a schema the project does not expose, and never serves Plinth’s own', async () => {
    for (const schema of ['auth', 'storage', 'plinth', 'pg_catalog', 'nowhere']) {
      const res = await t.app.inject({ url: '/rest/v1/users?select=id', headers: { ...t.as.service, 'accept-profile': schema } });
      expect(res.statusCode, schema).toBe(406);
      expect(res.json()).toEqual({
        code: 'PGRST106',
        details: null,
        hint: null,
        message: 'The schema must be one of the following: public, crm',
      });
    }
    const write = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/users',
      headers: { ...t.as.service, 'content-profile': 'auth', 'content-type': 'application/json' },
      payload: '{"email":"x@example.com"}',
    });
    expect(write.statusCode).toBe(406);
  });

  it('echoes the profile, and serves the OpenAPI document of the asked schema', async () => {
    const res = await t.app.inject({ url: '/rest/v1/', headers: { ...t.as.anon, 'accept-profile': 'crm' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-profile']).toBe('crm');
    const paths = Object.keys(res.json().paths);
    expect(paths).toContain('/deals');
    expect(paths).toContain('/notes');
    expect(paths).not.toContain('/hidden');
  });

  it('sees a table made in an exposed schema after start', async () => {
    await t.db.script('create table crm.later (id int primary key); grant select on crm.later to anon;');
    await expect.poll(async () => (await anon.schema('crm').from('later').select()).error?.code ?? 'ok').toBe('ok');
  });
});

describe('which schemas a project may expose', () => {
  it('plinth.json api.schemas refuses Plinth’s own schemas in one line', () => {
    expect(parseProjectFile('{"api":{"schemas":["public","crm"]}}', 'plinth.json').api).toEqual({ schemas: ['public', 'crm'] });
    expect(() => parseProjectFile('{"api":{"schemas":["public","auth"]}}', 'plinth.json')).toThrow(ConfigError);
    expect(() => parseProjectFile('{"api":{"schemas":["pg_catalog"]}}', 'plinth.json')).toThrow(/pg_catalog.*remove it/);
    expect(() => parseProjectFile('{"api":{"schemas":[]}}', 'plinth.json')).toThrow(ConfigError);
  });

  it("a Supabase folder's [api] schemas are served, but not Plinth's own, with a note", () => {
    const s = parseSupabaseConfig('[api]\nschemas = ["public", "personal", "storage"]\n', '/app/supabase/config.toml', '/app/supabase', {});
    const { settings, notes } = projectSettingsOf(s);
    expect(settings.api).toEqual({ schemas: ['public', 'personal'] });
    expect(notes.some((n) => n.includes('"storage"'))).toBe(true);
  });
});
