import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PlinthClient } from '../../src/index.js';
import { clientOf, type E2eServer, email, startServer, tracker } from './server.js';

// The query builder against real tables with an owner policy (`auth.uid()`), as anon and as
// two signed-in users, on the real server and database.

let s: E2eServer;
const { track, disposeAll } = tracker();
let alice: PlinthClient;
let bob: PlinthClient;
let anon: PlinthClient;
let aliceId: string;
let bobId: string;

async function user(tag: string) {
  const c = clientOf(s);
  const { data, error } = await c.auth.signUp({ email: email(tag), password: 'correct horse battery' });
  expect(error).toBeNull();
  return { c, id: data!.user.id };
}

beforeAll(async () => {
  s = await startServer();
  const res = await s.t.sql(`
    create table todos (
      id bigserial primary key,
      title text not null,
      done boolean not null default false,
      tag text,
      priority int not null default 1,
      user_id uuid default auth.uid(),
      unique (user_id, title)
    );
    create policy own on todos using (user_id = auth.uid()) with check (user_id = auth.uid());`);
  expect(res.statusCode, res.body).toBe(200);
  ({ c: alice, id: aliceId } = await user('alice'));
  ({ c: bob, id: bobId } = await user('bob'));
  anon = clientOf(s);
});
afterAll(async () => {
  for (const c of [alice, bob, anon]) c?.auth.dispose();
  await s?.t.stop();
});
afterEach(() => disposeAll());

type Todo = { id: number; title: string; done: boolean; tag: string | null; priority: number; user_id: string };
const titles = (rows: ReadonlyArray<Record<string, unknown>> | null) => (rows ?? []).map((r) => String(r.title)).sort();

