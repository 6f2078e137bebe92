/**
 * Who sees a change, decided per subscriber as of the row written (docs/realtime.md): an insert
 * or update goes to those whose role may select the new row, a delete to those who could select
 * the old one, and an update that takes a row out of a subscriber's view (policy or filter) is a
 * `leave` for that subscriber. Policies of the fast shapes and most filters are decided in memory
 * (policies.ts, filter.ts); whatever is left goes to PostgreSQL in one statement for the whole
 * batch of changes and all their subscribers (realtime.authorize, migration 0080).
 */
import type { Db } from '../db/index.js';
import type { Principal } from '../http/index.js';
import { quoteIdent } from '../rest/index.js';
import type { CompiledFilter, Verdict } from './filter.js';
import { type RawRow, splitRow } from './json-row.js';
import type { Change } from './log.js';
import type { Predicate, RoleAccess, TableAccess } from './policies.js';
import type { ChangeEvent, ChangeOp } from './protocol.js';

/** What authorization needs of a subscription. */
export interface Audience {
  events: ReadonlySet<ChangeEvent>;
  filter: CompiledFilter;
  principal: Principal;
}

/** A change with its row images split once for every subscriber. */
export class Images {
  private rowFields: RawRow | null | undefined;
  private oldFields: RawRow | null | undefined;
  constructor(readonly change: Change) {}
  get row(): RawRow | null {
    if (this.rowFields === undefined) this.rowFields = this.change.row === null ? null : splitRow(this.change.row);
    return this.rowFields;
  }
  get old(): RawRow | null {
    if (this.oldFields === undefined) this.oldFields = this.change.old === null ? null : splitRow(this.change.old);
    return this.oldFields;
  }
}

const and = (a: Verdict, b: Verdict): Verdict => (a === false || b === false ? false : a === null || b === null ? null : true);

function predicate(p: Predicate, fields: RawRow, uid: string | null): Verdict {
  switch (p.kind) {
    case 'true':
      return true;
    case 'owner':
      return uid !== null && fields.get(p.column) === `"${uid}"`;
    default:
      return null;
  }
}

/** The role's policies on a row: permissive ORed, restrictive ANDed; null: PostgreSQL decides. */
function policy(access: RoleAccess, fields: RawRow, uid: string | null): Verdict {
  if (!access.rls) return true;
  if (access.permissive.length === 0) return false;
  let any: Verdict = false;
  for (const p of access.permissive) {
    const v = predicate(p, fields, uid);
    if (v === true) {
      any = true;
      break;
    }
    if (v === null) any = null;
  }
  let all: Verdict = true;
  for (const p of access.restrictive) all = and(all, predicate(p, fields, uid));
  return and(any, all);
}

/** A check PostgreSQL makes: the statement, the row (the change's new or old image), the subscriber. */
interface Pending {
  sql: string;
  image: string;
  principal: Principal;
  values: string[];
  resolve(v: boolean): void;
}

/** The statement that evaluates a policy condition and a filter on a row image (`$1`), values `$2`. */
function statement(table: string, policySql: string, filterSql: string): string {
  const t = quoteIdent(table);
  return `select (${policySql}) and (${filterSql}) from jsonb_populate_record(null::"public".${t}, $1) as ${t}`;
}

const AUTHORIZE_SQL =
  'select realtime.authorize($1[1]::jsonb, $1[2]::jsonb, $1[3]::jsonb, $1[4]::int[])::text as body, 1::int8 as n, null::int8 as total';
const SERVICE_CONTEXT = { role: 'service' as const, claims: '{"role":"service"}', uid: null };

export interface Authorizer {
  /**
   * The op each audience receives for each change (null: nothing), in one database statement at
   * most for the whole batch.
   * @example const ops = await authorizer.decide([{ images, access, audiences }]);
   */
  decide(items: Array<{ images: Images; access: TableAccess; audiences: Audience[] }>): Promise<Array<Array<ChangeOp | null>>>;
}

