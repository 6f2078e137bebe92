import { AlertDialog } from '@base-ui/react/alert-dialog';
import { Dialog as BaseDialog } from '@base-ui/react/dialog';
import { Field as BaseField } from '@base-ui/react/field';
import { Switch } from '@base-ui/react/switch';
import { Tabs as BaseTabs } from '@base-ui/react/tabs';
import {
  type ButtonHTMLAttributes,
  type InputHTMLAttributes,
  type ReactNode,
  type SelectHTMLAttributes,
  type TextareaHTMLAttributes,
  useId,
  useState,
} from 'react';
import type { ApiFailure } from '../lib/api';

/**
 * Our thin wrappers over Base UI: one look, and the accessibility rules of docs/console.md built in
 * (every control has a name, errors are announced). Pages use these, never Base UI directly,
 * so the look can change in one file.
 */

const cx = (...c: Array<string | false | null | undefined>) => c.filter(Boolean).join(' ');

type Variant = 'primary' | 'secondary' | 'danger' | 'ghost';
const VARIANT: Record<Variant, string> = {
  primary: 'bg-accent text-white hover:bg-accent/90 border-transparent',
  secondary: 'bg-surface text-fg border-line hover:bg-muted',
  danger: 'bg-danger text-white border-transparent hover:bg-danger/90',
  ghost: 'bg-transparent border-transparent text-fg hover:bg-muted',
};

export function Button({ variant = 'secondary', className, ...props }: ButtonHTMLAttributes<HTMLButtonElement> & { variant?: Variant }) {
  return (
    <button
      type="button"
      {...props}
      className={cx(
        'inline-flex items-center gap-1.5 rounded-md border px-3 py-1.5 text-sm font-medium disabled:opacity-50 disabled:cursor-not-allowed focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-accent aria-pressed:border-accent aria-pressed:bg-accent/10',
        VARIANT[variant],
        className,
      )}
    />
  );
}

const INPUT =
  'w-full rounded-md border border-line bg-surface px-2.5 py-1.5 text-sm text-fg placeholder:text-fg-muted focus:outline-2 focus:outline-accent aria-[invalid=true]:border-danger';

/** A labelled input; `error` is shown under it, announced, and marks it invalid. */
export function Field(
  props: InputHTMLAttributes<HTMLInputElement> & { label: string; error?: string | null; hint?: ReactNode; multiline?: false },
) {
  const { label, error, hint, className, ...input } = props;
  return (
    <BaseField.Root invalid={Boolean(error)} className={cx('flex flex-col gap-1', className)}>
      <BaseField.Label className="text-sm font-medium">{label}</BaseField.Label>
      <BaseField.Control {...input} className={INPUT} aria-invalid={error ? true : undefined} />
      {hint && <BaseField.Description className="text-xs text-fg-muted">{hint}</BaseField.Description>}
      {error && (
        <BaseField.Error match className="text-xs text-danger" role="alert">
          {error}
        </BaseField.Error>
      )}
    </BaseField.Root>
  );
}

