/**
 * The `select()` grammar at the type level (docs/api.md, "Embedding"): what
 * `select('id, writer:author(name), comments!inner(body, user(name)), count()')` returns, and which
 * names in it are wrong. Only types; the string is sent as written.
 *
 * Embedded relations are found in the table's `Relationships` (written by `plinth gen types`):
 * `author: { table: 'authors'; cardinality: 'one' }` makes `author(name)` an object or null
 * (`!inner`: never null), `cardinality: 'many'` an array. A table without `Relationships` (a
 * hand-written or older type) embeds as `any`, unchecked.
 */
import type { GenericSchema } from './types.js';

/** A JSON value, as `meta->kind` returns it. */
export type JsonValue = string | number | boolean | null | { [key: string]: JsonValue | undefined } | JsonValue[];

type Whitespace = ' ' | '\n' | '\t' | '\r';
type Trim<S extends string> = S extends `${Whitespace}${infer R}` ? Trim<R> : S extends `${infer R}${Whitespace}` ? Trim<R> : S;

/** Splits on the commas outside parentheses, one character at a time (tail-recursive). */
type SplitTop<
  S extends string,
  Cur extends string = '',
  Depth extends unknown[] = [],
  Out extends string[] = [],
> = S extends `${infer C}${infer Rest}`
  ? C extends '('
    ? SplitTop<Rest, `${Cur}(`, [...Depth, 0], Out>
    : C extends ')'
      ? SplitTop<Rest, `${Cur})`, Depth extends [unknown, ...infer D] ? D : [], Out>
      : C extends ','
        ? Depth extends []
          ? SplitTop<Rest, '', [], [...Out, Trim<Cur>]>
          : SplitTop<Rest, `${Cur},`, Depth, Out>
        : SplitTop<Rest, `${Cur}${C}`, Depth, Out>
  : [...Out, Trim<Cur>];

type Aggregate = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** One item of a select list, classified. */
type Item =
  | { kind: 'star' }
  | { kind: 'column'; key: string; column: string; json: 'none' | 'json' | 'text' }
  | { kind: 'aggregate'; key: string; fn: Aggregate; column: string }
  | { kind: 'embed'; key: string; relation: string; inner: boolean; body: string };

/** The key after the last `->` or `->>` of a path, and whether the last step is `->>`. */
type LastKey<P extends string> = P extends `${string}->${infer R}` ? LastKey<R> : P extends `>${infer K}` ? K : P;
type EndsAsText<P extends string> = P extends `${string}->${infer R}` ? EndsAsText<R> : P extends `>${string}` ? true : false;

/** `author!posts_author_id_fkey!inner` → the relation as `Relationships` names it, and `!inner`. */
type Modifiers<H extends string> = H extends `${infer N}!inner`
  ? { relation: N; inner: true }
  : H extends `${infer N}!left`
    ? { relation: N; inner: false }
    : { relation: H; inner: false };
type BaseName<R extends string> = R extends `${infer N}!${string}` ? N : R;

type Body<S extends string, Alias extends string | null> = S extends `${infer Head}(${infer Inner})`
  ? Trim<Head> extends Aggregate
    ? { kind: 'aggregate'; key: Alias extends string ? Alias : Trim<Head>; fn: Trim<Head>; column: Trim<Inner> }
    : {
        kind: 'embed';
        key: Alias extends string ? Alias : BaseName<Modifiers<Trim<Head>>['relation']>;
        relation: Modifiers<Trim<Head>>['relation'];
        inner: Modifiers<Trim<Head>>['inner'];
        body: Trim<Inner>;
      }
  : S extends `${infer Column}->${infer Path}`
    ? {
        kind: 'column';
        key: Alias extends string ? Alias : LastKey<Path>;
        column: Column;
        json: EndsAsText<Path> extends true ? 'text' : 'json';
      }
    : { kind: 'column'; key: Alias extends string ? Alias : S; column: S; json: 'none' };

type ParseItem<S extends string> = S extends '*'
  ? { kind: 'star' }
  : S extends `${infer A}:${infer B}`
    ? A extends `${string}(${string}`
      ? Body<S, null>
      : Body<Trim<B>, Trim<A>>
    : Body<S, null>;

type RowOf<Schema extends GenericSchema, T extends string> = T extends keyof Schema['Tables']
  ? Schema['Tables'][T]['Row']
  : T extends keyof NonNullable<Schema['Views']>
    ? NonNullable<Schema['Views']>[T]['Row']
    : never;

/** A table's `Relationships`, or null when its type declares none (embedding is then unchecked). */
type RelationsOf<Schema extends GenericSchema, T extends string> = T extends keyof Schema['Tables']
  ? Schema['Tables'][T] extends { Relationships: infer R }
    ? R
    : null
  : null;

type EmbedValue<Schema extends GenericSchema, Rels, I extends Item> = I extends { kind: 'embed'; relation: infer R; inner: infer Inner }
  ? Rels extends null
    ? // biome-ignore lint/suspicious/noExplicitAny: a table type without Relationships embeds unchecked, as an untyped client does
      any
    : R extends keyof Rels
      ? Rels[R] extends { table: infer Target extends string; cardinality: infer Card }
        ? Card extends 'one'
          ? Inner extends true
            ? SelectResult<Schema, Target, I['body']>
            : SelectResult<Schema, Target, I['body']> | null
          : SelectResult<Schema, Target, I['body']>[]
        : never
      : never
  : never;

