import { useQueryClient } from '@tanstack/react-query';
import { type ReactNode, useState } from 'react';
import { ApiFailure } from '../lib/api';
import { runScript } from '../lib/schema';
import { Button, Notice } from './ui';

/**
 * A change made without writing SQL, shown as the SQL it runs: the script, a button that runs
 * it through the SQL runner's path (`runScript`), and PostgreSQL's refusal as the runner shows it.
 * `sql` null means the form is not complete yet (`problem` says why).
 */
export function SqlAction(props: {
  sql: string | null;
  problem?: string | null;
  run: string;
  variant?: 'primary' | 'danger';
  disabled?: boolean;
  onDone?: () => void;
  children?: ReactNode;
}) {
  const queryClient = useQueryClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiFailure | null>(null);
  async function go() {
    if (!props.sql) return;
    setBusy(true);
    setError(null);
    try {
      await runScript(queryClient, props.sql);
      props.onDone?.();
    } catch (err) {
      setError(err instanceof ApiFailure ? err : new ApiFailure('network_error', String(err), 0));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="space-y-2">
      <p className="text-xs font-medium text-fg-muted">The SQL this runs (through the SQL runner)</p>
      <pre
        data-testid="sql-preview"
        className="max-h-64 overflow-auto whitespace-pre-wrap break-all rounded-md border border-line bg-muted p-2 font-mono text-xs"
      >
        {props.sql ?? `-- ${props.problem ?? 'Fill in the form.'}`}
      </pre>
      {error && (
        <Notice kind="error" title="PostgreSQL refused">
          <p>{error.unreachable ? 'The API is unreachable: no answer from the server.' : error.message}</p>
          {(error.details as { sqlstate?: string } | undefined)?.sqlstate && (
            <p className="text-xs">SQLSTATE {(error.details as { sqlstate: string }).sqlstate}</p>
          )}
        </Notice>
      )}
      <div className="flex flex-wrap items-center justify-end gap-2">
        {props.children}
        <Button variant={props.variant ?? 'primary'} disabled={busy || !props.sql || props.disabled} onClick={() => void go()}>
          {busy ? 'Running…' : props.run}
        </Button>
      </div>
    </div>
  );
}
