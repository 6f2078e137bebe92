/** Logic groups: `or=(eq.status.open,and(gt.priority.3,is.owner.null))`. Pure; throws only ApiError. */
import { LOGIC_OPERATORS } from '@plinth/shared';
import { invalidParameter, isOperator, leaf } from './filter.js';
import { quoted } from './list.js';
import type { Condition, LogicGroup } from './types.js';

const LOGIC = new Set<string>(LOGIC_OPERATORS);
/** Deeper groups than this are refused: nobody writes them, and each level costs stack. */
export const MAX_GROUP_DEPTH = 16;

/**
 * The value of `or=`, `and=`, `not.or=`… : `(<condition>,<condition>,…)` where a condition is
 * `[not.]<op>.<column>.<value>` or a nested `[not.]or(…)` / `[not.]and(…)`. A column or value
 * holding `.` (columns only), `,`, `(` or `)` is double-quoted; `in` takes `(a,"b,c")`.
 * @example parseGroup('or', 'or', false, '(eq.status.open,is.owner.null)')
 *   // { op: 'or', negate: false, items: [{ op: 'eq', column: 'status', value: 'open' }, { op: 'is', … }] }
 */
export function parseGroup(param: string, op: LogicGroup['op'], negate: boolean, value: string): LogicGroup {
  const p = new GroupParser(param, value);
  const group = p.group(op, negate, 1);
  if (p.i !== value.length) p.fail(`unexpected text after the closing parenthesis`);
  return group;
}

class GroupParser {
  i = 0;
  constructor(
    readonly param: string,
    readonly s: string,
  ) {}

  fail(what: string): never {
    throw invalidParameter(
      this.param,
      `"${this.param}": ${what} at character ${this.i + 1}. Write (<op>.<column>.<value>,…), ` +
        'nesting or(…) and and(…); double-quote a column or value holding . , ( or ).',
    );
  }

  expect(c: string): void {
    if (this.s[this.i] !== c) this.fail(`expected "${c}"`);
    this.i++;
  }

  group(op: LogicGroup['op'], negate: boolean, depth: number): LogicGroup {
    if (depth > MAX_GROUP_DEPTH) this.fail(`groups nest deeper than ${MAX_GROUP_DEPTH} levels`);
    this.expect('(');
    const items: Condition[] = [];
    for (;;) {
      items.push(this.item(depth));
      if (this.s[this.i] === ',') {
        this.i++;
        continue;
      }
      this.expect(')');
      return { op, negate, items };
    }
  }

  /** A word up to `.` or `(`: an operator, `not`, `or`, `and`. */
  word(): string {
    const start = this.i;
    while (this.i < this.s.length && !'.(),'.includes(this.s[this.i])) this.i++;
    return this.s.slice(start, this.i);
  }

  item(depth: number): Condition {
    let negate = false;
    let w = this.word();
    if (w === 'not' && this.s[this.i] === '.') {
      negate = true;
      this.i++;
      w = this.word();
    }
    if (LOGIC.has(w) && this.s[this.i] === '(') return this.group(w as LogicGroup['op'], negate, depth + 1);
    let op = w;
    if (this.s[this.i] === '(') {
      // fts(<config>), eq(any)…
      const close = this.s.indexOf(')', this.i);
      if (close === -1) this.fail(`${w}( is not closed`);
      op = this.s.slice(this.i - w.length, close + 1);
      this.i = close + 1;
    }
    if (!isOperator(op)) this.fail(op === '' ? 'expected an operator' : `unknown operator "${op}"`);
    this.expect('.');
    const column = this.s[this.i] === '"' ? this.quoted() : this.bare('.');
    this.expect('.');
    const quantified = op.endsWith('(any)') || op.endsWith('(all)');
    if (op === 'in' || quantified) {
      // in.id.(1,2); eq(any).id.{1,2} (or (1,2))
      const close = quantified && this.s[this.i] === '{' ? '}' : ')';
      this.expect(close === '}' ? '{' : '(');
      const list: string[] = [];
      if (this.s[this.i] === close) {
        this.i++;
      } else {
        for (;;) {
          list.push(this.s[this.i] === '"' ? this.quoted() : this.bare(',', close));
          if (this.s[this.i] === ',') {
            this.i++;
            continue;
          }
          this.expect(close);
          break;
        }
      }
      return leaf(this.param, op, column, '', negate, list);
    }
    const value = this.s[this.i] === '"' ? this.quoted() : this.bare(',');
    return leaf(this.param, op, column, value, negate);
  }

  quoted(): string {
    const [buf, j] = quoted(this.s, this.i, this.param);
    this.i = j;
    return buf;
  }

  /** Unquoted text up to `stop` (`.` for a column, `,` for a value) or `)`; `(` must be quoted. */
  bare(stop: string, close = ')'): string {
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.s[this.i];
      if (c === stop || c === close || c === ')' || c === ',') break;
      if (c === '(' || c === '"') this.fail(`double-quote a column or value holding "${c}"`);
      this.i++;
    }
    return this.s.slice(start, this.i);
  }
}
