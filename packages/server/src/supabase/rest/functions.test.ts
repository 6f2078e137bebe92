import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from '../../../test/harness.js';
import { restClient, restServer } from '../../../test/supabase-rest.js';
import { fuzzyBest } from './fuzzy.js';

// Functions on /rest/v1 the way PostgREST resolves them: overloads picked by the names of the
// arguments (PGRST202/PGRST203 in PostgREST's words), a function whose one argument has no name
// given the whole body, computed fields (`f(tbl)` returning a value) and computed relationships
// (`f(tbl)` returning rows) in `select=`; the last two also on /api/v1/db, the same planner.
let t: TestServer;
let anon: ReturnType<typeof restClient>;

const SCHEMA = `
create table shelves (id int primary key, label text not null);
create table books (id int primary key, shelf_id int references shelves, title text not null, pages int);
create view long_books as select * from books where pages >= 300;
grant select on shelves, books, long_books to anon, authenticated;
create policy all_shelves on shelves for select using (true);
create policy all_books on books for select using (true);
insert into shelves values (1, 'fiction'), (2, 'poetry'), (3, 'empty');
insert into books values (1, 1, 'Dune', 412), (2, 1, 'Emma', 250), (3, 2, 'Odes', 90), (4, 1, 'Ulysses', 730);

create function pick(a text) returns text language sql immutable as $$ select 'text:' || a $$;
create function pick(a int) returns text language sql immutable as $$ select 'int:' || a $$;
create function choose() returns text language sql immutable as $$ select 'none' $$;
create function choose(x int) returns text language sql immutable as $$ select 'x' $$;
create function choose(y text, z text default 'z') returns text language sql immutable as $$ select 'y,' || z $$;
create function maybe() returns int language sql immutable as 'select 1';
create function maybe(text default 'd') returns int language sql immutable as 'select 2';
create function whole_json(json) returns text language sql immutable as $$ select $1::text $$;
create function whole_text(text) returns text language sql immutable as $$ select 'got ' || $1 $$;
create function whole_bytes(bytea) returns int language sql immutable as $$ select length($1) $$;
create function unnamed_int(int) returns int language sql immutable as 'select 1';
create function shelf_key(shelves) returns text language sql stable as $$ select upper($1.label) || '-' || $1.id $$;
create function shelf_books(s shelves) returns setof books language sql stable as $$ select * from books where shelf_id = s.id order by id $$;
create function first_book(s shelves) returns setof books rows 1 language sql stable as $$ select * from books where shelf_id = s.id order by id limit 1 $$;
create function the_shelf(b books) returns shelves language sql stable as $$ select * from shelves where id = b.shelf_id $$;
create function shelf_books(s long_books) returns setof books language sql stable as $$ select * from books where id = s.id $$;
create function book_by_title(t text) returns books language sql stable as $$ select * from books where title = t $$;
create view book_titles as select title, shelf_id + 0 as shelf_id from books;
grant select on book_titles to anon;
create function long_ones() returns setof long_books language sql stable as 'select * from long_books';
create function lonely() returns setof books language sql stable as 'select * from books';
create function hidden(shelves) returns text language sql stable as $$ select 'secret' $$;
grant execute on all functions in schema public to anon, authenticated;
revoke execute on function hidden(shelves) from anon, authenticated;
create function reveal_key(k text) returns text language sql stable as 'select k';
revoke execute on function reveal_key(text) from anon, authenticated;
`;

beforeAll(async () => {
  ({ t, anon } = await restServer(SCHEMA));
});
afterAll(() => t?.stop());