/** A labelled textarea (lists one entry per line, templates); errors as for Field. */
export function TextArea(props: TextareaHTMLAttributes<HTMLTextAreaElement> & { label: string; errors?: string[]; hint?: ReactNode }) {
  const { label, errors = [], hint, className, id, ...rest } = props;
  const [fallback] = useState(() => `ta-${Math.random().toString(36).slice(2)}`);
  const ref = id ?? fallback;
  return (
    <div className={cx('flex flex-col gap-1', className)}>
      <label htmlFor={ref} className="text-sm font-medium">
        {label}
      </label>
      <textarea
        id={ref}
        {...rest}
        aria-invalid={errors.length ? true : undefined}
        aria-describedby={errors.length ? `${ref}-errors` : undefined}
        className={cx(INPUT, 'font-mono min-h-20')}
      />
      {hint && <p className="text-xs text-fg-muted">{hint}</p>}
      {errors.length > 0 && (
        <ul id={`${ref}-errors`} role="alert" className="text-xs text-danger">
          {errors.map((e) => (
            <li key={e}>{e}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A labelled native select over `options` ([value, label]); hint and error as for Field. */
export function Select(
  props: SelectHTMLAttributes<HTMLSelectElement> & {
    label: string;
    options: ReadonlyArray<readonly [value: string, label: string]>;
    error?: string | null;
    hint?: ReactNode;
  },
) {
  const { label, options, error, hint, className, ...rest } = props;
  const id = useId();
  const described = [hint && `${id}-hint`, error && `${id}-error`].filter(Boolean).join(' ');
  return (
    <div className={cx('flex flex-col gap-1', className)}>
      <label htmlFor={id} className="text-sm font-medium">
        {label}
      </label>
      <select
        id={id}
        {...rest}
        aria-invalid={error ? true : undefined}
        aria-describedby={described || undefined}
        className={cx(INPUT, 'pr-8')}
      >
        {options.map(([value, text]) => (
          <option key={value} value={value}>
            {text}
          </option>
        ))}
      </select>
      {hint && (
        <p id={`${id}-hint`} className="text-xs text-fg-muted">
          {hint}
        </p>
      )}
      {error && (
        <p id={`${id}-error`} role="alert" className="text-xs text-danger">
          {error}
        </p>
      )}
    </div>
  );
}

/** An on/off switch named by its label; `reason` explains a disabled switch next to it. */
export function Toggle(props: {
  label: string;
  checked: boolean;
  onChange: (v: boolean) => void;
  disabled?: boolean;
  reason?: string;
  error?: string | null;
}) {
  const { label, checked, onChange, disabled, reason, error } = props;
  const [id] = useState(() => `sw-${Math.random().toString(36).slice(2)}`);
  return (
    <div className="flex flex-col gap-0.5">
      {/* biome-ignore lint/a11y/noLabelWithoutControl: Switch.Root renders the button role="switch" this label names */}
      <label className={cx('inline-flex items-center gap-2 text-sm', disabled && 'opacity-60')}>
        <Switch.Root
          checked={checked}
          onCheckedChange={(v) => onChange(v)}
          disabled={disabled}
          aria-describedby={reason ? `${id}-reason` : undefined}
          className="relative inline-flex h-5 w-9 shrink-0 rounded-full border border-line bg-muted transition-colors data-[checked]:bg-accent focus-visible:outline-2 focus-visible:outline-accent"
        >
          <Switch.Thumb className="block h-4 w-4 translate-x-0.5 translate-y-px rounded-full bg-white shadow transition-transform data-[checked]:translate-x-4" />
        </Switch.Root>
        {label}
      </label>
      {reason && (
        <p id={`${id}-reason`} className="text-xs text-fg-muted">
          {reason}
        </p>
      )}
      {error && (
        <p role="alert" className="text-xs text-danger">
          {error}
        </p>
      )}
    </div>
  );
}

/** Tabs with our look; `tabs` are [value, label, panel]. */
export function Tabs<T extends string>(props: {
  label: string;
  value: T;
  onChange: (v: T) => void;
  tabs: Array<[T, ReactNode, ReactNode]>;
}) {
  return (
    <BaseTabs.Root value={props.value} onValueChange={(v) => props.onChange(v as T)}>
      <BaseTabs.List aria-label={props.label} className="flex flex-wrap gap-1 border-b border-line">
        {props.tabs.map(([value, label]) => (
          <BaseTabs.Tab
            key={value}
            value={value}
            className="-mb-px border-b-2 border-transparent px-3 py-1.5 text-sm text-fg-muted data-[active]:border-accent data-[active]:font-medium data-[active]:text-fg"
          >
            {label}
          </BaseTabs.Tab>
        ))}
      </BaseTabs.List>
      {props.tabs.map(([value, , panel]) => (
        <BaseTabs.Panel key={value} value={value} className="pt-3">
          {panel}
        </BaseTabs.Panel>
      ))}
    </BaseTabs.Root>
  );
}

/** A modal dialog with a title; `trigger` opens it. */
export function Dialog(props: {
  title: string;
  trigger?: ReactNode;
  open: boolean;
  onOpenChange: (o: boolean) => void;
  children: ReactNode;
}) {
  return (
    <BaseDialog.Root open={props.open} onOpenChange={(o) => props.onOpenChange(o)}>
      <BaseDialog.Portal>
        <BaseDialog.Backdrop className="fixed inset-0 z-40 bg-black/40" />
        <BaseDialog.Popup className="fixed left-1/2 top-1/2 z-50 w-[min(32rem,92vw)] -translate-x-1/2 -translate-y-1/2 rounded-lg border border-line bg-surface p-5 text-fg shadow-xl">
          <BaseDialog.Title className="mb-3 text-lg font-semibold">{props.title}</BaseDialog.Title>
          {props.children}
        </BaseDialog.Popup>
      </BaseDialog.Portal>
    </BaseDialog.Root>
  );
}

/** "Are you sure?" for destructive actions: the confirm button names the action. */
export function Confirm(props: {
  title: string;
  description: ReactNode;
  confirm: string;
  open: boolean;
  onOpenChange: (o: boolean) => void;
  onConfirm: () => void;
}) {
  return (
    <AlertDialog.Root open={props.open} onOpenChange={(o) => props.onOpenChange(o)}>
      <AlertDialog.Portal>
        <AlertDialog.Backdrop className="fixed inset-0 z-40 bg-black/40" />
        <AlertDialog.Popup className="fixed left-1/2 top-1/2 z-50 w-[min(28rem,92vw)] -translate-x-1/2 -translate-y-1/2 rounded-lg border border-line bg-surface p-5 text-fg shadow-xl">
          <AlertDialog.Title className="mb-2 text-lg font-semibold">{props.title}</AlertDialog.Title>
          <AlertDialog.Description className="mb-4 text-sm text-fg-muted">{props.description}</AlertDialog.Description>
          <div className="flex justify-end gap-2">
            <AlertDialog.Close render={<Button>Cancel</Button>} />
            <Button variant="danger" onClick={props.onConfirm}>
              {props.confirm}
            </Button>
          </div>
        </AlertDialog.Popup>
      </AlertDialog.Portal>
    </AlertDialog.Root>
  );
}

/** Copies `value`; says "Copied" (announced) for a moment. */
export function CopyButton({ value, label, text = 'Copy' }: { value: string; label: string; text?: string }) {
  const [done, setDone] = useState<'idle' | 'copied' | 'failed'>('idle');
  return (
    <>
      <Button
        variant="secondary"
        aria-label={label}
        onClick={() =>
          navigator.clipboard.writeText(value).then(
            () => setDone('copied'),
            () => setDone('failed'),
          )
        }
      >
        {done === 'copied' ? 'Copied' : text}
      </Button>
      <span role="status" className="sr-only">
        {done === 'copied' ? `${label}: copied` : done === 'failed' ? 'Copy failed: the browser refused the clipboard' : ''}
      </span>
    </>
  );
}

/** An announced message box. */
export function Notice({ kind, children, title }: { kind: 'error' | 'ok' | 'info' | 'warn'; children: ReactNode; title?: string }) {
  const styles = {
    error: 'border-danger/40 bg-danger/10',
    ok: 'border-ok/40 bg-ok/10',
    info: 'border-line bg-muted',
    warn: 'border-warn/50 bg-warn/10',
  }[kind];
  return (
    <div role={kind === 'error' ? 'alert' : 'status'} className={cx('rounded-md border px-3 py-2 text-sm', styles)}>
      {title && <p className="font-semibold">{title}</p>}
      {children}
    </div>
  );
}

/** The error of a failed call, with what to do about it. */
export function ErrorNotice({ error, retry }: { error: unknown; retry?: () => void }) {
  const e = error as ApiFailure;
  const title = e?.unreachable ? 'The API is unreachable' : 'The server refused';
  return (
    <Notice kind="error" title={title}>
      <p>{e?.unreachable ? 'No answer from the server: is it running? Check the network, then retry.' : (e?.message ?? String(error))}</p>
      {!e?.unreachable && e?.code && <p className="text-xs text-fg-muted">code: {e.code}</p>}
      {retry && (
        <Button className="mt-2" onClick={retry}>
          Retry
        </Button>
      )}
    </Notice>
  );
}

/** A loading placeholder (only while a request is really under way). */
export function Loading({ label }: { label: string }) {
  return (
    <p role="status" aria-live="polite" className="animate-pulse text-sm text-fg-muted">
      {label}…
    </p>
  );
}

export function Card({ title, children, actions }: { title: string; children: ReactNode; actions?: ReactNode }) {
  return (
    <section aria-label={title} className="rounded-lg border border-line bg-surface p-4">
      <div className="mb-3 flex items-center justify-between gap-2">
        <h2 className="text-base font-semibold">{title}</h2>
        {actions}
      </div>
      {children}
    </section>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');

/** What an empty list means and what to do next (instead of a bare "nothing here"). */
export function EmptyState({ title, children, action }: { title: string; children: ReactNode; action?: ReactNode }) {
  return (
    <div data-testid="empty-state" className="rounded-lg border border-dashed border-line bg-surface px-4 py-6 text-center">
      <p className="font-semibold">{title}</p>
      <p className="mx-auto mt-1 max-w-prose text-sm text-fg-muted">{children}</p>
      {action && <div className="mt-3 flex justify-center">{action}</div>}
    </div>
  );
}
