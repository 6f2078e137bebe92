import bcrypt from 'bcryptjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createAuthServer, email } from '../../../test/auth.js';
import type { TestServer } from '../../../test/harness.js';

// Imported passwords (issue 35): a bcrypt `encrypted_password` written into auth.users (a
// Supabase export, a seed) signs in with its password, and becomes argon2id on that first
// sign-in; the wrong password never signs in, before or after.
let t: TestServer;
beforeAll(async () => {
  t = await createAuthServer();
});
afterAll(() => t?.stop());

async function importUser(addr: string, password: string, cost = 4) {
  const hash = bcrypt.hashSync(password, cost);
  const { rows } = await t.db.query<{ id: string }>(
    `insert into auth.users (email, email_confirmed_at, encrypted_password) values ($1, now(), $2) returning id`,
    [addr, hash],
  );
  return { id: rows[0].id, hash };
}
const storedHash = async (id: string) =>
  (await t.db.query<{ hash: string }>('select hash from auth.passwords where user_id = $1', [id])).rows[0]?.hash;

describe('a user imported with a bcrypt hash', () => {
  it('signs in with its password on both faces; the hash becomes argon2id at the first sign-in', async () => {
    const addr = email('imported');
    const { id, hash } = await importUser(addr, 'imported password 1');
    expect(await storedHash(id)).toBe(hash); // taken from auth.users into Plinth's own table

    const wrong = await call(t, 'POST', 'signin', { email: addr, password: 'imported password 2' });
    expect([wrong.statusCode, wrong.json().code]).toEqual([400, 'invalid_credentials']);
    expect(await storedHash(id)).toBe(hash);

    const first = await call(t, 'POST', 'signin', { email: addr, password: 'imported password 1' });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().user.id).toBe(id);
    const rehashed = await storedHash(id);
    expect(rehashed).toMatch(/^\$argon2id\$/);

    // GoTrue's password grant, on the argon2id hash now.
    const again = await t.app.inject({
      method: 'POST',
      url: '/auth/v1/token?grant_type=password',
      headers: { ...t.as.anon, 'content-type': 'application/json' },
      payload: { email: addr, password: 'imported password 1' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().user.id).toBe(id);
    const wrongAfter = await call(t, 'POST', 'signin', { email: addr, password: 'imported password 2' });
    expect(wrongAfter.statusCode).toBe(400);
  });

  it("pgcrypto's $2a$ and PHP's $2y$ forms are read too; a hash that is not bcrypt or argon2id never signs in", async () => {
    const a = email('php');
    const { id } = await importUser(a, 'from php 12345');
    const php = (await storedHash(id)).replace(/^\$2[ab]\$/, '$2y$');
    await t.db.query('update auth.passwords set hash = $2 where user_id = $1', [id, php]);
    expect((await call(t, 'POST', 'signin', { email: a, password: 'from php 12345' })).statusCode).toBe(200);

    const b = email('md5');
    const { id: other } = await importUser(b, 'plain md5 pw');
    await t.db.query("update auth.passwords set hash = md5('plain md5 pw') where user_id = $1", [other]);
    const refused = await call(t, 'POST', 'signin', { email: b, password: 'plain md5 pw' });
    expect([refused.statusCode, refused.json().code]).toEqual([400, 'invalid_credentials']);
  });
});
