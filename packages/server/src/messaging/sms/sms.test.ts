import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SmsTransport } from '../types.js';
import { SendError } from '../send-error.js';
import { parseSms } from '../../config/index.js';
import { createSmsTransport, createTwilioTransport } from './index.js';

/** The transport a server with this environment gets (config parsed as at start). */
const fromEnv = (env: Record<string, string | undefined>) => createSmsTransport(parseSms(env));

// Each provider is played by a real HTTP server on 127.0.0.1 that checks the request the way
// the provider would and answers its documented bodies; nothing stubs fetch.

const S = {
  sid: 'AC0123456789abcdef0123456789abcdef',
  token: 'tw-token/S3cr3t!+',
  elksUser: 'u0123456789abcdef0123456789abcdef',
  elksPass: 'elks-P4ss w0rd&=',
  vonKey: 'vk12ab34',
  vonSecret: 'vonage-S3cret/?#',
  hook: 'hook-secret-xyz',
  hookToken: 'q-token-987654',
};
const TO = '+46701234567';
const ENV = {
  twilio: { SMS_PROVIDER: 'twilio', TWILIO_ACCOUNT_SID: S.sid, TWILIO_AUTH_TOKEN: S.token, TWILIO_FROM: '+15005550006' },
  elks: { SMS_PROVIDER: '46elks', ELKS_API_USERNAME: S.elksUser, ELKS_API_PASSWORD: S.elksPass, ELKS_FROM: 'Plinth' },
  vonage: { SMS_PROVIDER: 'vonage', VONAGE_API_KEY: S.vonKey, VONAGE_API_SECRET: S.vonSecret, VONAGE_FROM: 'Plinth' },
  webhook: { SMS_PROVIDER: 'webhook', SMS_WEBHOOK_URL: 'https://sms.example.com/send', SMS_WEBHOOK_SECRET: S.hook },
};
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const secretForms = (s: string) => [s, encodeURIComponent(s), new URLSearchParams([['', s]]).toString().slice(1)];
const ALL_SECRETS = [...Object.values(S).flatMap(secretForms), basic(S.sid, S.token).slice(6), basic(S.elksUser, S.elksPass).slice(6)];

interface Seen {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
}
interface Answer {
  status: number;
  body: string;
  type?: string;
}
const form = (s: Seen) => Object.fromEntries(new URLSearchParams(s.raw));
const jsonAnswer = (status: number, body: unknown): Answer => ({ status, body: JSON.stringify(body), type: 'application/json' });
const text = (status: number, body: string): Answer => ({ status, body, type: 'text/plain' });

interface Fake {
  name: string;
  env(base: string): Record<string, string>;
  /** Runs inside the peer: what the provider would reject. */
  check(s: Seen): void;
  body(s: Seen): string;
  ok: Answer;
  okResponse: string;
  errors: Array<[string, Answer, boolean, RegExp]>;
}

// Twilio's error body: {code, message, more_info, status}.
const twilioError = (status: number, code: number, message: string) =>
  jsonAnswer(status, { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status });
const vonageOk = {
  'message-count': '1',
  messages: [{ to: '46701234567', 'message-id': '0A0000000123ABCD1', status: '0', network: '24001' }],
};
const vonageFail = (status: string, errorText: string) =>
  jsonAnswer(200, { 'message-count': '1', messages: [{ status, 'error-text': errorText }] });

