import { useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { api } from '../lib/api';
import {
  type Command,
  COMMANDS,
  clauses,
  createPolicySql,
  dropPolicySql,
  editPolicySql,
  POLICIES_SQL,
  type PolicyRow,
  type PolicySpec,
  policyInWords,
  policyProblem,
  ROLES,
  type Role,
  rlsSql,
  rolesOf,
  aboutBucket,
  type Target,
  TEMPLATE_LABELS,
  TEMPLATES,
  type Template,
  templatePolicies,
} from '../lib/policies';
import { useRights } from '../lib/roles';
import { CONTROL } from './QueryControls';
import { SqlAction } from './SqlAction';
import { TestAsUser } from './TestAsUser';
import { Button, Card, ErrorNotice, Loading, Notice } from './ui';

type Editing =
  | { kind: 'new'; template: Template; owner: string | null; custom: PolicySpec }
  | { kind: 'edit'; before: PolicyRow; spec: PolicySpec }
  | { kind: 'drop'; name: string }
  | { kind: 'rls'; on: boolean };

const blank = (stem: string): PolicySpec => ({ name: `${stem}_policy`, command: 'select', roles: ['authenticated'], using: '', check: '' });

/** The row-level security switch and policies of a table (or of storage.objects), read through the SQL runner. */
export function usePolicies(target: Target) {
  const [schema, table] = target.kind === 'table' ? ['public', target.table] : ['storage', 'objects'];
  return useQuery({
    queryKey: ['policies', schema, table],
    queryFn: async () => {
      const row = (await api.sql(POLICIES_SQL, [schema, table])).results[0].rows[0] as
        | { rls: boolean; policies: PolicyRow[] | string }
        | undefined;
      const policies = typeof row?.policies === 'string' ? (JSON.parse(row.policies) as PolicyRow[]) : (row?.policies ?? []);
      return { rls: row?.rls ?? false, policies };
    },
  });
}

/**
 * The policy editor: row-level security's state, the policies in words, templates (owner can
 * do everything, everyone reads, signed-in users read, owner writes and everyone reads,
 * custom with the column names offered), edit and drop; every change shows its SQL and runs
 * through the SQL runner. "Test as user" reads as a chosen user. For a bucket the target is
 * storage.objects and only the bucket's policies are listed.
 */
export function PolicyEditor(props: { target: Target; columns: string[]; ownerGuess: string | null }) {
  const { target, columns } = props;
  const stem = target.kind === 'table' ? target.table : target.bucket;
  const policies = usePolicies(target);
  // A viewer reads the policies only: no new, edit, drop or RLS switch (the server would refuse them).
  const { change } = useRights();
  const [editing, setEditing] = useState<Editing | null>(null);
  const [focus, setFocus] = useState<'using' | 'check'>('using');
  const usingRef = useRef<HTMLTextAreaElement>(null);
  const checkRef = useRef<HTMLTextAreaElement>(null);
  // Until the admin picks one: the column that defaults to auth.uid(), as soon as the columns are read.
  const ownerOf = (e: { owner: string | null }) => e.owner ?? props.ownerGuess ?? columns[0] ?? '';
  const list = (policies.data?.policies ?? []).filter((p) => target.kind === 'table' || aboutBucket(p, target.bucket));

  let sql: string | null = null;
  let problem: string | null = null;
  if (editing?.kind === 'new') {
    if (editing.template === 'custom') {
      problem = policyProblem(editing.custom);
      if (!problem) sql = createPolicySql(target, editing.custom);
    } else if (!ownerOf(editing) && editing.template.startsWith('owner')) problem = 'Choose the column that holds the owner’s id.';
    else {
      const specs = templatePolicies(editing.template, target, ownerOf(editing));
      const taken = specs.find((s) => list.some((p) => p.name === s.name));
      if (taken) problem = `A policy named ${taken.name} exists already: drop it first, or write a custom one.`;
      else sql = specs.map((s) => createPolicySql(target, s)).join('\n');
    }
  } else if (editing?.kind === 'edit') {
    problem = policyProblem(editing.spec);
    if (!problem) sql = editPolicySql(target, editing.before.name, editing.before.command, editing.spec);
  } else if (editing?.kind === 'drop') sql = dropPolicySql(target, editing.name);
  else if (editing?.kind === 'rls' && target.kind === 'table') sql = rlsSql(target.table, editing.on);

  const spec = editing?.kind === 'edit' ? editing.spec : editing?.kind === 'new' && editing.template === 'custom' ? editing.custom : null;
  const setSpec = (s: PolicySpec) => {
    if (editing?.kind === 'edit') setEditing({ ...editing, spec: s });
    else if (editing?.kind === 'new') setEditing({ ...editing, custom: s });
  };
  function offer(name: string) {
    if (!spec) return;
    const field = focus === 'check' && clauses(spec.command).check ? 'check' : clauses(spec.command).using ? 'using' : 'check';
    const el = (field === 'using' ? usingRef : checkRef).current;
    const text = spec[field];
    const at = el?.selectionStart ?? text.length;
    const word = /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replaceAll('"', '""')}"`;
    setSpec({ ...spec, [field]: `${text.slice(0, at)}${word}${text.slice(el?.selectionEnd ?? at)}` });
  }

  return (
    <div className="space-y-4">
      <Card
        title={target.kind === 'table' ? 'Row-level security' : `Who may use the files of ${target.bucket}`}
        actions={
          change && (
            <Button variant="primary" onClick={() => setEditing({ kind: 'new', template: 'owner_all', owner: null, custom: blank(stem) })}>
              New policy
            </Button>
          )
        }
      >
        {policies.isLoading && <Loading label="Reading the policies" />}
        {policies.error && <ErrorNotice error={policies.error} retry={() => void policies.refetch()} />}
        {policies.data && (
          <div className="space-y-3">
            <p role="status" className="text-sm" data-testid="rls-status">
              {target.kind === 'bucket'
                ? 'Row-level security is always on for storage.objects: a file can be read, uploaded, changed or deleted only as a policy allows (the secret key bypasses it).'
                : policies.data.rls
                  ? 'Row-level security is on: the public key and signed-in users reach only the rows a policy allows (the secret key bypasses it).'
                  : 'Row-level security is off: every API role with a grant reaches every row.'}
              {target.kind === 'table' && change && (
                <Button className="ml-2" onClick={() => setEditing({ kind: 'rls', on: !policies.data.rls })}>
                  {policies.data.rls ? 'Turn off…' : 'Turn on…'}
                </Button>
              )}
            </p>
            {list.length === 0 ? (
              <Notice kind="info">
                No policy yet: {target.kind === 'bucket' || policies.data.rls ? 'nobody but the secret key reaches ' : 'nothing restricts '}
                {target.kind === 'table' ? 'its rows' : 'its files'}. Add one with New policy, from a template.
              </Notice>
            ) : (
              <ul aria-label="Policies" className="divide-y divide-line rounded-md border border-line">
                {list.map((p) => (
                  <li key={p.name} className="flex flex-wrap items-start gap-2 p-2">
                    <div className="min-w-0 flex-1">
                      <p className="font-mono text-sm font-medium">{p.name}</p>
                      <p className="text-sm" data-testid="policy-words">
                        {policyInWords(p, target.kind === 'bucket' ? target.bucket : undefined)}
                      </p>
                    </div>
                    {change && (
                      <>
                        <Button
                          variant="ghost"
                          aria-label={`Edit ${p.name}`}
                          onClick={() =>
                            setEditing({
                              kind: 'edit',
                              before: p,
                              spec: {
                                name: p.name,
                                command: p.command.toLowerCase() as Command,
                                roles: rolesOf(p.roles).filter((r): r is Role => (ROLES as readonly string[]).includes(r)),
                                using: p.using ?? '',
                                check: p.check ?? '',
                              },
                            })
                          }
                        >
                          Edit
                        </Button>
                        <Button variant="ghost" aria-label={`Drop ${p.name}`} onClick={() => setEditing({ kind: 'drop', name: p.name })}>
                          Drop
                        </Button>
                      </>
                    )}
                  </li>
                ))}
              </ul>
            )}
          </div>
        )}
      </Card>
      {editing && (
        <Card
          title={
            editing.kind === 'new'
              ? 'Add a policy'
              : editing.kind === 'edit'
                ? `Edit ${editing.before.name}`
                : editing.kind === 'drop'
                  ? `Drop ${editing.name}`
                  : editing.on
                    ? 'Turn row-level security on'
                    : 'Turn row-level security off'
          }
        >
          <div className="space-y-3">
            {editing.kind === 'new' && (
              <div role="radiogroup" aria-label="Template" className="flex flex-wrap gap-1">
                {TEMPLATES.map((t) => (
                  <label
                    key={t}
                    className={`cursor-pointer rounded-md border px-2.5 py-1 text-sm ${editing.template === t ? 'border-accent bg-accent/10 font-medium' : 'border-line'}`}
                  >
                    <input
                      type="radio"
                      className="sr-only"
                      name="template"
                      checked={editing.template === t}
                      onChange={() => setEditing({ ...editing, template: t })}
                    />
                    {TEMPLATE_LABELS[t]}
                  </label>
                ))}
              </div>
            )}
            {editing.kind === 'new' && editing.template.startsWith('owner') && (
              <label className="flex items-center gap-2 text-sm">
                Owner column
                <select
                  value={ownerOf(editing)}
                  onChange={(e) => setEditing({ ...editing, owner: e.target.value })}
                  className={`${CONTROL} font-mono`}
                >
                  {columns.map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </select>
              </label>
            )}
            {spec && (
              <div className="space-y-2">
                <div className="flex flex-wrap items-end gap-3">
                  <label className="flex flex-col gap-1 text-sm">
                    <span className="font-medium">Policy name</span>
                    <input
                      value={spec.name}
                      onChange={(e) => setSpec({ ...spec, name: e.target.value })}
                      className={`${CONTROL} w-56 font-mono`}
                    />
                  </label>
                  <label className="flex flex-col gap-1 text-sm">
                    <span className="font-medium">For</span>
                    <select
                      value={spec.command}
                      onChange={(e) => setSpec({ ...spec, command: e.target.value as Command })}
                      className={CONTROL}
                    >
                      {COMMANDS.map((c) => (
                        <option key={c}>{c}</option>
                      ))}
                    </select>
                  </label>
                  <fieldset className="flex gap-3 text-sm">
                    <legend className="mb-1 font-medium">Who</legend>
                    {ROLES.map((r) => (
                      <label key={r} className="inline-flex items-center gap-1">
                        <input
                          type="checkbox"
                          checked={spec.roles.includes(r)}
                          onChange={(e) =>
                            setSpec({ ...spec, roles: e.target.checked ? [...spec.roles, r] : spec.roles.filter((x) => x !== r) })
                          }
                        />
                        {r}
                      </label>
                    ))}
                  </fieldset>
                </div>
                <fieldset className="flex flex-wrap items-center gap-1 text-xs" aria-label="Column names">
                  <span className="text-fg-muted">Insert:</span>
                  {[...columns, 'auth.uid()'].map((c) => (
                    <Button key={c} variant="secondary" className="px-1.5 py-0.5 font-mono text-xs" onClick={() => offer(c)}>
                      {c}
                    </Button>
                  ))}
                </fieldset>
                {clauses(spec.command).using && (
                  <label className="flex flex-col gap-1 text-sm">
                    <span className="font-medium">Using: which existing rows it lets through</span>
                    <textarea
                      ref={usingRef}
                      rows={2}
                      value={spec.using}
                      onFocus={() => setFocus('using')}
                      onChange={(e) => setSpec({ ...spec, using: e.target.value })}
                      placeholder={
                        target.kind === 'bucket' ? `bucket_id = '${target.bucket}' and owner = auth.uid()` : 'owner_id = auth.uid()'
                      }
                      className={`${CONTROL} font-mono`}
                    />
                  </label>
                )}
                {clauses(spec.command).check && (
                  <label className="flex flex-col gap-1 text-sm">
                    <span className="font-medium">With check: which new rows it accepts</span>
                    <textarea
                      ref={checkRef}
                      rows={2}
                      value={spec.check}
                      onFocus={() => setFocus('check')}
                      onChange={(e) => setSpec({ ...spec, check: e.target.value })}
                      className={`${CONTROL} font-mono`}
                    />
                  </label>
                )}
              </div>
            )}
            {editing.kind === 'drop' && <p className="text-sm">What it allowed is no longer allowed (unless another policy allows it).</p>}
            <SqlAction
              sql={sql}
              problem={problem}
              run={
                editing.kind === 'new'
                  ? 'Add policy'
                  : editing.kind === 'edit'
                    ? 'Save policy'
                    : editing.kind === 'drop'
                      ? 'Drop policy'
                      : editing.on
                        ? 'Turn on'
                        : 'Turn off'
              }
              variant={editing.kind === 'drop' || (editing.kind === 'rls' && !editing.on) ? 'danger' : 'primary'}
              onDone={() => setEditing(null)}
            >
              <Button onClick={() => setEditing(null)}>Cancel</Button>
            </SqlAction>
          </div>
        </Card>
      )}
      <TestAsUser target={target} />
    </div>
  );
}
