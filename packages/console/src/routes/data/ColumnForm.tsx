import { CONTROL } from '../../components/QueryControls';
import { Button } from '../../components/ui';
import { COLUMN_TYPES, type ColumnSpec, DEFAULTS, ON_DELETE, type OnDelete } from '../../lib/ddl';
import type { TableDoc } from '../../lib/openapi';

const DEFAULT_CHOICES: Array<[string, string]> = [
  ['', 'No default'],
  [DEFAULTS.identity, 'Identity (1, 2, 3…)'],
  [DEFAULTS.uuid, 'Random uuid'],
  [DEFAULTS.now, 'Now'],
  [DEFAULTS.owner, 'The signed-in user (auth.uid())'],
];

/**
 * One column of the table editor: name, type, default, nullable, unique, primary key, and a
 * foreign key to a column of another table with its on-delete rule. Every control is named
 * after the column ("Type of title"), so a form of many columns stays readable to a screen reader.
 */
export function ColumnForm(props: {
  value: ColumnSpec;
  onChange: (c: ColumnSpec) => void;
  onRemove?: () => void;
  tables: TableDoc[];
  /** Adding to an existing table: no primary key choice. */
  existing?: boolean;
}) {
  const c = props.value;
  const set = (patch: Partial<ColumnSpec>) => props.onChange({ ...c, ...patch });
  const label = c.name || 'the new column';
  const custom = !DEFAULT_CHOICES.some(([v]) => v === c.default);
  const target = props.tables.find((t) => t.name === c.references?.table);
  return (
    <fieldset className="grid gap-2 rounded-md border border-line p-2 sm:grid-cols-[minmax(8rem,1fr)_8rem_minmax(10rem,1fr)] lg:grid-cols-[minmax(8rem,1fr)_8rem_minmax(10rem,1fr)_auto]">
      <legend className="sr-only">Column {label}</legend>
      <input
        aria-label="Column name"
        placeholder="column name"
        value={c.name}
        onChange={(e) => set({ name: e.target.value })}
        className={`${CONTROL} font-mono`}
      />
      <input
        aria-label={`Type of ${label}`}
        list="column-types"
        value={c.type}
        onChange={(e) => set({ type: e.target.value })}
        className={`${CONTROL} font-mono`}
      />
      <div className="flex gap-1">
        <select
          aria-label={`Default of ${label}`}
          value={custom ? 'custom' : c.default}
          onChange={(e) => set({ default: e.target.value === 'custom' ? "''" : e.target.value })}
          className={`${CONTROL} min-w-0 flex-1`}
        >
          {DEFAULT_CHOICES.map(([v, text]) => (
            <option key={v} value={v}>
              {text}
            </option>
          ))}
          <option value="custom">Expression…</option>
        </select>
        {custom && (
          <input
            aria-label={`Default expression of ${label}`}
            value={c.default}
            onChange={(e) => set({ default: e.target.value })}
            className={`${CONTROL} w-28 font-mono`}
          />
        )}
      </div>
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <label className="inline-flex items-center gap-1">
          <input
            type="checkbox"
            checked={!c.nullable}
            onChange={(e) => set({ nullable: !e.target.checked })}
            aria-label={`${label} is required (not null)`}
          />
          Required
        </label>
        <label className="inline-flex items-center gap-1">
          <input type="checkbox" checked={c.unique} onChange={(e) => set({ unique: e.target.checked })} aria-label={`${label} is unique`} />
          Unique
        </label>
        {!props.existing && (
          <label className="inline-flex items-center gap-1">
            <input
              type="checkbox"
              checked={c.primaryKey}
              onChange={(e) => set({ primaryKey: e.target.checked, nullable: e.target.checked ? false : c.nullable })}
              aria-label={`${label} is the primary key`}
            />
            Primary key
          </label>
        )}
        {props.onRemove && (
          <Button variant="ghost" aria-label={`Remove ${label}`} onClick={props.onRemove}>
            ✕
          </Button>
        )}
      </div>
      <div className="flex flex-wrap items-center gap-2 text-sm sm:col-span-3 lg:col-span-4">
        <label className="inline-flex items-center gap-1.5">
          References
          <select
            aria-label={`Table ${label} references`}
            value={c.references?.table ?? ''}
            onChange={(e) => {
              const t = props.tables.find((x) => x.name === e.target.value);
              set({
                references: t
                  ? { table: t.name, column: t.pk ?? t.columns[0]?.name ?? '', onDelete: c.references?.onDelete ?? 'no action' }
                  : null,
              });
            }}
            className={CONTROL}
          >
            <option value="">nothing</option>
            {props.tables.map((t) => (
              <option key={t.name}>{t.name}</option>
            ))}
          </select>
        </label>
        {c.references && target && (
          <>
            <select
              aria-label={`Column ${label} references`}
              value={c.references.column}
              onChange={(e) => set({ references: { ...(c.references as NonNullable<ColumnSpec['references']>), column: e.target.value } })}
              className={`${CONTROL} font-mono`}
            >
              {target.columns.map((col) => (
                <option key={col.name}>{col.name}</option>
              ))}
            </select>
            <label className="inline-flex items-center gap-1.5">
              on delete
              <select
                aria-label={`On delete of the row ${label} references`}
                value={c.references.onDelete}
                onChange={(e) =>
                  set({ references: { ...(c.references as NonNullable<ColumnSpec['references']>), onDelete: e.target.value as OnDelete } })
                }
                className={CONTROL}
              >
                {ON_DELETE.map((o) => (
                  <option key={o}>{o}</option>
                ))}
              </select>
            </label>
          </>
        )}
      </div>
    </fieldset>
  );
}

/** The type suggestions of every column's type field. */
export function ColumnTypes() {
  return (
    <datalist id="column-types">
      {COLUMN_TYPES.map((t) => (
        <option key={t} value={t} />
      ))}
    </datalist>
  );
}