describe('overloaded functions', () => {
  it('the overload is the one whose argument names were given', async () => {
    expect((await anon.rpc('choose')).data).toBe('none');
    expect((await anon.rpc('choose', { x: 5 })).data).toBe('x');
    expect((await anon.rpc('choose', { y: 'a' })).data).toBe('y,z');
    expect((await anon.rpc('choose', { y: 'a', z: 'b' })).data).toBe('y,b');
  });

  it('two overloads taking the same names: 300 PGRST203 listing both, as PostgREST writes them', async () => {
    const res = await anon.rpc('pick', { a: 'q' });
    expect(res.status).toBe(300);
    expect(res.error).toEqual({
      code: 'PGRST203',
      details: null,
      hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved',
      message: 'Could not choose the best candidate function between: public.pick(a => integer), public.pick(a => text)',
    });
  });

  it('no arguments, and an overload whose only argument is unnamed with a default: ambiguous too', async () => {
    const res = await anon.rpc('maybe');
    expect(res.status).toBe(300);
    expect(res.error?.message).toBe('Could not choose the best candidate function between: public.maybe(), public.maybe( => text)');
  });

  it('names no overload takes: 404 PGRST202, with the closest parameter list as hint', async () => {
    const res = await anon.rpc('choose', { yy: 'a' });
    expect(res.status).toBe(404);
    expect(res.error).toEqual({
      code: 'PGRST202',
      details:
        'Searched for the function public.choose with parameter yy or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: 'Perhaps you meant to call the function public.choose(y, z)',
      message: 'Could not find the function public.choose(yy) in the schema cache',
    });
  });

  it('an unknown name: 404 PGRST202 naming a close function the caller may execute, never one it may not', async () => {
    const close = await anon.rpc('choos', { a: 1, b: 2 });
    expect(close.error).toMatchObject({
      code: 'PGRST202',
      message: 'Could not find the function public.choos(a, b) in the schema cache',
      details:
        'Searched for the function public.choos with parameters a, b or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: 'Perhaps you meant to call the function public.choose',
    });
    const none = await anon.rpc('zzzz_nothing');
    expect(none.error).toEqual({
      code: 'PGRST202',
      details:
        'Searched for the function public.zzzz_nothing without parameters or with a single unnamed json/jsonb parameter, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.zzzz_nothing without parameters in the schema cache',
    });
  });

  it('the hint never names a function the caller may not execute; the secret key hears of it', async () => {
    const asAnon = await anon.rpc('reveal_kex', { k: 'x' });
    expect(asAnon.error?.code).toBe('PGRST202');
    expect(asAnon.error?.hint).toBeNull();
    const asService = await restClient(t, t.as.service).rpc('reveal_kex', { k: 'x' });
    expect(asService.error?.hint).toBe('Perhaps you meant to call the function public.reveal_key');
  });

  it('by GET, an argument no overload has: 404 PGRST202 for the function with that argument', async () => {
    const res = await t.app.inject({ url: '/rest/v1/rpc/choose?w=1', headers: t.as.anon });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      code: 'PGRST202',
      details: 'Searched for the function public.choose with parameter w, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.choose(w) in the schema cache',
    });
  });

  it('a function with one unnamed argument of another type is not callable', async () => {
    const res = await anon.rpc('unnamed_int', { '': 1 } as never);
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe('PGRST202');
    expect(res.error?.message).toBe('Could not find the function public.unnamed_int() in the schema cache');
  });
});

describe('a function returning one row', () => {
  it('takes select (with embeddings) and filters; filtered out, the answer is null', async () => {
    const found = await anon.rpc('book_by_title', { t: 'Odes' }).select('title, shelf:shelves(label)').eq('pages', 90);
    expect(found.error).toBeNull();
    expect(found.data).toEqual({ title: 'Odes', shelf: { label: 'poetry' } });
    const gone = await anon.rpc('book_by_title', { t: 'Odes' }).eq('pages', 1).select('title');
    expect(gone.status).toBe(200);
    expect(gone.error).toBeNull();
    expect(gone.data).toBeNull();
  });
});

describe('a function whose one argument has no name takes the whole body', () => {
  it('JSON for json, whatever its keys', async () => {
    const res = await anon.rpc('whole_json', { anything: [1, 2] } as never);
    expect(res.error).toBeNull();
    expect(JSON.parse(res.data as unknown as string)).toEqual({ anything: [1, 2] });
  });

  it('text/plain for text, bytes for bytea', async () => {
    const text = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/rpc/whole_text',
      headers: { ...t.as.anon, 'content-type': 'text/plain' },
      payload: 'hello there',
    });
    expect(text.statusCode, text.body).toBe(200);
    expect(text.json()).toBe('got hello there');
    const bytes = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/rpc/whole_bytes',
      headers: { ...t.as.anon, 'content-type': 'application/octet-stream' },
      payload: Buffer.from([0, 1, 2, 255, 0]),
    });
    expect(bytes.statusCode, bytes.body).toBe(200);
    expect(bytes.json()).toBe(5);
  });

  it('a text body to a function that takes JSON: PGRST202 naming the unnamed text parameter it looked for', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/rest/v1/rpc/whole_json',
      headers: { ...t.as.anon, 'content-type': 'text/plain' },
      payload: 'x',
    });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      code: 'PGRST202',
      details:
        'Searched for the function public.whole_json with a single unnamed text parameter, but no matches were found in the schema cache.',
      hint: null,
      message: 'Could not find the function public.whole_json in the schema cache',
    });
  });
});

describe('computed fields', () => {
  it('f(tbl) returning a value is selected by name, filtered and sorted, and not part of *', async () => {
    const res = await anon.from('shelves').select('id, shelf_key').neq('shelf_key', 'POETRY-2').order('shelf_key', { ascending: false });
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      { id: 1, shelf_key: 'FICTION-1' },
      { id: 3, shelf_key: 'EMPTY-3' },
    ]);
    const star = await anon.from('shelves').select('*').eq('id', 1);
    expect(star.data).toEqual([{ id: 1, label: 'fiction' }]);
  });

  it('on an embedded table and on a function result', async () => {
    const res = await anon.from('books').select('id, shelf:shelves(shelf_key)').eq('id', 3);
    expect(res.data).toEqual([{ id: 3, shelf: { shelf_key: 'POETRY-2' } }]);
    const rpc = await anon.rpc('lonely').select('id, the_shelf(shelf_key)').eq('id', 1);
    expect(rpc.error).toBeNull();
    expect(rpc.data).toEqual([{ id: 1, the_shelf: { shelf_key: 'FICTION-1' } }]);
  });

  it('a function the caller may not execute is refused by PostgreSQL, not run', async () => {
    const res = await anon.from('shelves').select('id, hidden');
    expect(res.error?.code).toBe('42501');
    expect(res.data).toBeNull();
  });
});

