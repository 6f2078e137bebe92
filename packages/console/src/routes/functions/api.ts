/**
 * The functions' admin API (docs/functions.md "Deploying"), through the console's `call` (the
 * admin cookie and its CSRF header). Shapes as the server answers them (functions/routes.ts).
 */
import type { FunctionCall } from '@plinth/shared';
import { call } from '../../lib/api';

export interface FunctionListing {
  name: string;
  version: number | null;
  file: string | null;
  schedule: string | null;
}
export type { FunctionCall } from '@plinth/shared';
export interface FunctionVersion {
  version: number;
  sha256: string;
  size: number;
  created_at: string;
  live: boolean;
}
export interface ScheduleState {
  function: string;
  cron: string;
  next_at: string | null;
  last_started_at: string | null;
  last_finished_at: string | null;
  last_status: 'running' | 'ok' | 'failed' | 'lost' | null;
  last_detail: string | null;
  runs: number;
  missed: number;
}

const fn = (name: string) => `/api/v1/admin/functions/${encodeURIComponent(name)}`;
const secret = (name: string) => `/api/v1/admin/function-secrets/${encodeURIComponent(name)}`;

export const functionsApi = {
  list: () => call<FunctionListing[]>({ path: '/api/v1/admin/functions' }),
  calls: (name: string) => call<FunctionCall[]>({ path: `${fn(name)}/calls` }),
  versions: (name: string) => call<FunctionVersion[]>({ path: `${fn(name)}/versions` }),
  rollback: (name: string, to: number) =>
    call<{ version: number; from: number }>({ method: 'POST', path: `${fn(name)}/rollback`, body: { to } }),
  schedules: () => call<ScheduleState[]>({ path: '/api/v1/admin/function-schedules' }),
  secrets: () => call<Array<{ name: string; value: string }>>({ path: '/api/v1/admin/function-secrets' }),
  setSecret: (name: string, value: string) => call<void>({ method: 'PUT', path: secret(name), body: { value } }),
  unsetSecret: (name: string) => call<void>({ method: 'DELETE', path: secret(name) }),
};

/** How often the page reads the calls and schedules again. */
export const FUNCTIONS_POLL_MS = 5000;
