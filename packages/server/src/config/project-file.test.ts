import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { defaultAuthSettings } from '../settings/index.js';
import { ConfigError, PROJECT_KEYS, parseProjectFile, projectFileText, resolveAuthSecrets } from './index.js';

// plinth.json's own sections (issue 33): auth settings, buckets, seeds; and the JSON Schema
// editors read, which must accept what the parser accepts and name every key it knows.
const schema = JSON.parse(readFileSync(new URL('../../plinth.schema.json', import.meta.url), 'utf8'));
const validate = new Ajv({ strict: false }).compile(schema);
const F = '/app/plinth.json';
const parse = (o: unknown) => parseProjectFile(JSON.stringify(o), F);
const refusal = (o: unknown) => {
  try {
    parse(o);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('accepted');
};

const ACCEPTED = [
  {},
  { data_dir: 'db', port: 3000, migrations_dir: 'sql' },
  {
    $schema: './node_modules/plinth/plinth.schema.json',
    auth: {
      min_password_length: 12,
      allowed_redirect_urls: ['http://localhost:3000/reset'],
      providers: { github: { enabled: true, client_id: 'Iv1.abc', client_secret: 'env(GITHUB_SECRET)' } },
      oidc_providers: [
        { id: 'corp', name: 'Corp', issuer: 'https://id.example.com', client_id: 'c', client_secret: 'env(CORP)', enabled: true },
      ],
      email_templates: { reset: { subject: 'Reset' } },
    },
    storage: { buckets: { avatars: { public: true, file_size_limit: 1048576, allowed_mime_types: ['image/*'] }, docs: {} } },
    realtime: { tables: ['notes', 'messages'] },
    db: { seed: ['seed.sql', 'seeds/users.sql'] },
  },
];

describe('plinth.json sections', () => {
  it.each(ACCEPTED.map((o, i) => [i, o]))('example %i: the parser and the JSON Schema both accept it', (_i, o) => {
    expect(() => parse(o)).not.toThrow();
    expect(validate(o), JSON.stringify(validate.errors)).toBe(true);
  });

  it('the schema names every key the parser knows, and every auth setting', () => {
    expect(Object.keys(schema.properties).sort()).toEqual([...PROJECT_KEYS].sort());
    expect(Object.keys(schema.properties.auth.properties).sort()).toEqual(Object.keys(defaultAuthSettings()).sort());
    expect(Object.keys(schema.properties.storage.properties.buckets.additionalProperties.properties).sort()).toEqual([
      'allowed_mime_types',
      'file_size_limit',
      'public',
    ]);
  });

  it('plinth init writes a file that points at the schema and that both accept', () => {
    const text = projectFileText(parse({}));
    expect(JSON.parse(text).$schema).toBe('./node_modules/plinth/plinth.schema.json');
    expect(validate(JSON.parse(text))).toBe(true);
    expect(() => parseProjectFile(text, F)).not.toThrow();
  });

  it('a literal secret is refused in one line naming the key and the fix (and the schema refuses it too)', () => {
    const file = { auth: { providers: { github: { enabled: true, client_id: 'x', client_secret: 'hunter2' } } } };
    expect(refusal(file)).toBe(
      `config: ${F}: auth.providers.github.client_secret must not hold the secret itself; write "env(NAME)" and set NAME in the environment or the project's .env`,
    );
    expect(validate(file)).toBe(false);
    expect(refusal({ auth: { providers: { apple: { private_key: '-----BEGIN PRIVATE KEY-----' } } } })).toMatch(
      /auth\.providers\.apple\.private_key must not hold the secret itself/,
    );
    expect(refusal({ auth: { oidc_providers: [{ id: 'a', client_secret: 's' }] } })).toMatch(
      /auth\.oidc_providers\[0\]\.client_secret must not hold/,
    );
  });

  it('env(NAME) is read from the environment at start; a missing variable is one line naming it', () => {
    const { auth } = parse({ auth: { providers: { github: { client_secret: 'env(GH_SECRET)' } } } });
    const resolved = resolveAuthSecrets(auth ?? {}, { GH_SECRET: 's3cret' }, F);
    expect((resolved.providers as { github: { client_secret: string } }).github.client_secret).toBe('s3cret');
    expect(() => resolveAuthSecrets(auth ?? {}, {}, F)).toThrow(
      `${F}: auth.providers.github.client_secret reads the variable GH_SECRET, which is not set; set it in the environment or the project's .env`,
    );
  });

  it('wrong sections are one line naming the key', () => {
    expect(refusal({ auth: [] })).toMatch(/"auth" must be an object of auth settings/);
    expect(refusal({ storage: { buckets: { a: { public: 'yes' } } } })).toBe(
      `config: ${F}: storage.buckets.a.public must be true or false`,
    );
    expect(refusal({ storage: { buckets: { a: { size: 1 } } } })).toMatch(/storage\.buckets\.a\.size is not a bucket setting/);
    expect(refusal({ db: { seed: 'seed.sql' } })).toMatch(/"db\.seed" must be a list of SQL file paths/);
    expect(refusal({ realtime: { tables: 'notes' } })).toMatch(/"realtime" must be \{"tables": \["<table of public>", …\]\}/);
    expect(refusal({ realtime: { tables: ['notes', ''] } })).toMatch(/"realtime" must be/);
    expect(refusal({ realtime: { channels: [] } })).toMatch(/"realtime" must be/);
    expect(refusal({ hooks: [] })).toMatch(
      /unknown key "hooks"; it takes \$schema, name, data_dir, port, database_url_env, migrations_dir, auth, storage, realtime, db, functions, webhooks/,
    );
    expect(refusal({ webhooks: [] })).toMatch(/"webhooks" must be \{"<name>": \{"table", "url"/);
    expect(refusal({ webhooks: { orders: { table: 'orders' } } })).toMatch(/webhooks\.orders needs "table" and "url"/);
    expect(refusal({ webhooks: { orders: { table: 'orders', url: 'https://x.test', secret: 'y' } } })).toMatch(
      /webhooks\.orders\.secret is not a webhook field/,
    );
    expect(refusal({ webhooks: { orders: { table: 'orders', url: 'https://x.test', headers: { Authorization: 'Bearer abc' } } } })).toMatch(
      /webhooks\.orders\.headers\.Authorization must not hold its value itself; write "env\(NAME\)"/,
    );
  });
});