describe('computed relationships', () => {
  it('setof: an array per row; rows 1 or a row: one object (null when the set is empty)', async () => {
    const res = await anon.from('shelves').select('id, all:shelf_books(id, title), first:first_book(title)').order('id');
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      {
        id: 1,
        all: [
          { id: 1, title: 'Dune' },
          { id: 2, title: 'Emma' },
          { id: 4, title: 'Ulysses' },
        ],
        first: { title: 'Dune' },
      },
      { id: 2, all: [{ id: 3, title: 'Odes' }], first: { title: 'Odes' } },
      { id: 3, all: [], first: null },
    ]);
  });

  it('the overload is the one taking the parent row type (a view here), and !inner drops parents without a row', async () => {
    const view = await anon.from('long_books').select('id, shelf_books(title)').order('id');
    expect(view.data).toEqual([
      { id: 1, shelf_books: [{ title: 'Dune' }] },
      { id: 4, shelf_books: [{ title: 'Ulysses' }] },
    ]);
    const inner = await anon.from('shelves').select('id, first_book!inner(title)').order('id');
    expect((inner.data ?? []).map((r) => r.id)).toEqual([1, 2]);
  });

  it('embedded filters, order and limit, and a relation by foreign key inside', async () => {
    const res = await anon
      .from('shelves')
      .select('id, shelf_books(title, the_shelf(label), shelves(label))')
      .eq('id', 1)
      .gt('shelf_books.pages', 300)
      .order('title', { referencedTable: 'shelf_books', ascending: false })
      .limit(1, { referencedTable: 'shelf_books' });
    expect(res.error).toBeNull();
    expect(res.data).toEqual([
      { id: 1, shelf_books: [{ title: 'Ulysses', the_shelf: { label: 'fiction' }, shelves: { label: 'fiction' } }] },
    ]);
  });

  it("a function that takes no row is no relationship: PostgREST's PGRST200", async () => {
    const res = await anon.from('shelves').select('id, lonely(*)');
    expect(res.status).toBe(400);
    expect(res.error).toEqual({
      code: 'PGRST200',
      details: "Searched for a foreign key relationship between 'shelves' and 'lonely' in the schema 'public', but no matches were found.",
      hint: null,
      message: "Could not find a relationship between 'shelves' and 'lonely' in the schema cache",
    });
  });

  it('/api/v1/db reads the same through the one planner', async () => {
    const res = await t.app.inject({
      url: `/api/v1/db/shelves?select=${encodeURIComponent('id,shelf_key,first_book(title)')}&eq.id=2`,
      headers: t.as.anon,
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data ?? res.json()).toEqual([{ id: 2, shelf_key: 'POETRY-2', first_book: { title: 'Odes' } }]);
  });
});

describe('views inherit the keys of the columns they show as they are', () => {
  it("a view's rows embed its table's relations both ways, and a function's rows of that view too", async () => {
    const fromView = await anon.from('long_books').select('title, shelves(label)').order('id');
    expect(fromView.error).toBeNull();
    expect(fromView.data).toEqual([
      { title: 'Dune', shelves: { label: 'fiction' } },
      { title: 'Ulysses', shelves: { label: 'fiction' } },
    ]);
    const toView = await anon.from('shelves').select('id, long_books(title)').in('id', [1, 2]).order('id');
    expect(toView.data).toEqual([
      { id: 1, long_books: [{ title: 'Dune' }, { title: 'Ulysses' }] },
      { id: 2, long_books: [] },
    ]);
    const rpc = await anon.rpc('long_ones').select('title, shelves(label)').eq('id', 4);
    expect(rpc.error).toBeNull();
    expect(rpc.data).toEqual([{ title: 'Ulysses', shelves: { label: 'fiction' } }]);
  });

  it('a view that renames or computes the key column inherits nothing', async () => {
    const res = await anon.from('book_titles').select('title, shelves(label)');
    expect(res.error?.code).toBe('PGRST200');
  });
});

describe('the fuzzy hint', () => {
  it('finds a close name, and nothing under the score', () => {
    expect(fuzzyBest(['get_status', 'get_messages', 'other'], 'get_statuss', 0.75)).toBe('get_status');
    expect(fuzzyBest(['f_with_unnamed_text', 'f_with_unnamed_json', 'f_with_unnamed_default'], 'f_with_unnamed_integer', 0.75)).toBe(
      'f_with_unnamed_text',
    );
    expect(fuzzyBest(['get_status', 'get_messages'], 'blurb_message', 0.75)).toBeNull();
  });
});
