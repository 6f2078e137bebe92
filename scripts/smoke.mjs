// The smoke test of another Node version (issue 10 §5): the built server started as a real
// process, a user signed up, a table made and a row written and read back under row-level
// security, then SIGTERM and a clean exit. Run by scripts/smoke-node.sh with the Node under test.
// Prints one line, "smoke on Node vX: ok", or the step that failed; exits non-zero on failure.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../packages/server/dist/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'plinth-smoke-'));
const keys = {
  PLINTH_PUBLIC_KEY: 'pk_smoke_public_0123456789abcdef0123456789',
  PLINTH_SECRET_KEY: 'sk_smoke_secret_0123456789abcdef0123456789',
};

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});
const base = `http://127.0.0.1:${port}`;
let log = '';
const server = spawn(process.execPath, [MAIN, 'start', '--port', String(port), '--data-dir', dir], {
  env: { PATH: process.env.PATH, LOG_LEVEL: 'warn', ...keys },
  stdio: ['ignore', 'pipe', 'pipe'],
});
server.stdout.on('data', (d) => (log += d));
server.stderr.on('data', (d) => (log += d));
const exited = new Promise((resolve) => server.on('exit', (code, signal) => resolve(code ?? signal)));

async function step(name, fn) {
  try {
    return await fn();
  } catch (err) {
    throw new Error(`${name}: ${err.message}`);
  }
}

async function call(path, { method = 'GET', headers = {}, body } = {}, expected = 200) {
  const res = await fetch(base + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status !== expected) throw new Error(`${method} ${path} answered ${res.status}, not ${expected}: ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : null;
}

try {
  await step('start', async () => {
    const deadline = Date.now() + 120_000;
    for (;;) {
      if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode}`);
      const ok = await fetch(`${base}/health`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) throw new Error('not healthy within 120 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  const service = { authorization: `Bearer ${keys.PLINTH_SECRET_KEY}` };
  await step('create a table', () =>
    call('/api/v1/sql', {
      method: 'POST',
      headers: service,
      body: {
        query: `create table notes (id bigserial primary key, owner uuid not null default auth.uid(), body text not null);
                create policy own on notes using (owner = auth.uid()) with check (owner = auth.uid());`,
      },
    }),
  );
  const signup = await step('sign up', () =>
    call('/v1/auth/signup', {
      method: 'POST',
      headers: { apikey: keys.PLINTH_PUBLIC_KEY },
      body: { email: 'smoke@example.com', password: 'correct horse battery' },
    }),
  );
  const user = { apikey: keys.PLINTH_PUBLIC_KEY, authorization: `Bearer ${signup.session.access_token}` };
  await step('REST insert', () => call('/api/v1/db/notes', { method: 'POST', headers: user, body: { body: 'hello' } }, 201));
  const rows = await step('REST read', () => call('/api/v1/db/notes?select=body,owner', { headers: user }));
  if (rows.length !== 1 || rows[0].body !== 'hello' || rows[0].owner !== signup.user.id) {
    throw new Error(`REST read: ${JSON.stringify(rows)}`);
  }
  const anon = await step('REST read as anon', () => call('/api/v1/db/notes', { headers: { apikey: keys.PLINTH_PUBLIC_KEY } }));
  if (anon.length !== 0) throw new Error(`REST read as anon: row-level security let ${anon.length} rows through`);
  server.kill('SIGTERM');
  const code = await exited;
  if (code !== 0) throw new Error(`stop: exit ${code} after SIGTERM`);
  console.log(`smoke on Node ${process.version}: ok`);
} catch (err) {
  console.log(`smoke on Node ${process.version}: FAILED at ${err.message}\n${log.slice(-3000)}`);
  process.exitCode = 1;
} finally {
  if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  await exited;
  rmSync(dir, { recursive: true, force: true });
}
