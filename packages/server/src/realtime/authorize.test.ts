import { describe, expect, it } from 'vitest';
import type { Db } from '../db/index.js';
import type { Principal } from '../http/index.js';
import { createAuthorizer, Images } from './authorize.js';
import type { CompiledFilter } from './filter.js';
import type { Change } from '../changes/index.js';
import type { RoleAccess, TableAccess } from './policies.js';

// Security review round 3, R3: a filter tested in memory on a row the subscriber may not see
// leaks that row through its cost. The policy is decided first; a policy PostgreSQL decides
// takes the filter with it, and the filter never runs in memory on that row.

const MEMBERSHIP = 'exists (select 1 from members m where m.workspace_id = notes.workspace_id and m.user_id = auth.uid())';

function role(over: Partial<RoleAccess>): RoleAccess {
  return {
    columns: new Set(['id', 'workspace_id', 'body']),
    allColumns: false,
    rls: true,
    permissive: [{ kind: 'sql' }],
    restrictive: [],
    fast: false,
    sql: MEMBERSHIP,
    ...over,
  };
}

function access(authenticated: RoleAccess): TableAccess {
  const none = role({ columns: new Set() });
  return { table: 'notes', pk: ['id'], roles: { anon: none, service: role({ rls: false, sql: 'true' }), authenticated } };
}

/** A filter that would decide the row in memory (false), counting each time it is run. */
function countingFilter(): CompiledFilter & { runs: number } {
  const f = {
    runs: 0,
    sql: '"notes"."body" like $2[1]::text',
    values: ['ws1 board%'],
    columns: ['body'],
    test: () => {
      f.runs++;
      return false as const;
    },
  };
  return f;
}

/** A database that records the checks sent to it and answers each with `answer`. */
function recordingDb(answer: boolean) {
  const sent: string[][] = [];
  const db = {
    runAs: async (_ctx: unknown, _sql: string, params: string[]) => {
      sent.push(params);
      const n = (params[3].match(/,/g)?.length ?? 0) / 2 + 1;
      return {
        body: `{${Array(n)
          .fill(answer ? 't' : 'f')
          .join(',')}}`,
      };
    },
  } as unknown as Db;
  return { db, sent };
}

const eve: Principal = {
  role: 'authenticated',
  claims: '{"role":"authenticated","sub":"00000000-0000-4000-8000-000000000002"}',
  sub: '00000000-0000-4000-8000-000000000002',
  uid: '00000000-0000-4000-8000-000000000002',
  sessionId: null,
  payload: {},
  stepUp: false,
};

const change: Change = {
  seq: 1,
  table: 'notes',
  op: 'insert',
  row: '{"id":1,"workspace_id":1,"body":"ws1 board minutes: acquisition"}',
  old: null,
  writtenAt: new Date(0).toISOString(),
};

describe('realtime authorization decides the policy before the filter (review round 3, R3)', () => {
  it('a row whose policy PostgreSQL decides never has the filter run in memory: both go to PostgreSQL together', async () => {
    const filter = countingFilter();
    const { db, sent } = recordingDb(false);
    const ops = await createAuthorizer(db).decide([
      { images: new Images(change), access: access(role({})), audiences: [{ events: new Set(['insert']), filter, principal: eve }] },
    ]);
    expect(ops).toEqual([[null]]);
    expect(filter.runs).toBe(0);
    // The one check sent is `(membership) and (filter)`, with the filter's value.
    expect(sent).toHaveLength(1);
    const [exprs] = JSON.parse(sent[0][0]) as string[];
    expect(exprs).toContain(`(${MEMBERSHIP}) and (${filter.sql})`);
    expect(sent[0][2]).toContain('ws1 board%');
  });

  it('a row the policy refuses in memory has no filter run and no check sent', async () => {
    const filter = countingFilter();
    const { db, sent } = recordingDb(true);
    const owner = role({ permissive: [{ kind: 'owner', column: 'author' }], fast: true });
    const ops = await createAuthorizer(db).decide([
      { images: new Images(change), access: access(owner), audiences: [{ events: new Set(['insert']), filter, principal: eve }] },
    ]);
    expect(ops).toEqual([[null]]);
    expect(filter.runs).toBe(0);
    expect(sent).toHaveLength(0);
  });

  it('a row the policy admits in memory has the filter decided in memory, with no statement', async () => {
    const filter = countingFilter();
    const { db, sent } = recordingDb(true);
    const ops = await createAuthorizer(db).decide([
      {
        images: new Images(change),
        access: access(role({ permissive: [{ kind: 'true' }], fast: true, sql: 'true' })),
        audiences: [{ events: new Set(['insert']), filter, principal: eve }],
      },
    ]);
    expect(ops).toEqual([[null]]);
    expect(filter.runs).toBe(1);
    expect(sent).toHaveLength(0);
  });
});