/**
 * @example const authorizer = createAuthorizer(db, () => statements.inc());
 */
export function createAuthorizer(db: Db, onStatement?: () => void): Authorizer {
  return {
    async decide(items) {
      const pending: Pending[] = [];
      const results = items.map(({ images, access, audiences }) =>
        audiences.map((a) => {
          const role = access.roles[a.principal.role];
          if (role.columns.size === 0) return Promise.resolve(null);
          const uid = a.principal.uid;
          // Visible in a row image: the policies and the filter, in memory when they can be.
          const visible = (image: 'row' | 'old'): Promise<boolean> => {
            const fields = images[image];
            if (fields === null) return Promise.resolve(false);
            const p = policy(role, fields, uid);
            if (p === false) return Promise.resolve(false);
            const f = a.filter.test((c) => fields.get(c));
            if (f === false) return Promise.resolve(false);
            if (p === true && f === true) return Promise.resolve(true);
            return new Promise<boolean>((resolve) =>
              pending.push({
                sql: statement(access.table, p === null ? role.sql : 'true', f === null ? a.filter.sql : 'true'),
                image: (image === 'row' ? images.change.row : images.change.old) as string,
                principal: a.principal,
                values: f === null ? a.filter.values : [],
                resolve,
              }),
            );
          };
          const op = images.change.op;
          if (op === 'insert') return a.events.has('insert') ? visible('row').then((v) => (v ? 'insert' : null)) : Promise.resolve(null);
          if (op === 'delete') return a.events.has('delete') ? visible('old').then((v) => (v ? 'delete' : null)) : Promise.resolve(null);
          // An update: visible now → update (also when it comes into view); visible before only → leave.
          const wantsUpdate = a.events.has('update');
          const wantsLeave = wantsUpdate || a.events.has('delete');
          if (!wantsLeave) return Promise.resolve(null);
          const now = visible('row');
          const before = visible('old');
          return Promise.all([now, before]).then(([n, b]): ChangeOp | null => (n ? (wantsUpdate ? 'update' : null) : b ? 'leave' : null));
        }),
      );
      if (pending.length > 0) await runChecks(db, pending, onStatement);
      return Promise.all(results.map((r) => Promise.all(r)));
    },
  };
}

/** One statement for every pending check: statements and rows deduplicated, grouped by subscriber. */
async function runChecks(db: Db, pending: Pending[], onStatement?: () => void): Promise<void> {
  const exprs = new Map<string, number>();
  const images = new Map<string, number>();
  const subs = new Map<string, number>();
  const subList: string[] = [];
  const triples: Array<[number, number, number, Pending]> = [];
  for (const p of pending) {
    const e = exprs.get(p.sql) ?? exprs.set(p.sql, exprs.size + 1).get(p.sql) ?? 0;
    const r = images.get(p.image) ?? images.set(p.image, images.size + 1).get(p.image) ?? 0;
    const who = JSON.stringify({ role: p.principal.role, claims: p.principal.claims, uid: p.principal.uid ?? '-', values: p.values });
    let s = subs.get(who);
    if (s === undefined) {
      s = subs.size + 1;
      subs.set(who, s);
      subList.push(who);
    }
    triples.push([e, r, s, p]);
  }
  // Grouped by subscriber: the function switches role and claims once per group.
  triples.sort((a, b) => a[2] - b[2]);
  const params = [
    JSON.stringify([...exprs.keys()]),
    `[${[...images.keys()].join(',')}]`,
    `[${subList.join(',')}]`,
    `{${triples.map(([e, r, s]) => `${e},${r},${s}`).join(',')}}`,
  ];
  onStatement?.();
  const { body } = await db.runAs(SERVICE_CONTEXT, AUTHORIZE_SQL, params, true);
  const answers = (body ?? '{}').slice(1, -1).split(',');
  triples.forEach(([, , , p], i) => {
    p.resolve(answers[i] === 't' || answers[i] === 'true');
  });
}
