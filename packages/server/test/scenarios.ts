import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/**
 * Every route (method and pattern) a server has, read from Fastify's own table, HEAD and OPTIONS
 * left out: `GET /api/v1/users/:id`. What a walk over the whole surface starts from, so a route
 * added later is walked (or must be named) without anyone remembering to.
 */
export function routesOf(app: Pick<FastifyInstance, 'printRoutes'>): string[] {
  const out: string[] = [];
  const path: string[] = [];
  for (const line of app.printRoutes().split('\n')) {
    const m = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = [...m[1]].length / 4;
    path.length = depth;
    path.push(m[2] === '(empty root node)' ? '' : m[2]);
    const methods = (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD' && x !== 'OPTIONS');
    for (const method of methods) out.push(`${method} ${path.join('')}`);
  }
  return out;
}

/** A route pattern made into a URL that reaches it: each `:param` and `*` becomes `x`. */
export const urlOf = (pattern: string) => pattern.replace(/:[A-Za-z_]+/g, 'x').replace(/\*/g, 'x');

/**
 * One request and what it must answer: the scenario runner's row (in the manner of PocketBase's
 * ApiScenario), for the checks that are a status and a code, written as tables.
 * `status` is the status expected, or `{not: [...]}` the statuses it must not be.
 */
export interface Scenario {
  method: string;
  url: string;
  /** Who asks: a key of the caller table the runner is given (`none` sends no credential). */
  as: string;
  payload?: unknown;
  status: number | { not: number[] };
  /** The error code expected (Plinth's `code`, or the face's own field as `codeOf` reads it). */
  code?: string;
  /** Error codes it must not answer. */
  notCodes?: string[];
}

export interface ScenarioRunner {
  inject(o: { method: string; url: string; headers: Record<string, string>; payload?: unknown }): Promise<LightMyRequestResponse>;
  /** The headers of each caller a scenario names in `as`. */
  callers: Record<string, Record<string, string>>;
  /** Reads an answer's error code: Plinth's `code` unless a face says otherwise. */
  codeOf?: (res: LightMyRequestResponse) => unknown;
}

const plinthCode = (res: LightMyRequestResponse): unknown => {
  try {
    return (res.json() as { code?: unknown }).code;
  } catch {
    return undefined;
  }
};

/** Runs one scenario and checks its answer; the failure names the request, the caller and the answer. */
export async function runScenario(runner: ScenarioRunner, s: Scenario): Promise<LightMyRequestResponse> {
  const headers = runner.callers[s.as];
  if (!headers) throw new Error(`scenario caller "${s.as}" is not one of ${Object.keys(runner.callers).join(', ')}`);
  const body = s.payload === undefined && ['POST', 'PATCH', 'PUT'].includes(s.method) ? {} : s.payload;
  const res = await runner.inject({ method: s.method, url: s.url, headers, ...(body === undefined ? {} : { payload: body }) });
  const what = `${s.method} ${s.url} as ${s.as}: ${res.statusCode} ${res.body.slice(0, 300)}`;
  if (typeof s.status === 'number') expect(res.statusCode, what).toBe(s.status);
  else expect(s.status.not, what).not.toContain(res.statusCode);
  if (s.code !== undefined) expect((runner.codeOf ?? plinthCode)(res), what).toBe(s.code);
  if (s.notCodes) expect(s.notCodes, what).not.toContain((runner.codeOf ?? plinthCode)(res));
  return res;
}
