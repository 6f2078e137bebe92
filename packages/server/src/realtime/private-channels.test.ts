import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestServer, type TestServer } from '../../test/harness.js';
import { type RtClient, rtConnect } from '../../test/realtime.js';

// Private channels on Plinth's own protocol (issue 37): `{type: 'join', private: true}` is decided
// by the policies on realtime.messages (realtime.topic() the channel), as Supabase's face decides
// them, at the join and again when the connection takes a new token: a token whose policies no
// longer let it read puts the client out of the channel; one that no longer lets it insert stops
// its sends. The policies below give each team its channel `team-<team>` from the token's
// app_metadata, and the right to send to writers only.

const ADA = '00000000-0000-4000-8000-0000000000a1';
const BOB = '00000000-0000-4000-8000-0000000000b2';
let t: TestServer;
let base: string;
const open: RtClient[] = [];
type Msg = Record<string, unknown>;

const token = (sub: string, team: string, writer: boolean) => t.mintToken(sub, { app_metadata: { team, writer } });

beforeAll(async () => {
  t = await createTestServer();
  // As a migration runs them: the database's owner (realtime.messages is not the SQL runner's).
  await t.db.query(`
    create policy "team reads its channel" on realtime.messages for select to authenticated
      using (realtime.topic() = 'team-' || (auth.jwt() -> 'app_metadata' ->> 'team'))`);
  await t.db.query(`
    create policy "team writers send on it" on realtime.messages for insert to authenticated
      with check (realtime.topic() = 'team-' || (auth.jwt() -> 'app_metadata' ->> 'team')
                  and (auth.jwt() -> 'app_metadata' ->> 'writer')::boolean)`);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});
afterAll(async () => {
  await t?.stop();
});

async function client(access?: string): Promise<RtClient> {
  const c = await rtConnect(base, t.keys.publicKey);
  open.push(c);
  if (access) await auth(c, access);
  return c;
}

const of = (c: RtClient, type: string, channel?: string) =>
  (c.messages as unknown as Msg[]).filter((m) => m.type === type && (channel === undefined || m.channel === channel));

/** Sends a message and waits for the pong of a ping sent after it: messages are handled in order. */
async function settled(c: RtClient, m: Msg): Promise<void> {
  const from = c.messages.length;
  c.send(m);
  c.send({ type: 'ping' });
  await c.next((x) => x.type === 'pong', 30_000, from);
}

const auth = (c: RtClient, access: string) => settled(c, { type: 'auth', access_token: access });

async function join(c: RtClient, channel: string, extra: Msg = { private: true }): Promise<Msg> {
  const from = c.messages.length;
  c.send({ type: 'join', channel, ...extra });
  return (await c.next(
    (m) => (m.type === 'joined' || m.type === 'error') && (m as unknown as Msg).channel === channel,
    30_000,
    from,
  )) as unknown as Msg;
}