describe('writes and reads under RLS', () => {
  let mine: Todo[];

  it('inserts one row (object back, 201) and many (array back), each owned by the caller', async () => {
    const one = await bob.from('todos').insert({ title: 'bob 1', tag: 'home' });
    expect(one.error).toBeNull();
    expect(one.status).toBe(201);
    expect(one.data).toMatchObject({ title: 'bob 1', tag: 'home', done: false, user_id: bobId });
    expect(typeof (one.data as Todo).id).toBe('number');

    const many = await alice.from('todos').insert([
      { title: 'milk', priority: 1 },
      { title: 'Bread', priority: 2, tag: 'shop' },
      { title: 'eggs', priority: 3, tag: 'shop' },
    ]);
    expect(many.error).toBeNull();
    expect(many.status).toBe(201);
    mine = many.data as Todo[];
    expect(mine.map((r) => [r.title, r.user_id])).toEqual([
      ['milk', aliceId],
      ['Bread', aliceId],
      ['eggs', aliceId],
    ]);
  });

  it("supabase-js's chain: insert(…).select(columns).single() gives the row with those columns; single() of several is refused before writing", async () => {
    const one = await bob.from('todos').insert({ title: 'bob chained', tag: 'x' }).select('id, title').single();
    expect(one.error).toBeNull();
    expect(Object.keys(one.data ?? {}).sort()).toEqual(['id', 'title']);
    expect(one.data?.title).toBe('bob chained');
    const arr = await bob
      .from('todos')
      .insert([{ title: 'bob array of one' }])
      .select('title')
      .single();
    expect(arr.data).toEqual({ title: 'bob array of one' });
    const two = await bob
      .from('todos')
      .insert([{ title: 'never 1' }, { title: 'never 2' }])
      .single();
    expect(two.error?.code).toBe('too_many_rows');
    expect((await bob.from('todos').select('title').like('title', 'never%')).data).toEqual([]);
    // An upsert that skips its row (ignoreDuplicates): single() is not_found, maybeSingle() null.
    const skipped = await bob
      .from('todos')
      .upsert({ title: 'bob chained', user_id: bobId }, { onConflict: 'user_id,title', ignoreDuplicates: true });
    expect(skipped.error).toBeNull();
    expect(
      (
        await bob
          .from('todos')
          .upsert({ title: 'bob chained', user_id: bobId }, { onConflict: 'user_id,title', ignoreDuplicates: true })
          .single()
      ).error?.code,
    ).toBe('not_found');
    expect(
      (
        await bob
          .from('todos')
          .upsert({ title: 'bob chained', user_id: bobId }, { onConflict: 'user_id,title', ignoreDuplicates: true })
          .maybeSingle()
      ).data,
    ).toBeNull();
    await bob.from('todos').delete().in('title', ['bob chained', 'bob array of one']);
  });

  it('anon sees no rows and cannot write (rls_violation)', async () => {
    const read = await anon.from('todos').select();
    expect(read.error).toBeNull();
    expect(read.data).toEqual([]);
    const write = await anon.from('todos').insert({ title: 'anon' });
    expect(write.data).toBeNull();
    expect(write.error).toMatchObject({ code: 'rls_violation', status: 403 });
  });

  it('each user sees only their own rows, by any filter', async () => {
    expect(titles((await alice.from('todos').select('title')).data)).toEqual(['Bread', 'eggs', 'milk']);
    expect(titles((await bob.from('todos').select('title')).data)).toEqual(['bob 1']);
    expect((await alice.from('todos').select().eq('user_id', bobId)).data).toEqual([]);
    expect((await bob.from('todos').select().eq('id', mine[0].id)).data).toEqual([]);
  });

  it('filters, orders and pages on the server', async () => {
    const q = () => alice.from('todos').select('title');
    expect((await q().gt('priority', 1).order('priority', { ascending: false })).data).toEqual([{ title: 'eggs' }, { title: 'Bread' }]);
    expect(titles((await q().gte('priority', 2).lte('priority', 3).neq('title', 'eggs')).data)).toEqual(['Bread']);
    expect(titles((await q().lt('priority', 2)).data)).toEqual(['milk']);
    expect(titles((await q().like('title', '%e%')).data)).toEqual(['Bread', 'eggs']);
    expect(titles((await q().ilike('title', 'b*')).data)).toEqual(['Bread']);
    expect(titles((await q().is('tag', null)).data)).toEqual(['milk']);
    expect(titles((await q().in('tag', ['shop', 'work'])).data)).toEqual(['Bread', 'eggs']);
    expect((await q().order('priority').range(1, 2)).data).toEqual([{ title: 'Bread' }, { title: 'eggs' }]);
    expect((await q().order('priority').limit(1).offset(2)).data).toEqual([{ title: 'eggs' }]);
  });

  it("count: 'exact' gives the total of the caller's rows beside one page; without it count is null", async () => {
    const page = await alice.from('todos').select('id', { count: 'exact' }).order('id').range(0, 1);
    expect(page.data).toHaveLength(2);
    expect(page.count).toBe(3);
    expect((await bob.from('todos').select('id', { count: 'exact' })).count).toBe(1);
    expect((await anon.from('todos').select('id', { count: 'exact' })).count).toBe(0);
    expect((await alice.from('todos').select('id')).count).toBeNull();
  });

  it('single() and maybeSingle(): one row, not_found for a row RLS hides, too_many_rows', async () => {
    const one = await alice.from('todos').select('title').eq('id', mine[1].id).single();
    expect(one).toMatchObject({ data: { title: 'Bread' }, error: null });
    const hidden = await bob.from('todos').select().eq('id', mine[1].id).single();
    expect(hidden.data).toBeNull();
    expect(hidden.error).toMatchObject({ code: 'not_found', status: 404 });
    expect(await bob.from('todos').select().eq('id', mine[1].id).maybeSingle()).toMatchObject({ data: null, error: null });
    const several = await alice.from('todos').select().maybeSingle();
    expect(several.error).toMatchObject({ code: 'too_many_rows', status: 400 });
  });

  it('update and delete change only the caller’s rows and return them', async () => {
    const updated = await alice.from('todos').update({ done: true }).eq('id', mine[0].id);
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual([{ ...mine[0], done: true }]);
    // Bob aims at Alice's row: nothing matches for him, and her row is untouched.
    expect((await bob.from('todos').update({ title: 'hacked' }).eq('id', mine[1].id)).data).toEqual([]);
    expect((await bob.from('todos').delete().eq('id', mine[1].id)).data).toEqual([]);
    expect((await alice.from('todos').select('title').eq('id', mine[1].id).single()).data).toEqual({ title: 'Bread' });

    const extra = await alice.from('todos').insert([{ title: 'tmp 1' }, { title: 'tmp 2' }]);
    const ids = (extra.data as Todo[]).map((r) => r.id);
    const deleted = await alice.from('todos').delete().in('id', ids);
    expect(titles(deleted.data)).toEqual(['tmp 1', 'tmp 2']);
    expect((await alice.from('todos').select('id', { count: 'exact' })).count).toBe(3);
  });

  it("return: 'minimal' sends no body back, and the write still happens", async () => {
    const inserted = await alice.from('todos').insert({ title: 'quiet' }, { returning: 'minimal' });
    expect(inserted).toMatchObject({ data: null, error: null, status: 201 });
    const updated = await alice.from('todos').update({ tag: 'hush' }, { returning: 'minimal' }).eq('title', 'quiet');
    expect(updated).toMatchObject({ data: null, error: null });
    expect((await alice.from('todos').select('tag').eq('title', 'quiet').single()).data).toEqual({ tag: 'hush' });
    expect(await alice.from('todos').delete({ returning: 'minimal' }).eq('title', 'quiet')).toMatchObject({ data: null, error: null });
    expect((await alice.from('todos').select().eq('title', 'quiet')).data).toEqual([]);
  });
});

