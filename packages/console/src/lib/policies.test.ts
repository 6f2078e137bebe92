import { describe, expect, it } from 'vitest';
import { createPolicySql, editPolicySql, type PolicyRow, type PolicySpec, policyInWords, withoutBucket } from './policies';

// Policies in words, as the policy editor lists them: the catalog's own text (pg_policies, the
// runner's search path printing auth.uid() as uid()) read back into a sentence.

const row = (p: Partial<PolicyRow>): PolicyRow => ({
  name: 'p',
  command: 'SELECT',
  roles: ['anon', 'authenticated'],
  using: null,
  check: null,
  permissive: 'PERMISSIVE',
  ...p,
});

describe('policyInWords', () => {
  it('says who may do what to which rows', () => {
    expect(policyInWords(row({ using: 'true' }))).toBe(
      'Visitors without an account (anon) and signed-in users (authenticated) may read every row.',
    );
    expect(policyInWords(row({ command: 'ALL', roles: '{authenticated}', using: '(owner_id = uid())', check: '(owner_id = uid())' }))).toBe(
      'Signed-in users (authenticated) may read, add, change and delete the rows whose owner_id is their own id.',
    );
    expect(policyInWords(row({ command: 'INSERT', roles: ['authenticated'], check: '(author = auth.uid())' }))).toBe(
      'Signed-in users (authenticated) may add the rows whose author is their own id.',
    );
    expect(
      policyInWords(
        row({ command: 'UPDATE', roles: ['public'], using: '(done = false)', check: '(done = true)', permissive: 'RESTRICTIVE' }),
      ),
    ).toBe(
      'Everyone may change the rows where (done = false); new rows must satisfy (done = true) (restrictive: every other policy must allow it too).',
    );
  });

  it('names a bucket’s files and leaves its bucket condition out', () => {
    expect(policyInWords(row({ using: "(bucket_id = 'avatars'::text)" }), 'avatars')).toBe(
      'Visitors without an account (anon) and signed-in users (authenticated) may read every file of avatars.',
    );
    expect(
      policyInWords(
        row({
          command: 'ALL',
          roles: ['authenticated'],
          using: "((bucket_id = 'avatars'::text) AND (owner = uid()))",
          check: "((bucket_id = 'avatars'::text) AND (owner = uid()))",
        }),
        'avatars',
      ),
    ).toBe('Signed-in users (authenticated) may read, add, change and delete the files of avatars uploaded by them.');
  });

  it('withoutBucket keeps a condition about another bucket, and bucket names with regex characters', () => {
    expect(withoutBucket("((bucket_id = 'other'::text) AND true)", 'avatars')).toBe("((bucket_id = 'other'::text) AND true)");
    expect(withoutBucket("((bucket_id = 'a.(b)'::text) AND (size < 10))", 'a.(b)')).toBe('size < 10');
    expect(withoutBucket("(bucket_id = 'it''s'::text)", "it's")).toBe('true');
  });
});

// Review round 3, I8: a role name is an identifier like any other, quoted by `ident` (a role
// named in SQL to carry SQL stays one name in the SQL the editor writes).
describe('role names in the SQL the editor writes', () => {
  const hostile = 'authenticated; drop table notes; --' as PolicySpec['roles'][number];
  const spec: PolicySpec = { name: 'p', command: 'select', roles: ['anon', hostile], using: 'true', check: '' };
  const target = { kind: 'table', table: 'notes' } as const;

  it('are quoted in create policy and in alter policy, but for plain names and the keyword public', () => {
    expect(createPolicySql(target, spec)).toBe(
      'create policy "p" on "notes" for select to anon, "authenticated; drop table notes; --"\n  using (true);',
    );
    expect(editPolicySql(target, 'p', 'SELECT', spec)).toBe(
      'alter policy "p" on "notes" to anon, "authenticated; drop table notes; --"\n  using (true);',
    );
    expect(createPolicySql(target, { ...spec, roles: ['public' as PolicySpec['roles'][number]] })).toContain('to public\n');
    expect(createPolicySql(target, { ...spec, roles: ['Admins' as PolicySpec['roles'][number]] })).toContain('to "Admins"');
    expect(createPolicySql(target, { ...spec, roles: ['a"b' as PolicySpec['roles'][number]] })).toContain('to "a""b"');
  });
});
