/**
 * Who sees a change, decided per subscriber as of the row written (docs/realtime.md): an insert
 * or update goes to those whose role may select the new row, a delete to those who could select
 * the old one, and an update that takes a row out of a subscriber's view (policy or filter) is a
 * `leave` for that subscriber. Policies of the fast shapes are decided in memory (policies.ts),
 * and a filter is tested in memory (filter.ts) only once the policy there says the row is
 * visible; whatever is left goes to PostgreSQL in one statement for the whole
 * batch of changes and all their subscribers (realtime.authorize, migration 0080).
 */
import type { Db } from '../db/index.js';
import type { Principal } from '../http/index.js';
import { quoteIdent } from '../rest/index.js';
import type { CompiledFilter, Verdict } from './filter.js';
import { type RawRow, splitRow } from '../changes/index.js';
import type { Change } from '../changes/index.js';
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
}

/** The statement that evaluates a policy condition and a filter on a row image (`$1`), values `$2`. */
function statement(table: string, policySql: string, filterSql: string): string {
  const t = quoteIdent(table);
  return `select (${policySql}) and (${filterSql}) from jsonb_populate_record(null::"public".${t}, $1) as ${t}`;
}

const AUTHORIZE_SQL =
  'select realtime.authorize($1[1]::jsonb, $1[2]::jsonb, $1[3]::jsonb, $1[4]::int[])::text as body, 1::int8 as n, null::int8 as total';
const SERVICE_CONTEXT = { role: 'service' as const, claims: '{"role":"service"}', uid: null };

/** Decided in memory (true, false), or the index of a check PostgreSQL answers. */
type Visible = boolean | number;

export interface Authorizer {
  /**
   * The op each audience receives for each change (null: nothing), in one database statement at
   * most for the whole batch; none at all when every policy and filter is decided in memory.
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
      // Visible in a row image: the policies and the filter, in memory when they can be.
      const visible = (images: Images, which: 'row' | 'old', access: TableAccess, role: RoleAccess, a: Audience): Visible => {
        const fields = images[which];
        if (fields === null) return false;
        // The policy first: the filter runs in memory only on a row the subscriber may see, so
        // its cost says nothing about rows it may not (review round 3, R3). A policy PostgreSQL
        // decides takes the filter with it, in one condition, never tested here on that row.
        const p = policy(role, fields, a.principal.uid);
        if (p === false) return false;
        const f = p === true ? a.filter.test((c) => fields.get(c)) : null;
        if (f === false) return false;
        if (f === true) return true;
        pending.push({
          sql: statement(access.table, p === null ? role.sql : 'true', a.filter.sql),
          image: (which === 'row' ? images.change.row : images.change.old) as string,
          principal: a.principal,
          values: a.filter.values,
        });
        return pending.length - 1;
      };
      // Per audience: [what the op is made of] decided now, or pointing at pending checks.
      const plans = items.map(({ images, access, audiences }) =>
        audiences.map((a): [ChangeEvent, Visible, Visible] | null => {
          const role = access.roles[a.principal.role];
          if (role.columns.size === 0) return null;
          const op = images.change.op;
          if (op === 'insert') return a.events.has('insert') ? [op, visible(images, 'row', access, role, a), false] : null;
          if (op === 'delete') return a.events.has('delete') ? [op, false, visible(images, 'old', access, role, a)] : null;
          if (!a.events.has('update') && !a.events.has('delete')) return null;
          const now = visible(images, 'row', access, role, a);
          return [op, now, now === true ? false : visible(images, 'old', access, role, a)];
        }),
      );
      const answers = pending.length > 0 ? await runChecks(db, pending, onStatement) : [];
      const yes = (v: Visible) => (v === true ? true : v === false ? false : answers[v] === true);
      return plans.map((row, i) =>
        row.map((plan, j): ChangeOp | null => {
          if (plan === null) return null;
          const [op, now, before] = plan;
          if (op === 'insert') return yes(now) ? 'insert' : null;
          if (op === 'delete') return yes(before) ? 'delete' : null;
          // An update: visible now → update (also when it comes into view); visible before only → leave.
          if (yes(now)) return items[i].audiences[j].events.has('update') ? 'update' : null;
          return yes(before) ? 'leave' : null;
        }),
      );
    },
  };
}

/** One statement for every pending check: statements and rows deduplicated, grouped by subscriber. */
async function runChecks(db: Db, pending: Pending[], onStatement?: () => void): Promise<boolean[]> {
  const exprs = new Map<string, number>();
  const images = new Map<string, number>();
  const subs = new Map<string, number>();
  const subList: string[] = [];
  const triples: Array<[number, number, number, number]> = [];
  pending.forEach((p, k) => {
    const e = exprs.get(p.sql) ?? exprs.set(p.sql, exprs.size + 1).get(p.sql) ?? 0;
    const r = images.get(p.image) ?? images.set(p.image, images.size + 1).get(p.image) ?? 0;
    const who = JSON.stringify({ role: p.principal.role, claims: p.principal.claims, uid: p.principal.uid ?? '-', values: p.values });
    let s = subs.get(who);
    if (s === undefined) {
      s = subs.size + 1;
      subs.set(who, s);
      subList.push(who);
    }
    triples.push([e, r, s, k]);
  });
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
  const got = (body ?? '{}').slice(1, -1).split(',');
  const answers: boolean[] = new Array(pending.length).fill(false);
  triples.forEach(([, , , k], i) => {
    answers[k] = got[i] === 't' || got[i] === 'true';
  });
  return answers;
}
