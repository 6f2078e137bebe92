import { useQuery } from '@tanstack/react-query';
import { Link, useNavigate, useParams, useSearch } from '@tanstack/react-router';
import { useMemo, useState } from 'react';
import { ErrorNotice, Loading, Notice } from '../../components/ui';
import { serverUrl } from '../../lib/api';
import type { EndpointDoc, Method, TableOp } from '../../lib/openapi';
import { useApiDoc, useTableColumns } from '../../lib/schema';
import type { ApiSearch, Caller } from '../../lib/search';
import { projectQuery } from '../../lib/queries';
import { CallerPanel, useTestUser } from './CallerPanel';
import { makeCallers } from './callers';
import { EndpointBuilder } from './EndpointBuilder';
import { RpcBuilder } from './RpcBuilder';
import { TableBuilder } from './TableBuilder';
import type { CallSetup } from './tryit';

const OP_METHOD: Record<TableOp, Method> = { list: 'GET', get: 'GET', create: 'POST', update: 'PATCH', delete: 'DELETE' };

const METHOD_STYLE: Record<string, string> = {
  GET: 'text-ok',
  POST: 'text-accent',
  PATCH: 'text-warn',
  DELETE: 'text-danger',
};

/**
 * An endpoint's path as the sidebar shows it: whole (auth paths too), wrapping rather than cut,
 * so two endpoints never read the same; the storage group's shared `/api/v1/storage` is left out.
 * @example endpointLabel('/api/v1/storage/object/{bucket}/{path}') // '/object/{bucket}/{path}'
 */
export function endpointLabel(path: string): string {
  return path.startsWith('/api/v1/storage/') ? path.slice('/api/v1/storage'.length) : path;
}

/**
 * `/console/api` and `/console/api/{table}`: every endpoint of the project from its OpenAPI
 * document (which follows schema changes), a request builder per table and per auth endpoint,
 * try-it as anon, as a test user or with the secret key, and the snippets of what was sent.
 */