const FAKES: Fake[] = [
  {
    name: 'twilio',
    env: (base) => ({ ...ENV.twilio, TWILIO_BASE_URL: base }),
    check(s) {
      expect([s.method, s.path]).toEqual(['POST', `/2010-04-01/Accounts/${S.sid}/Messages.json`]);
      expect(s.headers.authorization).toBe(basic(S.sid, S.token));
      expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.keys(form(s)).sort()).toEqual(['Body', 'From', 'To']);
      expect(form(s)).toMatchObject({ To: TO, From: '+15005550006' });
    },
    body: (s) => form(s).Body!,
    ok: jsonAnswer(201, { sid: 'SM0123456789abcdef0123456789abcdef', status: 'queued', to: TO, error_code: null }),
    okResponse: 'sid=SM0123456789abcdef0123456789abcdef status=queued',
    errors: [
      ['400 invalid To', twilioError(400, 21211, "The 'To' number is not valid."), false, /HTTP 400, 21211 The 'To'/],
      ['401 bad credentials', twilioError(401, 20003, 'Authenticate'), false, /20003 Authenticate/],
      ['429 too many requests', twilioError(429, 20429, 'Too Many Requests'), true, /HTTP 429/],
      ['500 internal error', twilioError(500, 20500, 'Internal Server Error'), true, /20500/],
      ['503 HTML from a proxy', text(503, '<html>Service Unavailable</html>'), true, /HTTP 503: <html>/],
      ['201 without a sid', jsonAnswer(201, { status: 'queued' }), false, /without a message sid/],
    ],
  },
  {
    name: '46elks',
    env: (base) => ({ ...ENV.elks, ELKS_BASE_URL: `${base}/` }),
    check(s) {
      expect([s.method, s.path]).toEqual(['POST', '/a1/sms']);
      expect(s.headers.authorization).toBe(basic(S.elksUser, S.elksPass));
      expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.keys(form(s)).sort()).toEqual(['from', 'message', 'to']);
      expect(form(s)).toMatchObject({ from: 'Plinth', to: TO });
    },
    body: (s) => form(s).message!,
    ok: jsonAnswer(200, {
      status: 'created',
      direction: 'outgoing',
      to: TO,
      parts: 1,
      cost: 3500,
      id: 's70df59406a1b4643b96f3f91e0bfb7b0',
    }),
    okResponse: 'id=s70df59406a1b4643b96f3f91e0bfb7b0 status=created',
    errors: [
      ['403 invalid number', text(403, 'Invalid to number'), false, /HTTP 403: Invalid to number/],
      ['401 bad credentials', text(401, 'API access requires Basic HTTP authentication'), false, /HTTP 401/],
      ['402 no credit', text(402, 'Not enough credits'), false, /Not enough credits/],
      ['429 rate limited', text(429, 'Too many requests'), true, /HTTP 429/],
      ['502 bad gateway', text(502, 'Bad Gateway'), true, /HTTP 502/],
    ],
  },
  {
    name: 'vonage',
    env: (base) => ({ ...ENV.vonage, VONAGE_BASE_URL: base }),
    check(s) {
      expect([s.method, s.path]).toEqual(['POST', '/sms/json']);
      expect(s.headers.authorization).toBeUndefined();
      expect(s.headers['content-type']).toBe('application/x-www-form-urlencoded');
      const { type, ...f } = form(s);
      expect(Object.keys(f).sort()).toEqual(['api_key', 'api_secret', 'from', 'text', 'to']);
      expect(f).toMatchObject({ api_key: S.vonKey, api_secret: S.vonSecret, from: 'Plinth', to: '46701234567' });
      expect(type ?? 'unicode').toBe('unicode');
    },
    body: (s) => form(s).text!,
    ok: jsonAnswer(200, vonageOk),
    okResponse: 'message-id=0A0000000123ABCD1 status=0',
    errors: [
      ['200 status 4 bad credentials', vonageFail('4', 'Bad Credentials'), false, /status 4: Bad Credentials/],
      ['200 status 3 invalid to', vonageFail('3', 'Invalid to address'), false, /status 3/],
      ['200 status 1 throttled', vonageFail('1', 'Throughput Rate Exceeded - please wait [ 30 ] and retry'), true, /status 1: Throughput/],
      ['200 status 5 internal error', vonageFail('5', 'Internal Error'), true, /status 5/],
      [
        '200 second part failed',
        jsonAnswer(200, { messages: [vonageOk.messages[0], { status: '9', 'error-text': 'Quota Exceeded' }] }),
        false,
        /status 9/,
      ],
      ['200 without messages', jsonAnswer(200, {}), false, /without messages/],
      ['500 from the API', text(500, 'Internal Server Error'), true, /HTTP 500/],
    ],
  },
  {
    name: 'webhook',
    env: (base) => ({ ...ENV.webhook, SMS_WEBHOOK_URL: `${base}/hooks/sms?token=${S.hookToken}` }),
    check(s) {
      expect([s.method, s.path]).toEqual(['POST', `/hooks/sms?token=${S.hookToken}`]);
      expect(s.headers['content-type']).toBe('application/json');
      expect(Object.keys(JSON.parse(s.raw))).toEqual(['to', 'body']);
      expect(JSON.parse(s.raw).to).toBe(TO);
      const timestamp = String(s.headers['x-plinth-timestamp']);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(300);
      const expected = Buffer.from(`sha256=${createHmac('sha256', S.hook).update(`${timestamp}.${s.raw}`).digest('hex')}`);
      const got = Buffer.from(String(s.headers['x-plinth-signature']));
      expect(got.length === expected.length && timingSafeEqual(got, expected)).toBe(true);
    },
    body: (s) => JSON.parse(s.raw).body,
    ok: jsonAnswer(200, { queued: true }),
    okResponse: 'HTTP 200: {"queued":true}',
    errors: [
      ['400 refused', text(400, 'bad number'), false, /HTTP 400: bad number/],
      ['404 wrong path', text(404, 'Not Found'), false, /HTTP 404/],
      ['301 redirect is not followed', { status: 301, body: '' }, false, /HTTP 301/],
      ['429 busy', text(429, 'slow down'), true, /HTTP 429/],
      ['500 crashed', text(500, 'oops'), true, /HTTP 500: oops/],
    ],
  },
];

