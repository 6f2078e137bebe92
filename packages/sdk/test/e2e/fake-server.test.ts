import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeServer, PUBLIC_KEY, startFakeServer } from '../fake-server.js';
import { EXPECTED, runScenarios } from '../scenarios.js';
import { APP, type E2eServer, email, startServer } from './server.js';

// The SDK's unit tests talk to a fake server (test/fake-server.ts); this runs one table of
// requests (test/scenarios.ts) against the real server and against the fake, so the fake
// answers as the server does: statuses, codes and shapes.

let s: E2eServer;
let fake: FakeServer;

beforeAll(async () => {
  s = await startServer({ magic_link_enabled: true, magic_link_url: `${APP}/magic` });
  fake = await startFakeServer();
});
afterAll(async () => {
  await fake?.close();
  await s?.t.stop();
});

describe('the scenario table', () => {
  it('is what the real server answers', async () => {
    expect(await runScenarios({ url: s.url, publicKey: s.publicKey, email: email('scenario') })).toEqual(EXPECTED);
  });

  it('is what the fake server of the unit tests answers', async () => {
    expect(await runScenarios({ url: fake.url, publicKey: PUBLIC_KEY, email: 'scenario@example.com' })).toEqual(EXPECTED);
  });
});
