import type { SQLNamespace } from '@codemirror/lang-sql';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useMemo, useRef, useState } from 'react';
import { Button, Card, Notice } from '../../components/ui';
import { ApiFailure, api, type SqlResult } from '../../lib/api';
import { useRights } from '../../lib/roles';
import { runScript } from '../../lib/schema';
import { type EditorHandle, SqlEditor } from './Editor';
import { addToHistory, readHistory } from './history';
import { Results } from './Results';
import { SavedQueries } from './SavedQueries';

const COLUMNS_SQL = `select table_schema as s, table_name as t, column_name as c from information_schema.columns
where table_schema in ('public', 'auth') order by table_schema, table_name, ordinal_position`;

/** The spec's query. `users` resolves through the runner's search path (public, auth): once an app has its own public.users, only the full name reaches the auth users. */
export function usersExample(shadowed: boolean): string {
  return `select id, email, created_at, email_confirmed_at from ${shadowed ? 'auth.users' : 'users'} order by created_at desc;`;
}

type Outcome =
  | { kind: 'results'; results: SqlResult[]; durationMs: number; run: number }
  | { kind: 'error'; message: string; code: string; sqlstate?: string; detail?: string | null; where?: { line: number; column: number } };

/**
 * `/console/sql`: run all or the selection (Ctrl/Cmd+Enter), one result tab per statement,
 * errors marked where PostgreSQL says (also inside a selection), the last result's tab open,
 * saved queries in the project's database, history in this browser.
 */
export function SqlPage() {
  const editor = useRef<EditorHandle>(null);
  const queryClient = useQueryClient();
  const latest = useRef(0);
  const [running, setRunning] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [history, setHistory] = useState(readHistory);
  const [draft] = useState(() => history[0]?.query ?? '');
  // A viewer may not run SQL at all (the runner can change anything), nor read the saved queries.
  const rights = useRights();

  const columns = useQuery({
    queryKey: ['sql-columns'],
    queryFn: async () => (await api.sql(COLUMNS_SQL)).results[0].rows as Array<{ s: string; t: string; c: string }>,
    enabled: rights.sql,
  });
  const schema = useMemo<SQLNamespace>(() => {
    const ns: Record<string, Record<string, string[]>> = {};
    for (const { s, t, c } of columns.data ?? []) {
      ns[s] ??= {};
      ns[s][t] ??= [];
      ns[s][t].push(c);
    }
    return ns;
  }, [columns.data]);
  // Until the column list has arrived the full name is used: it is right either way.
  const shadowed = columns.data === undefined || columns.data.some((r) => r.s === 'public' && r.t === 'users');

  async function run() {
    const { text, offset } = editor.current?.runnable() ?? { text: '', offset: 0 };
    if (!text.trim()) return;
    // A slow answer never overwrites a newer one: only the latest run may show its outcome.
    const id = ++latest.current;
    setRunning(true);
    editor.current?.clearError();
    setHistory(addToHistory(text));
    try {
      const res = await runScript(queryClient, text);
      if (id !== latest.current) return;
      setOutcome({ kind: 'results', results: res.results, durationMs: res.durationMs, run: id });
    } catch (err) {
      if (id !== latest.current) return;
      const e = err instanceof ApiFailure ? err : new ApiFailure('network_error', String(err), 0);
      const d = (e.details ?? {}) as { sqlstate?: string; position?: number | null; detail?: string | null };
      const where = typeof d.position === 'number' && d.position > 0 ? editor.current?.markError(offset + d.position - 1) : undefined;
      setOutcome({
        kind: 'error',
        code: e.code,
        message: e.unreachable ? 'The API is unreachable: no answer from the server.' : e.message,
        sqlstate: d.sqlstate,
        detail: d.detail,
        where,
      });
    } finally {
      if (id === latest.current) setRunning(false);
    }
  }

  if (rights.role && !rights.sql)
    return (
      <div className="space-y-4">
        <h1 className="text-2xl font-semibold">SQL runner</h1>
        <Notice kind="info" title="Not available for your role">
          A {rights.role} may not run SQL: the runner can change anything. An owner or admin can give you the developer role.
        </Notice>
      </div>
    );

  return (
    <div className="space-y-4">
      <div className="flex flex-wrap items-center gap-2">
        <h1 className="mr-auto text-2xl font-semibold">SQL runner</h1>
        <Button onClick={() => editor.current?.setText(usersExample(shadowed))}>Example: users</Button>
        <Button variant="primary" onClick={() => void run()} disabled={running}>
          {running ? 'Running…' : 'Run'}
        </Button>
      </div>
      <p className="text-sm text-fg-muted">
        Runs as the project owner (row-level security bypassed; no password or token hashes). Ctrl/Cmd+Enter runs the selection, or
        everything. The search path is <code>public, auth</code>.
      </p>
      <SqlEditor ref={editor} initial={draft} schema={schema} onRun={() => void run()} onChange={() => undefined} />
      {outcome?.kind === 'error' && (
        <Notice kind="error" title={outcome.where ? `Error at line ${outcome.where.line}, column ${outcome.where.column}` : 'Error'}>
          <p>{outcome.message}</p>
          {outcome.sqlstate && <p className="text-xs">SQLSTATE {outcome.sqlstate}</p>}
          {outcome.detail && <p className="text-xs">{outcome.detail}</p>}
        </Notice>
      )}
      {outcome?.kind === 'results' && <Results key={outcome.run} results={outcome.results} durationMs={outcome.durationMs} />}
      <SavedQueries current={() => editor.current?.runnable().text ?? ''} onLoad={(q) => editor.current?.setText(q)} />
      <Card title="History (this browser)">
        {history.length === 0 ? (
          <p className="text-sm text-fg-muted">Queries you run appear here.</p>
        ) : (
          <ul className="max-h-60 space-y-1 overflow-auto">
            {history.map((h) => (
              <li key={h.at} className="flex items-center gap-2">
                <Button
                  variant="ghost"
                  className="min-w-0 flex-1 justify-start"
                  onClick={() => editor.current?.setText(h.query)}
                  aria-label={`Load: ${h.query.slice(0, 80)}`}
                >
                  <code className="truncate text-xs">{h.query.replace(/\s+/g, ' ')}</code>
                </Button>
                <span className="shrink-0 text-xs text-fg-muted">{new Date(h.at).toLocaleString()}</span>
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
