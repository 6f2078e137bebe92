import { describe, expect, it } from 'vitest';
import { realtimeJsServer, subscribed, type Vsn } from '../../../test/realtime-js.js';

// Private channels (issue 37), as Supabase decides them: policies on realtime.messages with
// realtime.topic() say who may join (select) and send (insert). The policies below are
// supabase-js's own test project's, narrowed: anyone signed in reads team-*, only team-write
// takes messages.
const ADA = '00000000-0000-4000-8000-00000000a0a0';
const BOB = '00000000-0000-4000-8000-00000000b0b0';
let adaToken: string;
let bobToken: string;
const rt = realtimeJsServer(async (t) => {
  // As a Supabase folder's migration runs them: the database's owner (realtime.messages is not the SQL runner's).
  await t.db.query(`
    create policy "signed in reads team topics" on realtime.messages for select to authenticated
      using (realtime.topic() like 'team-%')`);
  await t.db.query(`
    create policy "signed in writes team-write" on realtime.messages for insert to authenticated
      with check (realtime.topic() = 'team-write')`);
  await t.db.query(`
    create policy "ada alone reads ada-only" on realtime.messages for select to authenticated
      using (realtime.topic() = 'ada-only' and auth.uid() = '${ADA}'::uuid)`);
  adaToken = await t.mintToken(ADA, { email: 'ada@example.com' });
  bobToken = await t.mintToken(BOB, { email: 'bob@example.com' });
});

/** A client; with `token`, signed in before it joins. */
const client = async (vsn: Vsn, token?: string) => (token ? rt.signedIn(vsn, token) : rt.client(vsn));

const privately = { private: true, broadcast: { self: true, ack: true } };

describe.each(['1.0.0', '2.0.0'] as const)('private channels, vsn %s', (vsn) => {
  it('a policy that lets a user read the topic lets it join; one that lets it insert lets it send', async () => {
    const writer = (await client(vsn, adaToken)).channel('team-write', { config: privately });
    const got: unknown[] = [];
    writer.on('broadcast', { event: 'e' }, (m) => got.push(m.payload));
    expect(await subscribed(writer)).toBe('SUBSCRIBED');
    expect(await writer.send({ type: 'broadcast', event: 'e', payload: { n: 1 } })).toBe('ok');
    await expect.poll(() => got).toEqual([{ n: 1 }]);

    // Readable but not writable: joined, and a send is refused.
    const reader = (await client(vsn, adaToken)).channel('team-read', { config: privately });
    expect(await subscribed(reader)).toBe('SUBSCRIBED');
    expect(await reader.send({ type: 'broadcast', event: 'e', payload: { n: 2 } })).toBe('error');
  });

  it('a new token whose policies refuse the channel ends it (system error, then phx_close); a broadcast after it does not arrive', async () => {
    const c = await client(vsn, adaToken);
    const ch = c.channel('ada-only', { config: { private: true } });
    const got: unknown[] = [];
    const system: Array<{ status?: string; message?: string }> = [];
    ch.on('broadcast', { event: 'e' }, (m) => got.push(m.payload));
    ch.on('system', {}, (m) => system.push(m));
    expect(await subscribed(ch)).toBe('SUBSCRIBED');
    // Another member, still Ada: it shows what went out.
    const witness = (await client(vsn, adaToken)).channel('ada-only', { config: { private: true } });
    const heard: unknown[] = [];
    witness.on('broadcast', { event: 'e' }, (m) => heard.push(m.payload));
    expect(await subscribed(witness)).toBe('SUBSCRIBED');
    const send = async (n: number) => {
      const res = await rt.t.app.inject({
        method: 'POST',
        url: '/realtime/v1/api/broadcast',
        headers: { authorization: `Bearer ${rt.t.keys.secretKey}` },
        payload: { messages: [{ topic: 'ada-only', event: 'e', payload: { n }, private: true }] },
      });
      expect(res.statusCode).toBe(202);
    };
    await send(1);
    await expect.poll(() => got).toEqual([{ n: 1 }]);

    // The same client now signed in as another user: its policies do not let it read ada-only.
    await c.setAuth(bobToken);
    await expect.poll(() => ch.state).toBe('closed');
    expect(system).toMatchObject([{ status: 'error', message: expect.stringContaining('ada-only') }]);
    await send(2);
    await expect.poll(() => heard).toEqual([{ n: 1 }, { n: 2 }]);
    expect(got).toEqual([{ n: 1 }]);
  });

  it('anon, and a user on a topic no policy names, are refused at the join', async () => {
    expect(await subscribed((await client(vsn)).channel('team-write', { config: privately }))).toBe('CHANNEL_ERROR');
    expect(await subscribed((await client(vsn, adaToken)).channel('other-topic', { config: privately }))).toBe('CHANNEL_ERROR');
  });

  it('a public channel of the same name hears nothing of the private one', async () => {
    const eavesdropper = (await client(vsn)).channel('team-write', { config: { broadcast: { self: true } } });
    const heard: unknown[] = [];
    eavesdropper.on('broadcast', { event: 'e' }, (m) => heard.push(m.payload));
    expect(await subscribed(eavesdropper)).toBe('SUBSCRIBED');
    const writer = (await client(vsn, adaToken)).channel('team-write', { config: privately });
    const got: unknown[] = [];
    writer.on('broadcast', { event: 'e' }, (m) => got.push(m.payload));
    expect(await subscribed(writer)).toBe('SUBSCRIBED');
    expect(await writer.send({ type: 'broadcast', event: 'e', payload: { secret: true } })).toBe('ok');
    await expect.poll(() => got).toEqual([{ secret: true }]);
    // A public message after it reaches the eavesdropper: had the private one reached it, it would be first.
    await eavesdropper.send({ type: 'broadcast', event: 'e', payload: { open: true } });
    await expect.poll(() => heard).toEqual([{ open: true }]);
  });
});