interface Peer {
  base: string;
  seen: Seen[];
  problems: string[];
  /** One-shot answer for the next request; `echo` answers the request back, `hang` never answers. */
  next: Answer | 'echo' | 'hang' | null;
  close(): Promise<void>;
}

async function startPeer(fake: Pick<Fake, 'check' | 'ok'>): Promise<Peer> {
  const peer: Peer = { base: '', seen: [], problems: [], next: null, close: async () => {} };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { method: req.method!, path: req.url!, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8') };
      peer.seen.push(s);
      const next = peer.next;
      peer.next = null;
      if (next === 'hang') return;
      let a: Answer = next === 'echo' ? jsonAnswer(400, s) : (next ?? fake.ok);
      try {
        fake.check(s);
      } catch (err) {
        peer.problems.push((err as Error).message);
        a = text(418, `fake provider refused: ${(err as Error).message}`);
      }
      if (a.type) res.setHeader('content-type', a.type);
      // No kept-alive sockets: on a busy machine the client could reuse one just as this server's
      // keep-alive timeout closes it (ECONNRESET: a race of the test's, not of the transport's).
      res.setHeader('connection', 'close');
      if (a.status === 301) res.setHeader('location', 'http://127.0.0.1:9/elsewhere');
      res.writeHead(a.status).end(a.body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  peer.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  peer.close = () =>
    new Promise<void>((ok) => {
      server.closeAllConnections();
      server.close(() => ok());
    });
  return peer;
}

const peers = new Map<string, Peer>();
const transport = (fake: Fake) => fromEnv(fake.env(peers.get(fake.name)!.base)) as SmsTransport;
async function failure(p: Promise<unknown>): Promise<SendError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SendError);
  return err as SendError;
}
const expectNoSecret = (...texts: string[]) => {
  for (const t of texts) for (const s of ALL_SECRETS) expect(t).not.toContain(s);
};

