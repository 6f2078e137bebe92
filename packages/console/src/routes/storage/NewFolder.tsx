import { type FormEvent, useState } from 'react';
import { Button, Dialog, Field } from '../../components/ui';

/** Why a folder name cannot be used, or null. Folders are parts of object names: no `/`, `.` or `..`. */
export function folderProblem(name: string): string | null {
  if (!name) return 'Give the folder a name.';
  if (name.includes('/')) return 'A folder name cannot contain “/” (open the folder, then make another inside it).';
  if (name === '.' || name === '..') return 'A folder cannot be named “.” or “..”.';
  if (name.includes('\\') || /\p{Cc}/u.test(name)) return 'A folder name cannot contain “\\” or control characters.';
  return null;
}

/**
 * A folder is the common start of object names: it exists once a file is in it. "New folder"
 * opens the empty folder so the next upload goes there.
 */
export function NewFolder(props: { open: boolean; onOpenChange: (o: boolean) => void; parent: string; onCreate: (name: string) => void }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const clean = name.trim();
    const problem = folderProblem(clean);
    setError(problem);
    if (problem) return;
    setName('');
    props.onOpenChange(false);
    props.onCreate(clean);
  };
  return (
    <Dialog title="New folder" open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={submit} className="space-y-3">
        <Field
          label="Folder name"
          value={name}
          onChange={(e) => setName(e.target.value)}
          autoComplete="off"
          error={error}
          hint={`Inside ${props.parent}. It is kept once a file is uploaded into it.`}
        />
        <div className="flex justify-end gap-2">
          <Button onClick={() => props.onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary">
            Open new folder
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
