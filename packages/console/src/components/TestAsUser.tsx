import { useMutation, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { api, type SqlResult } from '../lib/api';
import { READ_LIMIT, readAsSql, type Target } from '../lib/policies';
import { CONTROL } from './QueryControls';
import { Button, Card, ErrorNotice } from './ui';

/** "Test as user": what a chosen test user (or a visitor without an account) reads, row-level security applied. */
export function TestAsUser({ target }: { target: Target }) {
  const users = useQuery({ queryKey: ['users', 'picker'], queryFn: () => api.users('', 100, 0) });
  const [who, setWho] = useState('');
  const read = useMutation({
    mutationFn: async (id: string) => {
      const res = await api.sql(readAsSql(target, id));
      return res.results[res.results.length - 1] as SqlResult;
    },
  });
  const chosen = who || users.data?.users[0]?.id || 'anon';
  const name = chosen === 'anon' ? 'a visitor without an account' : (users.data?.users.find((u) => u.id === chosen)?.email ?? chosen);
  return (
    <Card title="Test as user">
      <div className="space-y-3">
        <div className="flex flex-wrap items-end gap-2">
          <label className="flex flex-col gap-1 text-sm">
            <span className="font-medium">Read as</span>
            <select value={chosen} onChange={(e) => setWho(e.target.value)} className={CONTROL}>
              {users.data?.users.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email ?? u.phone ?? u.id}
                </option>
              ))}
              <option value="anon">anon (no account)</option>
            </select>
          </label>
          <Button onClick={() => read.mutate(chosen)} disabled={read.isPending}>
            {read.isPending ? 'Reading…' : 'Read as this user'}
          </Button>
        </div>
        <p className="text-xs text-fg-muted">
          Runs the read with the role and claims their token would carry, in the SQL runner, so the policies decide. Nothing is written.
        </p>
        {read.error && <ErrorNotice error={read.error} />}
        {read.data && (
          <div className="space-y-2">
            <p role="status" data-testid="test-as-summary" className="text-sm">
              {read.data.rows.length === 0
                ? `${name} sees no ${target.kind === 'table' ? 'row' : 'file'}.`
                : `${name} sees ${read.data.rows.length}${read.data.rows.length === READ_LIMIT ? '+' : ''} ${target.kind === 'table' ? 'row' : 'file'}${read.data.rows.length === 1 ? '' : 's'}.`}
            </p>
            {read.data.rows.length > 0 && (
              <div className="max-h-72 overflow-auto rounded-md border border-line">
                <table className="w-full text-left font-mono text-xs" data-testid="test-as-rows">
                  <thead className="sticky top-0 bg-muted">
                    <tr>
                      {read.data.columns.map((c) => (
                        <th key={c.name} className="px-2 py-1 font-medium">
                          {c.name}
                        </th>
                      ))}
                    </tr>
                  </thead>
                  <tbody>
                    {read.data.rows.map((r, i) => (
                      // biome-ignore lint/suspicious/noArrayIndexKey: a read-only snapshot of rows in their order
                      <tr key={i} className="border-t border-line">
                        {read.data.columns.map((c) => (
                          <td key={c.name} className="max-w-64 truncate px-2 py-1">
                            {r[c.name] === null ? 'NULL' : typeof r[c.name] === 'object' ? JSON.stringify(r[c.name]) : String(r[c.name])}
                          </td>
                        ))}
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
          </div>
        )}
      </div>
    </Card>
  );
}
