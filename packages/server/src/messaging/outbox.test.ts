import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openTestDb } from '../../test/db.js';
import { type SmtpSink, startSmtpSink } from '../../test/mail.js';
import { type Db, migrateSystem } from '../db/index.js';
import { fakeClock } from '../lib/clock.js';
import { createSmtpTransport } from './email/smtp.js';
import { backoffMs, createOutbox, type MessagingWorker } from './outbox.js';

// The outbox worker on a real database (PGlite or PostgreSQL) and a real SMTP server.
let db: Db;
let cleanup: () => Promise<void>;
let sink: SmtpSink;
const clock = fakeClock(Date.parse('2026-01-01T00:00:00Z'));
const log = pino({ level: 'silent' });
const workers: MessagingWorker[] = [];

beforeAll(async () => {
  ({ db, cleanup } = await openTestDb());
  await migrateSystem(db);
  sink = await startSmtpSink();
});
afterEach(async () => {
  for (const w of workers.splice(0)) await w.close();
  await sink.start().catch(() => undefined); // a test that stopped it
  sink.refuseWith = null;
});
afterAll(async () => {
  await sink.stop();
  await cleanup();
});

function worker(over: Partial<Parameters<typeof createOutbox>[0]> = {}): MessagingWorker {
  const w = createOutbox({
    db,
    clock,
    log,
    email: createSmtpTransport(sink.url),
    sms: null,
    from: 'Plinth <no-reply@plinth.test>',
    project: () => ({ name: 'Acme', templates: {} }),
    pollMs: 60_000, // the tests drive it with drain()
    ...over,
  });
  workers.push(w);
  return w;
}

let n = 0;
const addr = () => `outbox-${++n}-${Math.random().toString(36).slice(2, 8)}@example.com`;

async function enqueue(w: MessagingWorker, to: string, link = 'https://app.example.com/verify?token=abc') {
  return db.transaction((tx) => w.enqueue(tx, { channel: 'email', kind: 'verification', to, data: { link, email: to } }));
}

async function row(id: string) {
  const { rows } = await db.query<{ status: string; attempts: number; payload: unknown; last_response: string | null }>(
    'select status, attempts, payload, last_response from plinth.outbox where id = $1',
    [id],
  );
  const r = rows[0];
  return { ...r, payload: typeof r.payload === 'string' ? JSON.parse(r.payload) : r.payload };
}

const receivedBy = (to: string) => sink.received.filter((m) => m.to.includes(to));

describe('outbox worker', () => {
  it('sends a committed message once, with its rendered template, and empties its payload', async () => {
    const w = worker();
    const to = addr();
    const id = await enqueue(w, to, 'https://app.example.com/verify?token=t0k3n');
    await w.drain();
    await w.drain();
    const got = receivedBy(to);
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      kind: 'verification',
      subject: 'Confirm your email for Acme',
      link: 'https://app.example.com/verify?token=t0k3n',
    });
    expect(got[0].from).toBe('no-reply@plinth.test');
    const r = await row(id);
    expect(r).toMatchObject({ status: 'sent', attempts: 1, payload: {} });
    expect(r.last_response).toMatch(/^250/);
  });

  it('sends nothing for a transaction that rolled back', async () => {
    const w = worker();
    const to = addr();
    await db
      .transaction(async (tx) => {
        await w.enqueue(tx, { channel: 'email', kind: 'reset', to, data: { link: 'https://x.example/r?token=1' } });
        throw new Error('the user change failed');
      })
      .catch(() => undefined);
    await w.drain();
    expect(receivedBy(to)).toHaveLength(0);
  });

  it('keeps a message while SMTP is down, retries with backoff, and sends it exactly once when SMTP is back', async () => {
    const w = worker();
    const to = addr();
    await sink.stop();
    const id = await enqueue(w, to);
    await w.drain();
    let r = await row(id);
    expect(r).toMatchObject({ status: 'queued', attempts: 1 });
    expect(r.last_response).toMatch(/ECONNECTION|ECONNREFUSED|connect/i);
    expect(r.payload.link).toBeDefined(); // still there to be sent

    await sink.start();
    await w.drain(); // not due yet: backoff
    expect(receivedBy(to)).toHaveLength(0);
    expect((await row(id)).attempts).toBe(1);

    clock.advance(backoffMs(1));
    await w.drain();
    await w.drain();
    expect(receivedBy(to)).toHaveLength(1);
    r = await row(id);
    expect(r).toMatchObject({ status: 'sent', attempts: 2, payload: {} });
  });

  it('gives up at once on a refused address (5xx) and keeps the answer in the log', async () => {
    const w = worker();
    const to = addr();
    sink.refuseWith = { code: 550, message: 'mailbox unavailable' };
    const id = await enqueue(w, to);
    await w.drain();
    clock.advance(3600_000);
    await w.drain();
    const r = await row(id);
    expect(r).toMatchObject({ status: 'failed', attempts: 1, payload: {} });
    expect(r.last_response).toContain('550');
  });

  it('gives up a message still failing a day after it was queued', async () => {
    const w = worker();
    const to = addr();
    await sink.stop();
    const id = await enqueue(w, to);
    for (let i = 0; i < 200 && (await row(id)).status === 'queued'; i++) {
      await w.drain();
      clock.advance(600_000);
    }
    const r = await row(id);
    expect(r.status).toBe('failed');
    expect(r.attempts).toBeGreaterThan(100);
    expect(r.payload).toEqual({});
  });

  it('a message queued before a restart is sent by the next process', async () => {
    const first = worker();
    const to = addr();
    await sink.stop();
    const id = await enqueue(first, to);
    await first.drain(); // fails: SMTP down
    await first.close(); // the process stops
    await sink.start();
    clock.advance(backoffMs(1));
    const second = worker();
    await second.drain();
    expect(receivedBy(to)).toHaveLength(1);
    expect((await row(id)).status).toBe('sent');
  });

  it('two workers on one database never send one message twice', async () => {
    const a = worker({ batch: 3 });
    const b = worker({ batch: 3 });
    const tos = Array.from({ length: 24 }, addr);
    for (const to of tos) await enqueue(a, to);
    await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
    for (const to of tos) expect(receivedBy(to), to).toHaveLength(1);
  });

  it('a claim held by a crashed worker is retried after its lease', async () => {
    const w = worker({ leaseMs: 60_000 });
    const to = addr();
    // A worker that claimed the message and died before answering: lease set, attempt counted
    // (in the enqueuing transaction, so no live worker can claim it first).
    await db.transaction(async (tx) => {
      const id = await w.enqueue(tx, { channel: 'email', kind: 'verification', to, data: { link: 'https://app.example.com/v?token=x' } });
      await tx.query(`update plinth.outbox set lease_until = $2::timestamptz, attempts = 1 where id = $1`, [
        id,
        new Date(clock.now() + 60_000).toISOString(),
      ]);
    });
    await w.drain();
    expect(receivedBy(to)).toHaveLength(0);
    clock.advance(60_001);
    await w.drain();
    expect(receivedBy(to)).toHaveLength(1);
  });
});

describe('backoff', () => {
  it('doubles from 5 s and stops growing at 10 minutes', () => {
    expect([1, 2, 3, 4].map(backoffMs)).toEqual([5_000, 10_000, 20_000, 40_000]);
    expect(backoffMs(8)).toBe(600_000);
    expect(backoffMs(50)).toBe(600_000);
  });
});
