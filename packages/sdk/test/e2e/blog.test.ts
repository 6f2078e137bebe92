import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALICE, BLOG_SQL } from '../../../server/test/blog.js';
import { generateTypes } from '../../src/gen/types.js';
import { type E2eServer, startServer } from './server.js';

// Issue 22's "done when": a blog with authors, posts, comments and tags renders each page with
// one request, written with the SDK and fully typed. The app below is compiled (strict) against
// the types `plinth gen types` makes from the real server's document, then run against it.

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SDK_INDEX = join(ROOT, 'packages/sdk/src/index.js');
const TSC = join(ROOT, 'node_modules/.bin/tsc');

let s: E2eServer;
let dir: string;
let token: string;

const APP = `
import { createClient } from '%SDK%';
import type { Database } from './database.types.js';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function assert<T extends true>(): void {}

export function blog(url: string, key: string, fetch: typeof globalThis.fetch, accessToken: string) {
  const client = createClient<Database>(url, key, { fetch, headers: { authorization: \`Bearer \${accessToken}\` } });
  return {
    /** The front page: published posts with their author, comment count and tags. */
    async home() {
      const { data, error } = await client
        .from('posts')
        .select('id, title, author(name), comments(count()), tags(name)')
        .eq('published', true)
        .order('id')
        .order('name', { referencedTable: 'tags' })
        .limit(20);
      if (error) throw new Error(error.message);
      assert<Equal<typeof data, { id: number; title: string; author: { name: string } | null; comments: { count: number }[]; tags: { name: string }[] }[]>>();
      return data;
    },
    /** A post: its author with profile, approved comments with their author and replies. */
    async post(id: number) {
      const { data, error } = await client
        .from('posts')
        .select('title, body, writer:author(name, profiles(bio)), comments(id, body, author(name), replies:comments(body))')
        .eq('id', id)
        .eq('comments.approved', true)
        .is('comments.parent_id', null)
        .order('id', { referencedTable: 'comments' })
        .single();
      if (error) throw new Error(error.message);
      const first = data.comments[0];
      if (first) assert<Equal<typeof first.replies, { body: string }[]>>();
      assert<Equal<typeof data.writer, { name: string; profiles: { bio: string | null } | null } | null>>();
      return data;
    },
    /** A tag: the posts tagged with it (many-to-many through post_tags). */
    async tag(name: string) {
      const { data, error } = await client.from('tags').select('name, posts(id, title)').eq('name', name).order('id', { referencedTable: 'posts' }).single();
      if (error) throw new Error(error.message);
      return data;
    },
    /** Search, and posts that are news or by author 2. */
    async search(words: string) {
      const { data, error } = await client
        .from('posts')
        .select('id, kind:meta->>kind')
        .textSearch('search', words, { config: 'english' })
        .or('eq.meta->>kind.news,eq.author_id.2')
        .not('id', 'in', [99])
        .order('id');
      if (error) throw new Error(error.message);
      assert<Equal<typeof data, { id: number; kind: string | null }[]>>();
      return data;
    },
    /** An author's page, through a function. */
    async author(id: number) {
      const { data, error } = await client.rpc('posts_by', { author: id }).select('id, title').order('id');
      if (error) throw new Error(error.message);
      return data;
    },
    /** Edit one's own note, creating it when missing. */
    async saveNote(id: number, slug: string, body: string) {
      const { data, error } = await client.from('notes').upsert({ id, slug, body });
      if (error) return error.code;
      return data?.body ?? null;
    },
  };
}
`;

beforeAll(async () => {
  s = await startServer();
  dir = mkdtempSync(join(tmpdir(), 'plinth-blog-'));
  const res = await s.t.sql(`${BLOG_SQL}
    create function posts_by(author int) returns setof posts language sql stable as $$ select * from posts where author_id = author $$;
    grant execute on function posts_by(int) to anon, authenticated;`);
  expect(res.statusCode, res.body).toBe(200);
  token = await s.t.mintToken(ALICE);
});
afterAll(async () => {
  await s?.t.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function tsc(project: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(TSC, ['--noEmit', '-p', project], { cwd: ROOT, timeout: 120_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, output: `${stdout}${stderr}` });
    });
  });
}

