import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort, waitHealthy } from './process.js';

// Plinth the way a user gets it, by README's "Plinth in your app's folder" as written: the two
// tarballs `npm run package` makes (what `npm publish` would publish), installed with npm in a
// fresh folder outside the clone, on Node 22 (the oldest the README names, from the npm
// registry's `node` package: scripts/node-version.sh), `npx plinth init`, `npx plinth dev`;
// then keys, sql, gen types --url, migrate, the console, and an app's own script using the SDK.
// Packed once, from the build the suite already made.
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'plinth-package-'));
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const c of children) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    try {
      process.kill(-(c.pid as number), 'SIGKILL'); // the group of a detached one (the server under npx)
    } catch {
      c.kill('SIGKILL');
    }
  }
  rmSync(work, { recursive: true, force: true });
});

const node22 = execFileSync('bash', [join(ROOT, 'scripts', 'node-version.sh'), '22'], { encoding: 'utf8' }).trim();
// A new terminal with Node 22 first on the PATH: npm, npx and the plinth bin all run on it.
const PATH = [dirname(node22), ...(process.env.PATH ?? '').split(':').filter((p) => !p.includes('node_modules'))].join(':');
// This machine's npm settings (registry, CA file, proxy) as the user's npm would find them: npm
// looks for its global config beside the node that runs it, which is now Node 22's folder.
const machine = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy)$/i.test(k)),
) as Record<string, string>;
const globalconfig = execFileSync('npm', ['config', 'get', 'globalconfig'], { encoding: 'utf8' }).trim();
const env = {
  ...machine,
  PATH,
  HOME: process.env.HOME ?? work,
  npm_config_globalconfig: globalconfig,
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  npm_config_update_notifier: 'false',
};

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[], cwd: string, timeoutMs = 300_000): Promise<Ran> {
  const proc = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => {
    stdout += d;
  });
  proc.stderr.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve) =>
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

const npx = (args: string[], cwd: string) => run('npx', ['plinth', ...args], cwd);