describe('private channels over HTTP', () => {
  it('a user whose policies let it insert sends on the private channel; others get 403 and nothing is sent', async () => {
    const writer = (await client('2.0.0', adaToken)).channel('team-write', { config: privately });
    const got: unknown[] = [];
    writer.on('broadcast', { event: 'h' }, (m) => got.push(m.payload));
    expect(await subscribed(writer)).toBe('SUBSCRIBED');
    const post = (topic: string, authorization?: string) =>
      rt.t.app.inject({
        method: 'POST',
        url: '/realtime/v1/api/broadcast',
        headers: { apikey: rt.t.keys.publicKey, ...(authorization ? { authorization } : {}) },
        payload: { messages: [{ topic, event: 'h', payload: { topic }, private: true }] },
      });
    expect((await post('team-write', `Bearer ${adaToken}`)).statusCode).toBe(202);
    await expect.poll(() => got).toEqual([{ topic: 'team-write' }]);
    expect((await post('team-read', `Bearer ${adaToken}`)).statusCode).toBe(403);
    expect((await post('team-write')).statusCode).toBe(403);
    expect(got).toEqual([{ topic: 'team-write' }]);
  });

  it('bytes stay bytes: httpSend of a Uint8Array reaches a vsn 2 member as those bytes, and a binary push too', async () => {
    const writer = (await client('2.0.0', adaToken)).channel('team-write', { config: privately });
    const got: unknown[] = [];
    writer.on('broadcast', { event: 'bin' }, (m) => got.push(m.payload));
    expect(await subscribed(writer)).toBe('SUBSCRIBED');
    expect(await writer.httpSend('bin', new Uint8Array([1, 2, 3, 4, 5]))).toEqual({ success: true });
    await expect.poll(() => got.map((p) => [...new Uint8Array(p as ArrayBuffer)])).toEqual([[1, 2, 3, 4, 5]]);
    // A member of vsn 1 gets the same bytes as base64 text (JSON carries no bytes).
    const old = (await client('1.0.0', adaToken)).channel('team-write', { config: privately });
    const oldGot: unknown[] = [];
    old.on('broadcast', { event: 'bin' }, (m) => oldGot.push(m.payload));
    expect(await subscribed(old)).toBe('SUBSCRIBED');
    expect(await writer.send({ type: 'broadcast', event: 'bin', payload: new Uint8Array([9, 8]).buffer })).toBe('ok');
    await expect.poll(() => got.length).toBe(2);
    expect([...new Uint8Array(got[1] as ArrayBuffer)]).toEqual([9, 8]);
    await expect.poll(() => oldGot).toEqual([Buffer.from([9, 8]).toString('base64')]);
  });

  it('nothing of a decision stays in realtime.messages', async () => {
    const { rows } = await rt.t.db.query<{ n: number }>('select count(*)::int as n from realtime.messages');
    expect(rows[0].n).toBe(0);
  });
});
