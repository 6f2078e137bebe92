/**
 * The blog schema of the relation, function and logic tests (docs/api.md): authors (one of them
 * hidden by a policy), their profiles (one-to-one), posts with an author and an editor (two keys
 * to authors), comments (one hidden by a policy, replies to comments), tags through post_tags,
 * and notes each user owns. Owner policies throughout, as an app would write them.
 */
export const ALICE = '11111111-1111-4111-8111-111111111111';
export const BOB = '22222222-2222-4222-8222-222222222222';
export const CY = '33333333-3333-4333-8333-333333333333';

export const BLOG_SQL = `
create table authors (id int primary key, user_id uuid not null, name text not null, hidden boolean not null default false);
create policy read_authors on authors for select using (not hidden or user_id = auth.uid());

create table profiles (author_id int primary key references authors, bio text);
create policy read_profiles on profiles for select using (true);

create table posts (
  id int primary key,
  author_id int not null references authors,
  editor_id int references authors,
  title text not null,
  body text not null default '',
  published boolean not null default false,
  score int,
  meta jsonb,
  search tsvector generated always as (to_tsvector('english', title || ' ' || body)) stored,
  owner uuid not null default auth.uid()
);
create policy read_posts on posts for select using (published or owner = auth.uid());
create policy write_posts on posts for all using (owner = auth.uid()) with check (owner = auth.uid());

create table comments (
  id int primary key,
  post_id int not null references posts,
  author_id int references authors,
  parent_id int references comments,
  body text not null,
  approved boolean not null default true,
  owner uuid not null default auth.uid()
);
create policy read_comments on comments for select using (approved or owner = auth.uid());

create table tags (id int primary key, name text not null unique);
create policy read_tags on tags for select using (true);
create table post_tags (post_id int references posts, tag_id int references tags, primary key (post_id, tag_id));
create policy read_post_tags on post_tags for select using (true);

create table notes (id int primary key, slug text unique, owner uuid not null default auth.uid(), body text);
create policy own_notes on notes for all using (owner = auth.uid()) with check (owner = auth.uid());

insert into authors values (1, '${ALICE}', 'Ada', false), (2, '${BOB}', 'Bob', false), (3, '${CY}', 'Cy', true);
insert into profiles values (1, 'Writes about databases'), (2, 'Edits');
insert into posts (id, author_id, editor_id, title, body, published, score, meta, owner) values
  (1, 1, 2, 'Hello world', 'The first post about PostgreSQL rows', true, 10, '{"kind": "news", "tags": ["pg", "rest"], "n": 1}', '${ALICE}'),
  (2, 1, null, 'Draft', 'Not yet: cats and dogs', false, 5, '{"kind": "draft"}', '${ALICE}'),
  (3, 2, 1, 'Bob writes', 'Cats are great', true, 7, '{"kind": "news", "tags": ["cats"], "n": 2}', '${BOB}'),
  (4, 3, null, 'From a hidden author', 'Mystery', true, null, null, '${CY}'),
  (5, 2, null, 'Bob draft', 'Secret plans', false, 1, null, '${BOB}');
insert into comments (id, post_id, author_id, parent_id, body, approved, owner) values
  (1, 1, 2, null, 'Nice post', true, '${BOB}'),
  (2, 1, 3, null, 'First!', true, '${CY}'),
  (3, 1, 2, 1, 'Thanks to myself', true, '${BOB}'),
  (4, 1, 2, null, 'Spam', false, '${BOB}'),
  (5, 3, 1, null, 'Great cats', true, '${ALICE}'),
  (6, 3, 1, 5, 'Pending reply', false, '${ALICE}');
insert into tags values (1, 'pg'), (2, 'rest'), (3, 'cats');
insert into post_tags values (1, 1), (1, 2), (3, 3), (4, 1);
insert into notes values (1, 'alice-1', '${ALICE}', 'alice note'), (2, 'bob-1', '${BOB}', 'bob note');
`;