type ItemResult<Schema extends GenericSchema, Row, Rels, I> = I extends { kind: 'star' }
  ? Row
  : I extends { kind: 'column'; key: infer K extends string; column: infer C; json: infer J }
    ? { [_ in K]: J extends 'text' ? string | null : J extends 'json' ? JsonValue : C extends keyof Row ? Row[C] : unknown }
    : I extends { kind: 'aggregate'; key: infer K extends string; fn: infer F; column: infer C }
      ? { [_ in K]: F extends 'count' ? number : F extends 'min' | 'max' ? (C extends keyof Row ? Row[C] | null : unknown) : number | null }
      : I extends { kind: 'embed'; key: infer K extends string; body: infer B }
        ? B extends ''
          ? unknown
          : I extends Item
            ? { [_ in K]: EmbedValue<Schema, Rels, I> }
            : never
        : unknown;

type Merge<Schema extends GenericSchema, Row, Rels, Items extends string[]> = Items extends [
  infer H extends string,
  ...infer Rest extends string[],
]
  ? ItemResult<Schema, Row, Rels, ParseItem<H>> & Merge<Schema, Row, Rels, Rest>
  : unknown;

type Prettify<T> = { [K in keyof T]: T[K] } & {};

/**
 * The row type `select(Q)` returns from table `T`: columns, aliases, JSON paths, aggregates and
 * embedded relations (nested).
 * @example SelectResult<Schema, 'posts', 'id, author(name)'> // { id: number; author: { name: string } | null }
 */
export type SelectResult<Schema extends GenericSchema, T extends string, Q extends string> = Q extends '*' | ''
  ? RowOf<Schema, T>
  : Prettify<Merge<Schema, RowOf<Schema, T>, RelationsOf<Schema, T>, SplitTop<Q>>>;

type ItemErrors<Schema extends GenericSchema, Row, Rels, I> = I extends { kind: 'column'; column: infer C extends string }
  ? C extends keyof Row
    ? never
    : `unknown column: ${C}`
  : I extends { kind: 'aggregate'; fn: infer F; column: infer C extends string }
    ? C extends '' | '*'
      ? F extends 'count'
        ? never
        : `${F & string}() needs a column`
      : C extends keyof Row
        ? never
        : `unknown column: ${C}`
    : I extends { kind: 'embed'; relation: infer R extends string; body: infer B extends string }
      ? Rels extends null
        ? never
        : R extends keyof Rels
          ? Rels[R] extends { table: infer Target extends string }
            ? SelectErrors<Schema, Target, B>
            : never
          : `unknown relation: ${R}`
      : never;

type AllErrors<Schema extends GenericSchema, Row, Rels, Items extends string[]> = Items extends [
  infer H extends string,
  ...infer Rest extends string[],
]
  ? ItemErrors<Schema, Row, Rels, ParseItem<H>> | AllErrors<Schema, Row, Rels, Rest>
  : never;

/** The wrong names of a select list, as messages (`unknown column: titel`); never when it is right. */
export type SelectErrors<Schema extends GenericSchema, T extends string, Q extends string> = Q extends '*' | ''
  ? never
  : AllErrors<Schema, RowOf<Schema, T>, RelationsOf<Schema, T>, SplitTop<Q>>;

/**
 * `Q` itself when every name in it is right, otherwise a message type that no string matches,
 * so `select('id,titel')` fails to compile and names the culprit.
 */
export type CheckSelectOf<Schema extends GenericSchema, T extends string, Q extends string> = string extends Q
  ? Q
  : [SelectErrors<Schema, T, Q>] extends [never]
    ? Q
    : SelectErrors<Schema, T, Q>;

/**
 * What `.eq('comments.approved', true)` may name: the table's columns, and `<relation>.<column>`
 * for each relation it may embed (by its plain name; an alias is not known here).
 */
export type FilterColumns<Schema extends GenericSchema, T extends string> = RowOf<Schema, T> &
  EmbeddedColumns<Schema, RelationsOf<Schema, T>>;

type PlainRelation<Rels> = { [K in keyof Rels & string]: K extends `${string}!${string}` ? never : K }[keyof Rels & string];

type EmbeddedColumns<Schema extends GenericSchema, Rels> = Rels extends null
  ? unknown
  : {
      [P in EmbeddedKey<Schema, Rels>]: P extends `${infer K}.${infer C}`
        ? K extends keyof Rels
          ? Rels[K] extends { table: infer Target extends string }
            ? C extends keyof RowOf<Schema, Target>
              ? RowOf<Schema, Target>[C]
              : never
            : never
          : never
        : never;
    };

type EmbeddedKey<Schema extends GenericSchema, Rels> = {
  [K in PlainRelation<Rels>]: Rels[K] extends { table: infer Target extends string }
    ? `${K}.${keyof RowOf<Schema, Target> & string}`
    : never;
}[PlainRelation<Rels>];
