import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Card, Confirm, EmptyState, ErrorNotice, Field, Loading, Notice } from '../../components/ui';
import { ApiFailure, api, type SavedQuery } from '../../lib/api';

const savedQuery = { queryKey: ['saved-queries'], queryFn: api.savedQueries };

/**
 * Saved queries: named scripts kept in the project's database (every admin sees them), not
 * only this browser's history. "Save" names the editor's script; a name taken offers to
 * replace that query; each saved query loads into the editor or is deleted after a confirmation.
 */
export function SavedQueries({ current, onLoad }: { current: () => string; onLoad: (query: string) => void }) {
  const queryClient = useQueryClient();
  const list = useQuery(savedQuery);
  const [name, setName] = useState('');
  const [taken, setTaken] = useState<SavedQuery | null>(null);
  const [deleting, setDeleting] = useState<SavedQuery | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const refresh = () => queryClient.invalidateQueries({ queryKey: ['saved-queries'] });

  const save = useMutation({
    mutationFn: async (v: { name: string; query: string; replace?: SavedQuery }) =>
      v.replace ? api.updateSavedQuery(v.replace.id, { query: v.query }) : api.saveQuery(v.name, v.query),
    onMutate: () => {
      setTaken(null);
      setDone(null);
    },
    onSuccess: async (q, v) => {
      setDone(v.replace ? `Replaced “${q.name}”.` : `Saved “${q.name}”.`);
      setName('');
      await refresh();
    },
    onError: (err, v) => {
      if (err instanceof ApiFailure && err.code === 'conflict') setTaken(list.data?.find((q) => q.name === v.name.trim()) ?? null);
    },
  });
  const remove = useMutation({
    mutationFn: (q: SavedQuery) => api.deleteSavedQuery(q.id),
    onSuccess: async (_r, q) => {
      setDone(`Deleted “${q.name}”.`);
      await refresh();
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const query = current();
    if (!query.trim()) return setDone(null);
    save.mutate({ name, query });
  }

  return (
    <Card title="Saved queries (this project)">
      <form onSubmit={submit} className="mb-3 flex flex-wrap items-end gap-2" aria-label="Save the query">
        <Field
          label="Name for the editor’s query"
          value={name}
          onChange={(e) => setName(e.target.value)}
          maxLength={200}
          className="min-w-60 flex-1"
        />
        <Button type="submit" disabled={!name.trim() || save.isPending}>
          Save query
        </Button>
      </form>
      {taken && (
        <Notice kind="warn" title={`A saved query is already named “${taken.name}”`}>
          <Button className="mt-1" onClick={() => save.mutate({ name: taken.name, query: current(), replace: taken })}>
            Replace it with the editor’s query
          </Button>
        </Notice>
      )}
      {save.error && !taken && <ErrorNotice error={save.error} />}
      {remove.error && <ErrorNotice error={remove.error} />}
      {done && <Notice kind="ok">{done}</Notice>}
      {list.isLoading && <Loading label="Reading the saved queries" />}
      {list.error && <ErrorNotice error={list.error} retry={() => void list.refetch()} />}
      {list.data?.length === 0 && (
        <EmptyState title="No saved query yet">
          Name the query in the editor and press Save query: every admin of this project will find it here.
        </EmptyState>
      )}
      {list.data && list.data.length > 0 && (
        <ul aria-label="Saved queries" className="max-h-72 space-y-1 overflow-auto">
          {list.data.map((q) => (
            <li key={q.id} className="flex items-center gap-2">
              <Button
                variant="ghost"
                className="min-w-0 flex-1 justify-start"
                onClick={() => onLoad(q.query)}
                aria-label={`Load ${q.name}`}
              >
                <span className="shrink-0 font-medium">{q.name}</span>
                <code className="truncate text-xs text-fg-muted">{q.query.replace(/\s+/g, ' ')}</code>
              </Button>
              <Button variant="ghost" aria-label={`Delete ${q.name}`} onClick={() => setDeleting(q)}>
                Delete
              </Button>
            </li>
          ))}
        </ul>
      )}
      <Confirm
        title="Delete this saved query?"
        description={deleting ? `“${deleting.name}” is deleted for every admin of this project.` : ''}
        confirm="Delete saved query"
        open={deleting !== null}
        onOpenChange={(o) => !o && setDeleting(null)}
        onConfirm={() => {
          if (deleting) remove.mutate(deleting);
          setDeleting(null);
        }}
      />
    </Card>
  );
}
