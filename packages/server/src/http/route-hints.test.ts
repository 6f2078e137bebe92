import { describe, expect, it } from 'vitest';
import { createTestServer } from '../../test/harness.js';
import { suggestRoute } from './route-hints.js';

describe('route suggestions', () => {
  const routes = [
    { method: 'GET', url: '/api/v1/db/*' },
    { method: 'POST', url: '/v1/auth/signin' },
    { method: 'POST', url: '/v1/auth/signup' },
    { method: 'GET', url: '/api/v1/users/:id' },
    { method: 'GET', url: '/health' },
  ];
  it.each([
    ['GET', '/api/v1/dv/todos', '/api/v1/db/todos'],
    ['GET', '/API/v1/db/todos', '/api/v1/db/todos'],
    ['POST', '/v1/auth/sigin', '/v1/auth/signin'],
    ['GET', '/api/v1/user/42', '/api/v1/users/42'],
    ['GET', '/healht', '/health'],
    ['GET', '/v1/auth/signin', null], // another method's route is no suggestion
    ['GET', '/completely/else', null],
  ])('%s %s → %s', (method, path, meant) => {
    expect(suggestRoute(method, path, routes)).toBe(meant);
  });
});

describe('route_not_found answers', () => {
  it('say the route a typo meant; /rest/v1 is served (docs/supabase.md), no longer a hint', async () => {
    const t = await createTestServer();
    try {
      // PostgREST's path answers in PostgREST's shape since the face exists (issue 34).
      const supa = await t.app.inject({ url: '/rest/v1/todos?select=id', headers: t.as.anon });
      expect(supa.statusCode).toBe(404);
      expect(supa.json()).toMatchObject({ code: 'PGRST205', message: "Could not find the table 'public.todos' in the schema cache" });
      const typo = await t.app.inject({ method: 'POST', url: '/v1/auth/sigup', headers: t.as.anon, payload: {} });
      expect(typo.json()).toEqual({
        code: 'route_not_found',
        message: 'No route POST /v1/auth/sigup; did you mean POST /v1/auth/signup?',
        details: { did_you_mean: '/v1/auth/signup' },
      });
      // GoTrue's paths are served too: a typo there gets GoTrue's nearest path, not a Plinth one.
      const goTrue = await t.app.inject({ method: 'POST', url: '/auth/v1/sigup', headers: t.as.anon, payload: {} });
      expect(goTrue.json()).toMatchObject({ code: 'route_not_found', details: { did_you_mean: '/auth/v1/signup' } });
      const nothing = await t.app.inject({ url: '/nothing/like/it/at/all' });
      expect(nothing.json()).toEqual({ code: 'route_not_found', message: 'No route GET /nothing/like/it/at/all.' });
    } finally {
      await t.stop();
    }
  });
});