describe('private channels on /api/v1/realtime', () => {
  it('the policies decide the join and the sends; anon and other teams are refused; the public channel of the name hears nothing', async () => {
    const writer = await client(await token(ADA, 'red', true));
    expect(await join(writer, 'team-red')).toMatchObject({ type: 'joined', channel: 'team-red', private: true, write: true });
    const reader = await client(await token(BOB, 'red', false));
    expect(await join(reader, 'team-red')).toMatchObject({ type: 'joined', private: true, write: false });

    expect(await join(await client(), 'team-red')).toMatchObject({ type: 'error', channel: 'team-red', code: 'forbidden' });
    expect(await join(await client(await token(BOB, 'blue', true)), 'team-red')).toMatchObject({ type: 'error', code: 'forbidden' });
    const eavesdropper = await client();
    expect(await join(eavesdropper, 'team-red', {})).toMatchObject({ type: 'joined', channel: 'team-red' });

    await settled(reader, { type: 'broadcast', channel: 'team-red', event: 'msg', payload: { from: 'reader' } });
    expect(of(reader, 'error', 'team-red')).toMatchObject([{ code: 'forbidden' }]);
    writer.send({ type: 'broadcast', channel: 'team-red', event: 'msg', payload: { from: 'writer' } });
    await expect.poll(() => of(reader, 'broadcast').map((m) => m.payload)).toEqual([{ from: 'writer' }]);
    // A public message after it reaches the eavesdropper: had the private one reached it, it would be first.
    const other = await client();
    await join(other, 'team-red', {});
    other.send({ type: 'broadcast', channel: 'team-red', event: 'msg', payload: { open: true } });
    await expect.poll(() => of(eavesdropper, 'broadcast').map((m) => m.payload)).toEqual([{ open: true }]);
  });

  it('a new token whose policies refuse the channel puts the client out of it: an error naming it, then left, and nothing more', async () => {
    const writer = await client(await token(ADA, 'green', true));
    await join(writer, 'team-green');
    const c = await client(await token(BOB, 'green', false));
    await join(c, 'team-green');
    writer.send({ type: 'broadcast', channel: 'team-green', event: 'msg', payload: { n: 1 } });
    await expect.poll(() => of(c, 'broadcast').length).toBe(1);

    // Another team now (a new token after the user moved): out of team-green.
    await auth(c, await token(BOB, 'yellow', false));
    expect(of(c, 'error', 'team-green')).toMatchObject([{ code: 'forbidden', channel: 'team-green' }]);
    expect(of(c, 'left', 'team-green')).toHaveLength(1);
    writer.send({ type: 'broadcast', channel: 'team-green', event: 'msg', payload: { n: 2 } });
    // The writer hears its own only with self: a member joined after, with self, shows the message went out.
    const witness = await client(await token(ADA, 'green', false));
    await join(witness, 'team-green');
    writer.send({ type: 'broadcast', channel: 'team-green', event: 'msg', payload: { n: 3 } });
    await expect.poll(() => of(witness, 'broadcast').map((m) => m.payload)).toEqual([{ n: 3 }]);
    expect(of(c, 'broadcast').map((m) => m.payload)).toEqual([{ n: 1 }]);
    // Its sends on the channel are refused as not joined.
    await settled(c, { type: 'broadcast', channel: 'team-green', event: 'msg', payload: {} });
    expect(of(c, 'error', 'team-green')).toHaveLength(2);
  });

  it('a new token that may read but no longer insert keeps the client in the channel and stops its sends, until a writer token', async () => {
    const listener = await client(await token(BOB, 'violet', false));
    await join(listener, 'team-violet');
    const c = await client(await token(ADA, 'violet', true));
    await join(c, 'team-violet');
    c.send({ type: 'broadcast', channel: 'team-violet', event: 'msg', payload: { n: 1 } });
    await expect.poll(() => of(listener, 'broadcast').length).toBe(1);

    await auth(c, await token(ADA, 'violet', false));
    await settled(c, { type: 'broadcast', channel: 'team-violet', event: 'msg', payload: { n: 2 } });
    expect(of(c, 'error', 'team-violet')).toMatchObject([{ code: 'forbidden' }]);
    expect(of(c, 'left')).toHaveLength(0);

    // A writer's token again: it may send again.
    await auth(c, await token(ADA, 'violet', true));
    c.send({ type: 'broadcast', channel: 'team-violet', event: 'msg', payload: { n: 3 } });
    await expect.poll(() => of(listener, 'broadcast').map((m) => m.payload)).toEqual([{ n: 1 }, { n: 3 }]);
  });

  it('decisions are kept per token, and forgotten when the policies change: a dropped policy refuses the next join', async () => {
    await t.db.query(
      `create policy "for a while" on realtime.messages for select to authenticated using (realtime.topic() = 'for-a-while')`,
    );
    const access = await token(ADA, 'none', false);
    const first = await client(access);
    expect(await join(first, 'for-a-while')).toMatchObject({ type: 'joined' });
    // Kept: the same token joins again without asking (the cache's own test counts the asks).
    expect(await join(await client(access), 'for-a-while')).toMatchObject({ type: 'joined' });
    await t.db.query(`drop policy "for a while" on realtime.messages`);
    await expect.poll(async () => (await join(await client(access), 'for-a-while')).type, { timeout: 20_000, interval: 200 }).toBe('error');
  });

  it('"private" must be a boolean', async () => {
    const c = await client();
    c.send({ type: 'join', channel: 'team-red', private: 'yes' });
    expect(await c.next((m) => m.type === 'error')).toMatchObject({ code: 'invalid_parameter', details: { field: 'private' } });
  });
});
