import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { Button, Dialog, ErrorNotice, Field } from '../../components/ui';
import { api, type EndUser } from '../../lib/api';

/** A user made by the admin: email and/or phone, an optional password, optionally confirmed. */
export function CreateUser(props: { open: boolean; onOpenChange: (o: boolean) => void; onCreated: (u: EndUser) => void }) {
  const queryClient = useQueryClient();
  const [email, setEmail] = useState('');
  const [phone, setPhone] = useState('');
  const [password, setPassword] = useState('');
  const [confirmed, setConfirmed] = useState(true);
  const create = useMutation({
    mutationFn: () =>
      api.createUser({
        ...(email ? { email } : {}),
        ...(phone ? { phone } : {}),
        ...(password ? { password } : {}),
        ...(email ? { email_confirmed: confirmed } : {}),
      }),
    onSuccess: async (u) => {
      await queryClient.invalidateQueries({ queryKey: ['users'] });
      setEmail('');
      setPhone('');
      setPassword('');
      props.onOpenChange(false);
      props.onCreated(u);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate();
  };
  return (
    <Dialog title="Create user" open={props.open} onOpenChange={props.onOpenChange}>
      <form onSubmit={submit} className="space-y-3">
        <Field label="Email" type="email" value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field label="Phone (E.164)" type="tel" placeholder="+46701234567" value={phone} onChange={(e) => setPhone(e.target.value)} />
        <Field
          label="Password (optional)"
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        <label className="flex items-center gap-2 text-sm">
          <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />
          Email already confirmed
        </label>
        {create.error && <ErrorNotice error={create.error} />}
        <div className="flex justify-end gap-2">
          <Button onClick={() => props.onOpenChange(false)}>Cancel</Button>
          <Button type="submit" variant="primary" disabled={create.isPending || (!email && !phone)}>
            Create
          </Button>
        </div>
      </form>
    </Dialog>
  );
}