/** The ```sh blocks of a `## ` section of README.md. */
function shellBlocks(section: string): string[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`README.md has no section "${section}"`);
  const end = readme.indexOf('\n## ', start + 4);
  return [...readme.slice(start, end < 0 ? undefined : end).matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

const bash = (script: string, cwd: string) => run('bash', ['-c', `set -euo pipefail\n${script}`], cwd);

describe("README's 'Plinth in your app's folder', as written, in a folder beside the clone", () => {
  it('packs, installs, init, dev; then keys, sql, gen types --url, the console, the SDK, migrate, stop; outside a project: one line', async () => {
    // The README's layout: the clone as ../plinth beside the app's folder.
    const [packBlock, installBlock, devBlock] = shellBlocks("Plinth in your app's folder");
    symlinkSync(ROOT, join(work, 'plinth'));
    const pack = await bash(packBlock, join(work, 'plinth'));
    expect(pack.code, pack.stderr).toBe(0);
    const packed = join(ROOT, '.tmp', 'pack');
    // The server's tarball holds a built dist, the console, the migrations and its own @plinth copies.
    const listing = execFileSync('tar', ['tzf', join(packed, 'plinth-0.1.0.tgz')], { encoding: 'utf8' }).split('\n');
    for (const f of [
      'package/bin/plinth.mjs',
      'package/dist/main.js',
      'package/console/index.html',
      'package/worker/pglite-worker.mjs',
      'package/src/db/migrations/0001_foundation.sql',
      'package/node_modules/@plinth/sdk/dist/plinth.js',
      'package/node_modules/@plinth/shared/dist/index.js',
    ]) {
      expect(listing, f).toContain(f);
    }
    expect(listing.filter((f) => /\.ts$/.test(f) && !/\.d\.ts$/.test(f))).toEqual([]);
    // The embedded database's template a new project copies, packed (db/template.ts).
    expect(listing.filter((f) => /^package\/dist\/pglite-template\/[0-9a-f]{16}\.tar\.gz$/.test(f))).toHaveLength(1);
    expect(execFileSync('tar', ['tzf', join(packed, 'plinth-sdk-0.1.0.tgz')], { encoding: 'utf8' })).toMatch(/^package\/dist\/index\.js$/m);

    const app = join(work, 'my-app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }));
    const started = Date.now();
    const install = await bash(installBlock, app);
    expect(install.code, install.stderr).toBe(0);
    expect(install.stderr).not.toMatch(/EBADENGINE/);
    expect(JSON.parse(readFileSync(join(app, 'node_modules', 'plinth', 'package.json'), 'utf8')).engines.node).toBe('>=22.12.0');
    expect(install.stdout).toMatch(/^ {2}npx plinth dev /m);
    expect(install.stdout).toMatch(/^ {2}npx plinth gen types --out src\/database\.ts /m);
    expect(JSON.parse(readFileSync(join(app, 'plinth.json'), 'utf8'))).toEqual({
      $schema: './node_modules/plinth/plinth.schema.json',
      data_dir: 'data',
      port: 8080,
      database_url_env: 'DATABASE_URL',
      migrations_dir: 'migrations',
    });
    expect(readFileSync(join(app, '.gitignore'), 'utf8')).toMatch(/^\/data\/$/m);

    // Outside a project every command but init and start says so and makes nothing.
    const elsewhere = join(work, 'elsewhere');
    mkdirSync(elsewhere);
    const outside = await run(join(app, 'node_modules', '.bin', 'plinth'), ['keys'], elsewhere);
    expect([outside.code, outside.stdout]).toEqual([1, '']);
    expect(outside.stderr).toMatch(/^plinth: no Plinth project here: no plinth\.json in .*elsewhere or a folder above it; run plinth init/);
    expect(readdirSync(elsewhere)).toEqual([]);

    const port = await freePort();
    // The README's server line, on a free port (PORT wins over plinth.json), in a process group
    // of its own as a terminal runs it: a stop reaches npx, the shell npm runs the bin with, and
    // the server. (npx alone does not pass SIGTERM on: README says to run node_modules/.bin/plinth
    // under a process manager.)
    expect(devBlock.trim()).toMatch(/^npx plinth dev\b/);
    const server = spawn('bash', ['-c', devBlock], {
      cwd: app,
      env: { ...env, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    children.add(server);
    let banner = '';
    server.stdout.on('data', (d) => {
      banner += d;
    });
    server.stderr.on('data', (d) => {
      banner += d;
    });
    const exited = new Promise<void>((resolve) => server.on('exit', () => resolve()));
    const url = `http://127.0.0.1:${port}`;
    await waitHealthy(url, 120_000);
    const packToHealthy = Date.now() - started;
    expect(banner).toMatch(new RegExp(`^project ${app}: embedded database in data$`, 'm'));
    expect(banner).toMatch(new RegExp(`API: +http://localhost:${port}$`, 'm'));

    const keys = await npx(['keys', '--json'], join(app, 'migrations')); // any folder of the project
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stderr).toBe(`project ${app}: embedded database in ${app}/data\n`);
    const { public_key: pk, secret_key: sk } = JSON.parse(keys.stdout) as { public_key: string; secret_key: string };
    expect(banner).toContain(sk);

    const sql = await npx(
      [
        'sql',
        `create table notes (id bigserial primary key, body text not null);
         create policy anyone_reads on notes for select using (true);
         insert into notes (body) values ('from the package');
         select id, body from notes`,
      ],
      app,
    );
    expect(sql.code, sql.stderr).toBe(0);
    expect(sql.stdout).toBe(
      'CREATE TABLE\n\nCREATE POLICY\n\nINSERT 0 1\n\n id |       body\n----+------------------\n  1 | from the package\n(1 row)\n',
    );

    const types = await npx(['gen', 'types', '--url', url, '--key', sk, '--out', 'src/types/database.ts'], app);
    expect(types.code, types.stderr).toBe(0);
    const source = readFileSync(join(app, 'src', 'types', 'database.ts'), 'utf8');
    expect(source).toMatch(/notes: \{/);
    expect(source).toMatch(/body: string/);

    const consolePage = await fetch(`${url}/console/`);
    expect(consolePage.status).toBe(200);
    expect(await consolePage.text()).toMatch(/<script type="module"[^>]* src="[^"]*assets\/[^"]+\.js"/);
    expect((await fetch(`${url}/sdk/plinth.js`)).status).toBe(200);

    // The app's own code, with the SDK it installed.
    writeFileSync(
      join(app, 'read.mjs'),
      `import { createClient } from '@plinth/sdk';
const client = createClient(${JSON.stringify(url)}, ${JSON.stringify(pk)});
const { data, error } = await client.from('notes').select('body');
console.log(JSON.stringify({ data, error }));`,
    );
    const read = await run('node', ['read.mjs'], app);
    expect(read.code, read.stderr).toBe(0);
    expect(JSON.parse(read.stdout)).toEqual({ data: [{ body: 'from the package' }], error: null });

    // Migrations: plinth dev applies a new file as it appears; plinth migrate is refused while the
    // server holds the database, and finds nothing left to apply once it stopped.
    writeFileSync(join(app, 'migrations', '0001_tags.sql'), 'create table tags (id int primary key);\n');
    await expect.poll(async () => (await fetch(`${url}/api/v1/db/tags`, { headers: { authorization: `Bearer ${sk}` } })).status).toBe(200);
    await expect.poll(() => banner).toMatch(/INFO: migrations applied: 0001_tags\.sql/);
    const busy = await npx(['migrate'], app);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toMatch(/^plinth: the embedded database in .* is held by the running server/m);
    // SIGTERM to the process group: the server stops cleanly (its server file gone, its lock released).
    process.kill(-(server.pid as number), 'SIGTERM');
    await exited;
    await expect.poll(() => existsSync(join(app, 'data', 'server.json')), { timeout: 30_000 }).toBe(false);
    // The lock goes when the process does (on a busy machine a moment after the server file).
    await expect.poll(() => existsSync(join(app, 'data', 'plinth.lock')), { timeout: 30_000 }).toBe(false);
    const migrate = await npx(['migrate'], app);
    expect(migrate.code, migrate.stderr).toBe(0);
    expect(migrate.stdout).toBe('nothing to apply\n');

    // A figure for the report, not a limit: npm install of the tarballs, init and dev to a healthy server.
    console.log(`[package] install + init + dev to healthy on Node 22: ${(packToHealthy / 1000).toFixed(1)} s`);
  }, 600_000);
});
