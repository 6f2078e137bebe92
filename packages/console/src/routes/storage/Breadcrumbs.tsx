import { Link } from '@tanstack/react-router';

/** Storage / bucket / folder / …: every level but the last is a link; the last is the current page. */
export function Breadcrumbs({ bucket, prefix }: { bucket: string; prefix: string }) {
  const segments = prefix ? prefix.split('/') : [];
  return (
    <nav aria-label="Breadcrumbs" className="text-sm">
      <ol className="flex flex-wrap items-center gap-1 text-fg-muted">
        <li>
          <Link to="/storage" className="text-accent underline">
            Storage
          </Link>
        </li>
        <li aria-hidden="true">/</li>
        <li>
          {segments.length ? (
            <Link to="/storage/$bucket" params={{ bucket }} search={{}} className="font-mono text-accent underline">
              {bucket}
            </Link>
          ) : (
            <span aria-current="page" className="font-mono text-fg">
              {bucket}
            </span>
          )}
        </li>
        {segments.map((seg, i) => (
          <li key={segments.slice(0, i + 1).join('/')} className="flex items-center gap-1">
            <span aria-hidden="true">/</span>
            {i < segments.length - 1 ? (
              <Link
                to="/storage/$bucket"
                params={{ bucket }}
                search={{ prefix: segments.slice(0, i + 1).join('/') }}
                className="font-mono text-accent underline"
              >
                {seg}
              </Link>
            ) : (
              <span aria-current="page" className="font-mono text-fg">
                {seg}
              </span>
            )}
          </li>
        ))}
      </ol>
    </nav>
  );
}