beforeAll(async () => {
  for (const fake of FAKES) peers.set(fake.name, await startPeer(fake));
});
afterAll(async () => {
  for (const peer of peers.values()) await peer.close();
});
beforeEach(() => {
  for (const peer of peers.values()) Object.assign(peer, { seen: [], problems: [], next: null });
});

describe.each(FAKES)('$name', (fake) => {
  it('sends the documented request and reports the provider answer', async () => {
    const sent = await transport(fake).send({ to: TO, body: 'Din kod: 123456' });
    expect(peers.get(fake.name)!.problems).toEqual([]);
    expect(sent.response).toBe(fake.okResponse);
    expect(fake.body(peers.get(fake.name)!.seen[0]!)).toBe('Din kod: 123456');
  });

  const errors = fake.errors.map(([name, reply, retryable, message]) => ({ name, reply, retryable, message }));
  it.each(errors)('$name → retryable: $retryable', async ({ reply, retryable, message }) => {
    peers.get(fake.name)!.next = reply;
    const err = await failure(transport(fake).send({ to: TO, body: 'Code: 123456' }));
    expect(peers.get(fake.name)!.problems).toEqual([]);
    expect(err.retryable).toBe(retryable);
    expect(err.message).toMatch(message);
    expect(err.response).toMatch(new RegExp(`^HTTP ${reply.status}`));
    expect(err.response.length).toBeLessThanOrEqual(500);
  });

  it('connection refused is retryable', async () => {
    const closed = await startPeer(fake);
    await closed.close();
    const err = await failure((fromEnv(fake.env(closed.base)) as SmsTransport).send({ to: TO, body: 'x' }));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it.each([400, 200])('never puts a credential in an error, even when the provider echoes the request (HTTP %s)', async (status) => {
    const peer = peers.get(fake.name)!;
    peer.next = 'echo';
    const echoed = await failure(transport(fake).send({ to: TO, body: 'x'.repeat(600) }));
    expectNoSecret(echoed.message, echoed.response);
    expect(echoed.response.length).toBeLessThanOrEqual(500);
    peer.next = jsonAnswer(status, { seen: peer.seen.at(-1), note: 'echo' });
    const outcome = await transport(fake)
      .send({ to: TO, body: 'y' })
      .then(
        (r) => [r.response],
        (e: SendError) => [e.message, e.response],
      );
    expect(outcome.join('')).toContain('[redacted]');
    expectNoSecret(...outcome);
  });

  it('any unicode body arrives exactly as given', async () => {
    const peer = peers.get(fake.name)!;
    const sms = transport(fake);
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 300 }), async (body) => {
        await sms.send({ to: TO, body });
        expect(peer.problems).toEqual([]);
        expect(fake.body(peer.seen.at(-1)!)).toBe(body);
      }),
      { numRuns: 40 },
    );
  });
});

describe('provider specifics', () => {
  it('vonage asks for type=unicode only when the text leaves the GSM alphabet', async () => {
    const sms = transport(FAKES[2]!);
    const cases: Array<[string, string | undefined]> = [
      ['Your code is 123456', undefined],
      ['Din kod är 123456 {€}', undefined],
      ['Ваш код 123456', 'unicode'],
      ['Code 🙂 123456', 'unicode'],
    ];
    for (const [body, type] of cases) {
      await sms.send({ to: TO, body });
      expect([body, form(peers.get('vonage')!.seen.at(-1)!).type]).toEqual([body, type]);
    }
  });

  it('twilio sends MessagingServiceSid when that is what is configured', async () => {
    const peer = await startPeer({ check: () => {}, ok: FAKES[0]!.ok });
    const env = { ...FAKES[0]!.env(peer.base), TWILIO_FROM: '', TWILIO_MESSAGING_SERVICE_SID: 'MG0123456789abcdef0123456789abcdef' };
    await (fromEnv(env) as SmsTransport).send({ to: TO, body: 'hi' });
    expect(form(peer.seen[0]!)).toEqual({ To: TO, Body: 'hi', MessagingServiceSid: 'MG0123456789abcdef0123456789abcdef' });
    await peer.close();
  });

  it('a provider that never answers times out, retryably', async () => {
    const peer = peers.get('twilio')!;
    peer.next = 'hang';
    const sms = createTwilioTransport({ accountSid: S.sid, authToken: S.token, from: '+15005550006', baseUrl: peer.base, timeoutMs: 150 });
    const err = await failure(sms.send({ to: TO, body: 'x' }));
    expect([err.retryable, err.response]).toEqual([true, 'no answer within 150 ms']);
  });
});

