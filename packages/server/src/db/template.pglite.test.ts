import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { loadConfig } from '../config/index.js';
import { type Migration, systemMigrations } from './migrate.js';
import { openPglite, pgliteTemplate } from './pglite.js';
import { ensureTemplate, packTemplate, templateArchive, templateKey } from './template.js';

// A new embedded project is a copy of one template made once (db/template.ts): everything a
// project must not share with another is made after the copy, at its first start.
const root = mkdtempSync(join(tmpdir(), 'plinth-template-test-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function firstStart(name: string) {
  const dataDir = join(root, name);
  const config = loadConfig({ LOG_LEVEL: 'silent', PUBLIC_URL: 'http://localhost:8080' }, { dataDir, port: 0 }, dataDir);
  const plinth = await buildApp({ config });
  const q = async (sql: string) => (await plinth.db.query<Record<string, unknown>>(sql)).rows;
  const facts = {
    keys: plinth.keys,
    setupToken: plinth.admin.setupToken,
    signingKeys: (await q('select kid, public_jwk::text as jwk from auth.signing_keys')).map((r) => `${r.kid} ${r.jwk}`),
    system: (await q('select system_identifier::text as id from pg_control_system()'))[0].id,
    migrations: (await q('select version from plinth.schema_migrations order by version')).map((r) => Number(r.version)),
  };
  await plinth.close();
  return facts;
}

describe('the template a new embedded project starts from', () => {
  it('two new projects are copies of one migrated template, yet get keys, signing keys and setup links of their own', async () => {
    const a = await firstStart('a');
    const b = await firstStart('b');
    // One template: initdb would have given each its own system identifier.
    expect(a.system).toBe(b.system);
    expect(a.migrations).toEqual(systemMigrations().map((m) => m.version));
    expect(a.keys.publicKey).not.toBe(b.keys.publicKey);
    expect(a.keys.secretKey).not.toBe(b.keys.secretKey);
    expect(a.signingKeys).toHaveLength(1);
    expect(b.signingKeys).toHaveLength(1);
    expect(a.signingKeys[0]).not.toBe(b.signingKeys[0]);
    expect(a.setupToken).toBeTruthy();
    expect(a.setupToken).not.toBe(b.setupToken);
  });

  it('holds no keys or signing keys of its own: only the database, nothing of a project', async () => {
    const template = await pgliteTemplate();
    expect(readdirSync(join(template, '..'))).toEqual(['pgdata']);
    const copy = join(root, 'copy');
    const db = await openPglite(copy, { fromTemplate: true });
    try {
      const count = async (table: string) => Number((await db.query<{ n: number }>(`select count(*)::int as n from ${table}`)).rows[0].n);
      for (const table of ['auth.signing_keys', 'plinth.admins', 'plinth.admin_setup_tokens', 'auth.users']) {
        expect(await count(table), table).toBe(0);
      }
    } finally {
      await db.close();
    }
    expect(existsSync(join(copy, 'keys.json'))).toBe(false);
  });

  it('a changed migration set gets a template of its own, never the one made before the change', async () => {
    const probe: Migration = { version: 9999, name: '9999_probe', sql: 'create table plinth.template_probe (id int);' };
    const base = systemMigrations();
    // Any change of a migration's text is a new key, as a new file is.
    const edited = base.map((m, i) => (i === base.length - 1 ? { ...m, sql: `${m.sql}\n-- edited` } : m));
    expect(templateKey(edited)).not.toBe(templateKey(base));
    expect(templateKey([...base, probe])).not.toBe(templateKey(base));

    // The initdb-only template (the test run made it, test/global-setup.ts), and one with the probe.
    const plain = await pgliteTemplate([]);
    const own = join(root, 'templates');
    const changed = await pgliteTemplate([probe], own);
    expect(changed).not.toBe(plain);
    const tables = async (pgdata: string, name: string) => {
      const dataDir = join(root, name);
      cpSync(pgdata, join(dataDir, 'pgdata'), { recursive: true });
      const db = await openPglite(dataDir);
      try {
        return (await db.query<{ t: string | null }>(`select to_regclass('plinth.template_probe')::text as t`)).rows[0].t;
      } finally {
        await db.close();
      }
    };
    expect(await tables(plain, 'plain')).toBeNull();
    expect(await tables(changed, 'changed')).toBe('plinth.template_probe');
    // A template once made is served as it is, without making it again.
    let builds = 0;
    const again = await ensureTemplate({ migrations: [probe], root: own, build: async () => void builds++ });
    expect(again).toBe(changed);
    expect(builds).toBe(0);
  });

  it('the packed template the plinth package ships unpacks, its empty folders with it, into a database that opens', async () => {
    const made = await pgliteTemplate();
    const shipped = join(root, 'shipped');
    const key = basename(dirname(made));
    packTemplate(dirname(made), templateArchive(shipped, key));
    // Made from the archive, never by a build.
    const unpacked = await ensureTemplate({
      migrations: systemMigrations(),
      root: shipped,
      build: async () => {
        throw new Error('built instead of unpacked');
      },
    });
    expect(unpacked).toBe(join(shipped, key, 'pgdata'));
    // npm keeps no empty folder; PostgreSQL will not start without these.
    for (const dir of ['pg_notify', 'pg_tblspc', 'pg_twophase']) expect(statSync(join(unpacked, dir)).isDirectory(), dir).toBe(true);
    const dataDir = join(root, 'from-archive');
    cpSync(unpacked, join(dataDir, 'pgdata'), { recursive: true });
    const db = await openPglite(dataDir);
    try {
      const { rows } = await db.query<{ n: number }>('select count(*)::int as n from plinth.schema_migrations');
      expect(Number(rows[0].n)).toBe(systemMigrations().length);
    } finally {
      await db.close();
    }
  });
});