describe('a blog written with the SDK, typed by plinth gen types', () => {
  it('compiles under strict against the generated types, and a wrong relation or column does not', async () => {
    const doc = await (await fetch(`${s.url}/api/v1/openapi.json`, { headers: { apikey: s.publicKey } })).json();
    writeFileSync(join(dir, 'database.types.ts'), generateTypes(doc as object));
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const sdk = relative(dir, SDK_INDEX).split('\\').join('/');
    writeFileSync(join(dir, 'app.ts'), APP.replace('%SDK%', sdk.startsWith('.') ? sdk : `./${sdk}`));
    const project = join(dir, 'tsconfig.json');
    writeFileSync(
      project,
      JSON.stringify({
        extends: join(ROOT, 'tsconfig.base.json'),
        compilerOptions: { noEmit: true, composite: false, declaration: false, sourceMap: false, types: [], rootDir: '/' },
        files: ['database.types.ts', 'app.ts'],
      }),
    );
    const ok = await tsc(project);
    expect(ok.output).toBe('');
    expect(ok.code).toBe(0);

    for (const [wrong, culprit] of [
      ["select('id, title, author(name), comments(count()), tags(name)')", "select('id, title, writer(name)')"],
      ["select('name, posts(id, title)')", "select('name, posts(id, titel)')"],
      [".eq('comments.approved', true)", ".eq('comments.aproved', true)"],
      ["rpc('posts_by', { author: id })", "rpc('posts_by', { author: String(id) })"],
    ]) {
      writeFileSync(join(dir, 'app.ts'), APP.replace('%SDK%', sdk.startsWith('.') ? sdk : `./${sdk}`).replace(wrong, culprit));
      const bad = await tsc(project);
      expect(bad.code, culprit).not.toBe(0);
    }
    writeFileSync(join(dir, 'app.ts'), APP.replace('%SDK%', sdk.startsWith('.') ? sdk : `./${sdk}`));
  });

  it('renders each page with one request, under the policies', async () => {
    const requests: string[] = [];
    const counting: typeof fetch = (input, init) => {
      requests.push(String(input));
      return fetch(input, init);
    };
    const app = (await import(pathToFileURL(join(dir, 'app.ts')).href)) as {
      blog: (url: string, key: string, fetch: typeof globalThis.fetch, accessToken: string) => BlogPages;
    };
    const pages = app.blog(s.url, s.publicKey, counting, token);
    const page = async <T>(render: () => Promise<T>): Promise<T> => {
      requests.length = 0;
      const out = await render();
      expect(requests).toHaveLength(1);
      return out;
    };

    expect(await page(() => pages.home())).toEqual([
      { id: 1, title: 'Hello world', author: { name: 'Ada' }, comments: [{ count: 3 }], tags: [{ name: 'pg' }, { name: 'rest' }] },
      { id: 3, title: 'Bob writes', author: { name: 'Bob' }, comments: [{ count: 2 }], tags: [{ name: 'cats' }] },
      // Cy is hidden by a policy: his post shows, without its author.
      { id: 4, title: 'From a hidden author', author: null, comments: [{ count: 0 }], tags: [{ name: 'pg' }] },
    ]);
    expect(await page(() => pages.post(1))).toEqual({
      title: 'Hello world',
      body: 'The first post about PostgreSQL rows',
      writer: { name: 'Ada', profiles: { bio: 'Writes about databases' } },
      comments: [
        { id: 1, body: 'Nice post', author: { name: 'Bob' }, replies: [{ body: 'Thanks to myself' }] },
        { id: 2, body: 'First!', author: null, replies: [] },
      ],
    });
    expect(await page(() => pages.tag('pg'))).toEqual({
      name: 'pg',
      posts: [
        { id: 1, title: 'Hello world' },
        { id: 4, title: 'From a hidden author' },
      ],
    });
    expect(await page(() => pages.search('cats or post'))).toEqual([
      { id: 1, kind: 'news' },
      { id: 3, kind: 'news' },
    ]);
    // Bob's draft (post 5) is his: Alice sees his published post only.
    expect(await page(() => pages.author(2))).toEqual([{ id: 3, title: 'Bob writes' }]);
    expect(await page(() => pages.saveNote(1, 'alice-1', 'edited'))).toBe('edited');
    expect(await page(() => pages.saveNote(2, 'bob-1', 'hijacked'))).toBe('rls_violation');
  });
});

/** The pages of the app module, for the dynamic import (the file is type-checked above, not here). */
interface BlogPages {
  home(): Promise<unknown>;
  post(id: number): Promise<unknown>;
  tag(name: string): Promise<unknown>;
  search(words: string): Promise<unknown>;
  author(id: number): Promise<unknown>;
  saveNote(id: number, slug: string, body: string): Promise<unknown>;
}
