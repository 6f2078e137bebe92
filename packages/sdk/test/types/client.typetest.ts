/**
 * Compile-time tests: `tsc -p packages/sdk/tsconfig.typetest.json --noEmit` (also run by
 * scripts/test.sh). Each `@ts-expect-error` line must fail to compile; if the SDK's types stop
 * rejecting it, tsc reports the directive as unused and the check fails. Nothing here runs.
 */
import { createClient, type JsonValue } from '../../src/index.js';
import type { Database } from './database.generated.js';

declare function expectType<T>(value: T): void;
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
declare function assert<T extends true>(): void;

const client = createClient<Database>('https://api.example.com', 'pk_test');

export async function tables() {
  client.from('todos');
  client.from('open_todos');
  // @ts-expect-error unknown table
  client.from('todoz');
}

export async function selects() {
  const { data } = await client.from('todos').select('id, title');
  if (data) {
    assert<Equal<typeof data, { id: number; title: string }[]>>();
    // @ts-expect-error `done` was not selected
    data[0].done;
  }
  const all = await client.from('todos').select();
  if (all.data) expectType<boolean | null>(all.data[0].done);
  // @ts-expect-error wrong column name in the select list
  client.from('todos').select('id,titel');
  // @ts-expect-error wrong column name in the select list, after spaces
  client.from('todos').select('id, title, dne');
  const one = await client.from('todos').select('title').eq('id', 1).single();
  if (one.data) assert<Equal<typeof one.data, { title: string }>>();
  const maybe = await client.from('todos').select().maybeSingle();
  expectType<Database['public']['Tables']['todos']['Row'] | null>(maybe.data);
}

export function filters() {
  const q = client.from('todos').select();
  q.eq('title', 'x').neq('priority', 2).gt('created_at', '2024-01-01').in('state', ['open']).is('done', null).order('priority');
  // @ts-expect-error wrong column name in a filter
  q.eq('titel', 'x');
  // @ts-expect-error wrong value type for the column
  q.eq('id', 'one');
  // @ts-expect-error value outside the enum
  q.in('state', ['archived']);
  // @ts-expect-error wrong column name in order
  q.order('nope');
  // @ts-expect-error is() takes null or a boolean
  q.is('done', 'yes');
  // Filters may use columns that were not selected.
  client.from('todos').select('id').eq('title', 'x');
}

export async function writes() {
  const created = await client.from('todos').insert({ title: 'Buy milk' });
  if (created.data) expectType<number>(created.data.id);
  const many = await client.from('todos').insert([{ title: 'a' }, { title: 'b', done: true }]);
  if (many.data) expectType<number>(many.data[1].id);
  const minimal = await client.from('todos').insert({ title: 'c' }, { returning: 'minimal' });
  expectType<null>(minimal.data);
  const chained = await client.from('todos').insert({ title: 'd' }).select('id, title').single();
  assert<Equal<typeof chained.data, { id: number; title: string } | null>>();
  const chainedMany = await client
    .from('todos')
    .insert([{ title: 'e' }])
    .select('id');
  assert<Equal<typeof chainedMany.data, { id: number }[] | null>>();
  // @ts-expect-error not a column of todos
  client.from('todos').insert({ title: 'f' }).select('colour');
  // @ts-expect-error `title` is required on insert
  client.from('todos').insert({ done: true });
  // @ts-expect-error unknown column on insert
  client.from('todos').insert({ title: 'x', colour: 'red' });
  // @ts-expect-error `search` is read-only (generated column)
  client.from('profiles').insert({ id: 'u', search: 'x' });
  await client.from('todos').update({ done: true }).eq('id', 1);
  // @ts-expect-error wrong type on update
  client.from('todos').update({ done: 'yes' });
  await client.from('todos').delete().eq('id', 1);
  // @ts-expect-error a view is read-only
  client.from('open_todos').insert({ title: 'x' });
}

export async function untyped() {
  const loose = createClient('https://api.example.com', 'pk_test');
  const { data } = await loose.from('anything').select('a,b').eq('c', 1);
  if (data) expectType<unknown>(data[0].a);
}

export async function auth() {
  const res = await client.auth.signIn({ email: 'a@example.com', password: 'x' });
  if (res.error) expectType<string>(res.error.code);
  else expectType<string>(res.data.session.refresh_token);
  // A built-in provider, or the id of one of the project's OpenID Connect providers.
  client.auth.signInWithOAuth('github');
  client.auth.signInWithOAuth('corp-sso');
  // @ts-expect-error a provider is a string
  client.auth.signInWithOAuth(42);
  const { data } = client.auth.onAuthStateChange((event) => {
    expectType<
      'INITIAL_SESSION' | 'SIGNED_IN' | 'SIGNED_OUT' | 'TOKEN_REFRESHED' | 'USER_UPDATED' | 'PASSWORD_RECOVERY' | 'MFA_CHALLENGE_VERIFIED'
    >(event);
  });
  data.subscription.unsubscribe();
}

