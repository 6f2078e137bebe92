import { Button, CopyButton, Dialog, Notice } from '../../components/ui';

/**
 * A webhook's signing secret, right after it was made or rotated: the only time the server
 * answers it. Kept in this component's props only (never in storage, a URL or the query cache).
 */
export function SecretDialog({ name, secret, onClose }: { name: string; secret: string; onClose: () => void }) {
  return (
    <Dialog title={`Signing secret of ${name}`} open onOpenChange={(o) => !o && onClose()}>
      <div className="space-y-3 text-sm">
        <Notice kind="warn" title="Shown once">
          Copy it to your endpoint's configuration now: Plinth does not show it again (rotate it if it is lost).
        </Notice>
        <label htmlFor="webhook-secret" className="block font-medium">
          Secret
        </label>
        <div className="flex gap-2">
          <input
            id="webhook-secret"
            readOnly
            value={secret}
            onFocus={(e) => e.currentTarget.select()}
            className="w-full rounded-md border border-line bg-muted px-2.5 py-1.5 font-mono text-xs"
          />
          <CopyButton value={secret} label="Copy the signing secret" />
        </div>
        <p className="text-fg-muted">
          Each request carries <code>Plinth-Signature: t=…,v1=…</code>: the HMAC-SHA256 of <code>t.body</code> under this secret.
          docs/webhooks.md has a receiver that checks it, in Node and in Python.
        </p>
        <div className="flex justify-end">
          <Button variant="primary" onClick={onClose}>
            Done
          </Button>
        </div>
      </div>
    </Dialog>
  );
}