describe('errors of the server come back as error', () => {
  it('filter_required for update and delete without a filter (nothing is changed)', async () => {
    const update = await alice.from('todos').update({ done: false });
    expect(update).toMatchObject({ data: null, error: { code: 'filter_required', status: 400 } });
    expect((await alice.from('todos').delete()).error).toMatchObject({ code: 'filter_required', status: 400 });
    expect((await alice.from('todos').select('id', { count: 'exact' })).count).toBe(3);
  });

  it('table_not_found and column_not_found', async () => {
    expect((await alice.from('todoz').select()).error).toMatchObject({ code: 'table_not_found', status: 404 });
    expect((await alice.from('todos').select('id,titel')).error).toMatchObject({ code: 'column_not_found', status: 400 });
    expect((await alice.from('todos').select().eq('titel', 'x')).error).toMatchObject({ code: 'column_not_found', status: 400 });
    expect((await alice.from('todos').insert({ titel: 'x' })).error).toMatchObject({ code: 'column_not_found', status: 400 });
  });

  it('conflict (409) for a unique violation, with the constraint named', async () => {
    const dup = await alice.from('todos').insert({ title: 'milk' });
    expect(dup.data).toBeNull();
    expect(dup.error).toMatchObject({ code: 'conflict', status: 409 });
    expect(JSON.stringify(dup.error!.details)).toContain('todos_user_id_title_key');
    // Bob has no "milk": the same title is his to take.
    expect((await bob.from('todos').insert({ title: 'milk' })).error).toBeNull();
  });

  it('rls_violation (403) for a row the policy refuses: inserting or moving a row to another user', async () => {
    const forged = await alice.from('todos').insert({ title: 'for bob', user_id: bobId });
    expect(forged.error).toMatchObject({ code: 'rls_violation', status: 403 });
    const moved = await alice.from('todos').update({ user_id: bobId }).eq('title', 'eggs');
    expect(moved.error).toMatchObject({ code: 'rls_violation', status: 403 });
    expect(titles((await bob.from('todos').select('title')).data)).toEqual(['bob 1', 'milk']);
  });
});

describe('in() values', () => {
  it('matches values holding commas, quotes, backslashes and empty strings exactly', async () => {
    const odd = ['a,b', '"quoted"', 'say "hi", ok', 'back\\slash', 'tab\tand,comma', '', ' padded '];
    const ins = await alice.from('todos').insert(odd.map((title) => ({ title, tag: 'odd' })));
    expect(ins.error).toBeNull();
    const found = await alice.from('todos').select('title').in('title', odd);
    expect(found.error).toBeNull();
    expect(titles(found.data)).toEqual([...odd].sort());
    // Each item is one value: "a,b" is not "a" or "b", and 'milk' is only found when asked for.
    expect(titles((await alice.from('todos').select('title').in('title', ['a,b'])).data)).toEqual(['a,b']);
    expect((await alice.from('todos').select('title').in('title', ['a', 'b'])).data).toEqual([]);
    expect(titles((await alice.from('todos').select('title').in('title', ['"quoted"', 'milk'])).data)).toEqual(['"quoted"', 'milk']);
    const gone = await alice.from('todos').delete().in('title', odd);
    expect(gone.data).toHaveLength(odd.length);
  });
});

describe('tokens', () => {
  it('a request whose token the server calls expired is refreshed and sent again, as the same user', async () => {
    const c = track(clientOf(s));
    const { data } = await c.auth.signIn({ email: (await bob.auth.getUser()).data!.user.email!, password: 'correct horse battery' });
    const before = data!.session;
    // The server's clock moves an hour on: every access token it issued so far is expired there,
    // while the SDK (real time) still thinks this one is fresh.
    s.t.clock.advance(3601_000);
    const rows = await c.from('todos').select('title');
    expect(rows.error).toBeNull();
    expect(titles(rows.data)).toEqual(['bob 1', 'milk']);
    const after = (await c.auth.getSession()).data!.session!;
    expect(after.refresh_token).not.toBe(before.refresh_token);
    expect(after.expires_at).toBe(Math.floor(s.t.clock.now() / 1000) + 3600);
  });
});