export async function embedding() {
  const { data } = await client.from('todos').select('id, list(name), comments(body, approved)');
  if (data) {
    assert<Equal<typeof data, { id: number; list: { name: string } | null; comments: { body: string; approved: boolean }[] }[]>>();
  }
  // Aliases, hints, !inner (never null), nesting, JSON paths and aggregates.
  const shaped = await client.from('comments').select('text:body, todo!inner(title, owner:list(name)), kind:todo(meta->kind), n:count()');
  if (shaped.data) {
    type Shaped = { text: string; todo: { title: string; owner: { name: string } | null }; kind: { kind: JsonValue } | null; n: number };
    assert<Equal<typeof shaped.data, Shaped[]>>();
  }
  const hinted = await client.from('todos').select('lists!todos_list_id_fkey(id)');
  if (hinted.data) assert<Equal<typeof hinted.data, { lists: { id: number } | null }[]>>();
  const counted = await client.from('todos').select('state, count(), max(priority), text:meta->>kind');
  if (counted.data)
    assert<Equal<typeof counted.data, { state: 'open' | 'closed'; count: number; max: number | null; text: string | null }[]>>();
  // @ts-expect-error not a relation of todos
  client.from('todos').select('id, owner(name)');
  // @ts-expect-error not a column of lists
  client.from('todos').select('id, list(nme)');
  // @ts-expect-error profiles has no relations
  client.from('profiles').select('id, todos(id)');
  // @ts-expect-error sum() of nothing
  client.from('todos').select('sum()');
}

export function embeddedFilters() {
  const q = client.from('todos').select('id, comments(body)');
  q.eq('comments.approved', true).order('body', { referencedTable: 'comments' }).limit(3, { referencedTable: 'comments' });
  q.not('state', 'in', ['closed']).or('eq.done.true,is.priority.null').textSearch('title', 'milk -oat', { config: 'english' });
  q.or('eq.approved.false', { referencedTable: 'comments' });
  // @ts-expect-error not a column of comments
  q.eq('comments.nope', 1);
  // @ts-expect-error wrong value type for comments.approved
  q.eq('comments.approved', 'yes');
}

export async function upserts() {
  const one = await client.from('todos').upsert({ id: 1, title: 'x' });
  expectType<Database['public']['Tables']['todos']['Row'] | null>(one.data);
  const many = await client.from('todos').upsert([{ title: 'a' }], { onConflict: 'title', ignoreDuplicates: true });
  if (many.data) expectType<number>(many.data[0].id);
  // @ts-expect-error `title` is required
  client.from('todos').upsert({ id: 1 });
}

export async function functions() {
  const sum = await client.rpc('add', { a: 1 });
  assert<Equal<typeof sum.data, number | null>>();
  const hi = await client.rpc('greet', { first: 'Ada', last: 'Lovelace' });
  assert<Equal<typeof hi.data, string | null>>();
  const rows = await client.rpc('todos_in', { list: 1 }).eq('done', false).order('id').range(0, 9);
  if (rows.data) expectType<string>(rows.data[0].title);
  const picked = await client.rpc('todos_in', { list: 1 }).select('id, title');
  if (picked.data) assert<Equal<typeof picked.data, { id: number; title: string }[]>>();
  const ids = await client.rpc('ids', { n: 3 }, { get: true });
  if (ids.data) expectType<number | null>(ids.data[0]);
  const none = await client.rpc('touch');
  expectType<null>(none.data);
  // @ts-expect-error unknown function
  client.rpc('nope', {});
  // @ts-expect-error `a` is a number
  client.rpc('add', { a: 'one' });
  // @ts-expect-error unknown argument
  client.rpc('add', { a: 1, c: 2 });
}

export function realtime() {
  const sub = client.realtime.subscribe(
    { table: 'todos', events: ['insert', 'update'], filter: 'eq.done=false', since: 10 },
    (change) => {
      assert<Equal<typeof change.row, Database['public']['Tables']['todos']['Row'] | null>>();
      if (change.row) expectType<string>(change.row.title);
      expectType<'insert' | 'update' | 'delete' | 'leave'>(change.op);
      expectType<number>(change.seq);
    },
    (status, error) => {
      expectType<'SUBSCRIBED' | 'RECONNECTING' | 'CLOSED' | 'ERROR'>(status);
      expectType<string | undefined>(error?.code);
    },
  );
  expectType<number | null>(sub.lastSeq);
  // @ts-expect-error unknown table
  client.realtime.subscribe({ table: 'todoz' }, () => undefined);
  // @ts-expect-error not an event
  client.realtime.subscribe({ table: 'todos', events: ['upsert'] }, () => undefined);
  client.realtime.subscribe({ table: 'todos' }, (change) => {
    // @ts-expect-error no such column
    change.row?.titel;
  });
}