export function ApiPage() {
  const { table: tableName } = useParams({ strict: false }) as { table?: string };
  const search = useSearch({ strict: false }) as ApiSearch;
  const navigate = useNavigate();
  const { keys, doc, error, isLoading } = useApiDoc();
  const project = useQuery(projectQuery);
  const callers = useQuery({
    queryKey: ['tryit-callers', serverUrl, keys.data?.public_key],
    queryFn: () => makeCallers(serverUrl, keys.data?.public_key ?? ''),
    enabled: Boolean(keys.data),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: Number.POSITIVE_INFINITY,
  });
  const user = useTestUser(callers.data);
  const [revealed, setRevealed] = useState(false);
  const [inlineKeys, setInlineKeys] = useState(false);
  const caller: Caller = search.as ?? 'anon';

  const tables = doc.data?.tables ?? [];
  const table = tableName ? tables.find((t) => t.name === tableName) : undefined;
  const columns = useTableColumns(table?.name, table?.columns.map((c) => c.name).join(',') ?? '');
  const endpoint = !tableName && search.endpoint ? doc.data?.endpoints.find((e) => `${e.method} ${e.path}` === search.endpoint) : undefined;
  const fn = !tableName && search.fn ? doc.data?.functions.find((f) => f.name === search.fn) : undefined;
  const groups = new Map<string, EndpointDoc[]>();
  for (const e of doc.data?.endpoints ?? []) groups.set(e.tag, [...(groups.get(e.tag) ?? []), e]);

  // One object while nothing in it changes: the builders build their request again when it does.
  const setup = useMemo<CallSetup | null>(
    () =>
      callers.data && keys.data && project.data
        ? { callers: callers.data, caller, keys: keys.data, revealed, user, publicBase: project.data.public_url }
        : null,
    [callers.data, keys.data, project.data, caller, revealed, user],
  );
  const setCaller = (as: Caller) =>
    void navigate({ to: '.', search: (prev: ApiSearch) => ({ ...prev, as: as === 'anon' ? undefined : as }), replace: true } as never);

  return (
    <div className="space-y-4">
      <h1 className="text-2xl font-semibold">API</h1>
      <p className="text-sm text-fg-muted">
        Every endpoint of this project, read from <code>GET /api/v1/openapi.json</code> (it follows schema changes). Snippets use the
        server’s public URL <code>{project.data?.public_url ?? '…'}</code>.
      </p>
      {error && <ErrorNotice error={error} retry={() => void Promise.all([keys.refetch(), doc.refetch()])} />}
      {isLoading && <Loading label="Reading the API document" />}
      {doc.data && (
        <div className="grid grid-cols-1 gap-4 lg:grid-cols-[17rem_minmax(0,1fr)]">
          <nav aria-label="Endpoints" className="space-y-4 text-sm">
            <div>
              <h2 className="mb-1 font-semibold">Tables and views</h2>
              {tables.length === 0 ? (
                <p className="text-xs text-fg-muted">
                  No table yet. Make one on the{' '}
                  <Link to="/data" search={{ create: true }} className="text-accent underline">
                    Table browser
                  </Link>{' '}
                  (New table), or in the{' '}
                  <Link to="/sql" className="text-accent underline">
                    SQL runner
                  </Link>
                  .
                </p>
              ) : (
                <ul className="space-y-1">
                  {tables.map((t) => (
                    <li key={t.name}>
                      <Link
                        to="/api/$table"
                        params={{ table: t.name }}
                        search={{ as: search.as }}
                        className="block truncate rounded px-2 py-0.5 font-mono hover:bg-muted data-[status=active]:bg-muted data-[status=active]:font-semibold"
                      >
                        {t.name}
                      </Link>
                      {t.name === tableName && (
                        <ul aria-label={`Endpoints of ${t.name}`} className="ml-2 border-l border-line pl-1">
                          {t.ops.map((op) => (
                            <li key={op}>
                              <Link
                                to="/api/$table"
                                params={{ table: t.name }}
                                search={{ op, as: search.as }}
                                aria-current={(search.op ?? t.ops[0]) === op ? 'true' : undefined}
                                className="flex gap-1.5 rounded px-2 py-0.5 font-mono text-xs hover:bg-muted aria-[current=true]:font-semibold"
                              >
                                <span className={`w-11 shrink-0 ${METHOD_STYLE[OP_METHOD[op]]}`}>{OP_METHOD[op]}</span>
                                <span className="truncate">{op === 'get' ? '/{pk}' : op}</span>
                              </Link>
                            </li>
                          ))}
                        </ul>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </div>
            <div>
              <h2 className="mb-1 font-semibold">Functions</h2>
              {doc.data.functions.length === 0 ? (
                <p className="text-xs text-fg-muted">
                  None in the document (read with the public key): functions of the <code>public</code> schema are closed until granted (
                  <code>grant execute on function … to anon, authenticated</code>).
                </p>
              ) : (
                <ul aria-label="Functions" className="space-y-0.5">
                  {doc.data.functions.map((f) => (
                    <li key={f.name}>
                      <Link
                        to="/api"
                        search={{ fn: f.name, as: search.as }}
                        aria-current={search.fn === f.name && !tableName ? 'page' : undefined}
                        className="flex gap-1.5 rounded px-2 py-0.5 font-mono text-xs hover:bg-muted aria-[current=page]:bg-muted aria-[current=page]:font-semibold"
                      >
                        <span className={`w-11 shrink-0 ${METHOD_STYLE.POST}`}>RPC</span>
                        <span className="min-w-0 [overflow-wrap:anywhere]">{f.name}</span>
                      </Link>
                    </li>
                  ))}
                </ul>
              )}
            </div>
            {[...groups].map(([tag, list]) => (
              <div key={tag}>
                <h2 className="mb-1 font-semibold capitalize">{tag}</h2>
                <ul className="space-y-0.5">
                  {list.map((e) => {
                    const id = `${e.method} ${e.path}`;
                    return (
                      <li key={id}>
                        <Link
                          to="/api"
                          search={{ endpoint: id, as: search.as }}
                          aria-current={search.endpoint === id && !tableName ? 'page' : undefined}
                          className="flex gap-1.5 rounded px-2 py-0.5 font-mono text-xs hover:bg-muted aria-[current=page]:bg-muted aria-[current=page]:font-semibold"
                        >
                          <span className={`w-11 shrink-0 ${METHOD_STYLE[e.method] ?? ''}`}>{e.method}</span>
                          <span className="min-w-0 [overflow-wrap:anywhere]">
                            {endpointLabel(e.path)
                              .split('/')
                              .map((part, i) => (
                                // biome-ignore lint/suspicious/noArrayIndexKey: the parts of one path, in order
                                <span key={i}>
                                  {i > 0 && (
                                    <>
                                      /<wbr />
                                    </>
                                  )}
                                  {part}
                                </span>
                              ))}
                          </span>
                        </Link>
                      </li>
                    );
                  })}
                </ul>
              </div>
            ))}
          </nav>
          <div className="min-w-0 space-y-4">
            <CallerPanel
              callers={callers.data}
              caller={caller}
              onCaller={setCaller}
              user={user}
              revealed={revealed}
              onReveal={setRevealed}
              secretKey={keys.data?.secret_key}
              inlineKeys={inlineKeys && revealed}
              onInlineKeys={setInlineKeys}
            />
            {tableName && !table && (
              <Notice kind="warn" title={`No table or view "${tableName}" is exposed`}>
                The API document has no such table in the <code>public</code> schema (yet): this page shows it as soon as it exists.
              </Notice>
            )}
            {table && (
              <>
                <h2 className="text-xl font-semibold">
                  <span className="font-mono">{table.name}</span>
                  {table.description && <span className="ml-2 text-sm font-normal text-fg-muted">{table.description}</span>}
                </h2>
                <TableBuilder
                  key={table.name}
                  table={table}
                  pgColumns={columns.data}
                  search={search}
                  setup={setup}
                  inlineKeys={inlineKeys && revealed}
                />
              </>
            )}
            {endpoint && (
              <EndpointBuilder
                key={search.endpoint}
                endpoint={endpoint}
                search={search}
                setup={setup}
                inlineKeys={inlineKeys && revealed}
              />
            )}
            {fn && <RpcBuilder key={fn.name} fn={fn} search={search} setup={setup} inlineKeys={inlineKeys && revealed} />}
            {!tableName && search.fn && doc.data && !fn && (
              <Notice kind="warn" title={`No function "${search.fn}" you may call`}>
                The API document has no such function in the <code>public</code> schema for this page's key, or it is not granted (
                <code>grant execute on function …</code>).
              </Notice>
            )}
            {!tableName && !endpoint && !search.fn && (
              <Notice kind="info">
                Pick a table (list, read one, create, update, delete), a function or an auth endpoint: {tables.length} table
                {tables.length === 1 ? '' : 's'}, {doc.data.functions.length} function{doc.data.functions.length === 1 ? '' : 's'},{' '}
                {doc.data.endpoints.length} other endpoints.
              </Notice>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