describe('createSmsTransport', () => {
  it.each([
    [{}, null],
    [{ SMS_PROVIDER: '' }, null],
    [{ SMS_PROVIDER: 'dev' }, 'dev'],
  ])('%j → %j', (env, expected) => {
    expect(fromEnv(env)).toBe(expected);
  });

  const { twilio, elks, vonage, webhook } = ENV;
  it.each<[string, Record<string, string>, RegExp]>([
    ['unknown provider', { SMS_PROVIDER: 'sinch' }, /SMS_PROVIDER must be one of twilio, 46elks, vonage, webhook, dev/],
    ['twilio without a SID', { ...twilio, TWILIO_ACCOUNT_SID: '' }, /needs TWILIO_ACCOUNT_SID/],
    ['twilio with a blank token', { ...twilio, TWILIO_AUTH_TOKEN: '  ' }, /needs TWILIO_AUTH_TOKEN/],
    ['twilio without a sender', { ...twilio, TWILIO_FROM: '' }, /TWILIO_FROM .* or TWILIO_MESSAGING_SERVICE_SID/],
    ['twilio base URL not a URL', { ...twilio, TWILIO_BASE_URL: 'api.twilio.com' }, /TWILIO_BASE_URL is not a URL/],
    ['46elks without a password', { ...elks, ELKS_API_PASSWORD: '' }, /needs ELKS_API_PASSWORD/],
    ['46elks without a sender', { ...elks, ELKS_FROM: '' }, /needs ELKS_FROM/],
    ['46elks sender too long', { ...elks, ELKS_FROM: 'PlinthAuthCodes' }, /ELKS_FROM must be/],
    ['46elks base URL not http', { ...elks, ELKS_BASE_URL: 'file:///etc/passwd' }, /ELKS_BASE_URL must be an http/],
    ['vonage without a secret', { ...vonage, VONAGE_API_SECRET: '' }, /needs VONAGE_API_SECRET/],
    ['vonage without a sender', { ...vonage, VONAGE_FROM: '' }, /needs VONAGE_FROM/],
    [
      'vonage base URL with credentials',
      { ...vonage, VONAGE_BASE_URL: `https://key:${encodeURIComponent(S.vonSecret)}@rest.nexmo.com` },
      /VONAGE_BASE_URL must not contain/,
    ],
    [
      'vonage base URL with a query',
      { ...vonage, VONAGE_BASE_URL: 'https://rest.nexmo.com/?x=1' },
      /VONAGE_BASE_URL must not have a query/,
    ],
    ['webhook without a URL', { ...webhook, SMS_WEBHOOK_URL: '' }, /needs SMS_WEBHOOK_URL/],
    ['webhook URL not http', { ...webhook, SMS_WEBHOOK_URL: 'ftp://sms.example.com' }, /SMS_WEBHOOK_URL must be an http/],
  ])('%s', (_name, env, message) => {
    let thrown = '';
    try {
      fromEnv(env);
    } catch (err) {
      thrown = (err as Error).message;
    }
    expect(thrown).toMatch(/^config: /);
    expect(thrown).toMatch(message);
    expectNoSecret(thrown);
  });

  it.each(Object.entries(ENV))('a complete %s configuration builds a transport', (_name, env) => {
    expect(typeof (fromEnv({ ...env, SMS_WEBHOOK_SECRET: '' }) as SmsTransport).send).toBe('function');
  });
});
