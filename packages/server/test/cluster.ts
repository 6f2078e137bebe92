/**
 * Real parts for the scale-out and fault tests: redis-server, an nginx reverse proxy (round
 * robin over the instances), Plinth processes from dist/, a private PostgreSQL cluster that a
 * test may stop and start, and a black-hole SMTP server (accepts, never answers). Each helper
 * stops what it started; `cleanup` collects the stops so a failed test leaves nothing running.
 * redis-server and nginx come from Debian (scripts/ensure-packages.sh installs them).
 */
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, type Spawned, spawnPlinth, waitHealthy } from './process.js';
import { until } from './until.js';

export { freePort, until };

async function stopChild(proc: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 10_000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill(signal);
  const timer = setTimeout(() => proc.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface RedisServer {
  url: string;
  port: number;
  /** Kills it (SIGKILL: an outage, not a shutdown). */
  stop(): Promise<void>;
  /** Starts it again on the same port and waits until it answers. */
  start(): Promise<void>;
}

/** A redis-server of its own on a free loopback port, no persistence. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  let proc: ChildProcess | null = null;
  const server: RedisServer = {
    url: `redis://127.0.0.1:${port}`,
    port,
    async stop() {
      if (proc) await stopChild(proc, 'SIGKILL');
      proc = null;
    },
    async start() {
      if (proc) return;
      proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await until('redis-server answers', () => tcpAnswers(port), 10_000);
    },
  };
  await server.start();
  return server;
}

/** True when something accepts TCP connections on the loopback port. */
function tcpAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const c = connect(port, '127.0.0.1');
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

export interface ReverseProxy {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * nginx in front of `upstreams` (ports on 127.0.0.1), round robin, with the settings a
 * deployment would have: keep-alive to the instances, X-Forwarded-For set, a connection
 * refused by one instance retried on the next (so a dead instance costs no request that it
 * never received), WebSocket upgrades forwarded (the realtime endpoint).
 */
export async function startNginx(upstreams: number[]): Promise<ReverseProxy> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'plinth-nginx-'));
  execFileSync('chmod', ['755', dir]);
  const conf = join(dir, 'nginx.conf');
  writeFileSync(
    conf,
    `worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${dir}/body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # WebSockets (realtime) pass through: Upgrade and Connection forwarded when the client asks.
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  upstream plinth {
${upstreams.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=2s;`).join('\n')}
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port};
    client_max_body_size 2m;
    location / {
      proxy_pass http://plinth;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_set_header Host $http_host;
      proxy_set_header X-Forwarded-For $remote_addr;
      proxy_next_upstream error timeout;
      proxy_read_timeout 30s;
    }
  }
}
`,
  );
  // Debian puts it in /usr/sbin, which a user's PATH may lack.
  const bin = existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  const proc = spawn(bin, ['-p', dir, '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  proc.stderr?.on('data', (d) => {
    err += d;
  });
  try {
    await until('nginx answers', () => proc.exitCode === null && tcpAnswers(port), 10_000);
  } catch (e) {
    await stopChild(proc);
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`${(e as Error).message}: ${err}${readLog(join(dir, 'error.log'))}`);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      await stopChild(proc, 'SIGQUIT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const readLog = (f: string) => {
  try {
    return readFileSync(f, 'utf8').slice(-2000);
  } catch {
    return '';
  }
};

export interface Instance extends Spawned {
  port: number;
  /** SIGTERM and wait (a clean stop). */
  stop(): Promise<void>;
  /** SIGKILL: the process dies with whatever it held. */
  kill(): Promise<void>;
}

/**
 * `plinth start` as a real process on a free port, waited for until healthy. Its DATA_DIR is a
 * temporary folder of its own (removed when it stops) unless `env` names one.
 */
export async function startInstance(env: Record<string, string>, args: string[] = []): Promise<Instance> {
  const port = await freePort();
  const own = env.DATA_DIR || args.includes('--data-dir') ? null : mkdtempSync(join(tmpdir(), 'plinth-instance-'));
  const p = spawnPlinth(['start', '--port', String(port), ...args], own ? { ...env, DATA_DIR: own } : env);
  const removeDir = () => own && rmSync(own, { recursive: true, force: true });
  try {
    await Promise.race([
      waitHealthy(p.url, 60_000),
      p.exited.then((code) => {
        throw new Error(`plinth exited (${code}) before it was healthy: ${p.stderr()}${p.stdout()}`);
      }),
    ]);
  } catch (err) {
    await stopChild(p.proc, 'SIGKILL');
    removeDir();
    throw err;
  }
  return {
    ...p,
    port,
    stop: async () => {
      await stopChild(p.proc);
      removeDir();
    },
    kill: async () => {
      await stopChild(p.proc, 'SIGKILL');
      removeDir();
    },
  };
}

const CLUSTER_SCRIPT = fileURLToPath(new URL('../../../scripts/pg-cluster.sh', import.meta.url));

export interface PgCluster {
  /** The superuser URL. */
  url: string;
  /** `pg_ctl stop -m fast`, without blocking this process (requests in flight go on being timed). */
  stop(): Promise<void>;
  /** `pg_ctl start -w`: resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops it for good and removes its directory. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL cluster of its own on a free port (scripts/pg-cluster.sh), for a test that stops
 * and starts the database under a running Plinth.
 */
export async function startPgCluster(): Promise<PgCluster> {
  const port = String(await freePort());
  const dir = `/tmp/plinth-pg-faults-${port}`;
  const env = { ...process.env, PLINTH_PG_PORT: port, PLINTH_PG_DIR: dir };
  const run = (cmd: string) =>
    new Promise<string>((resolve, reject) =>
      execFile('bash', [CLUSTER_SCRIPT, cmd], { env, encoding: 'utf8' }, (err, stdout, stderr) =>
        err ? reject(new Error(`pg-cluster.sh ${cmd}: ${stderr || err.message}`)) : resolve(stdout.trim()),
      ),
    );
  const url = await run('start');
  return {
    url,
    stop: async () => void (await run('stop')),
    start: async () => void (await run('start')),
    async destroy() {
      await run('stop');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface BlackHole {
  url: string;
  /** Connections it took (and never answered). */
  connections: number;
  stop(): Promise<void>;
}

/** A TCP server that accepts connections and says nothing: an SMTP server that hangs. */
export async function startBlackHole(): Promise<BlackHole> {
  const sockets = new Set<Socket>();
  const hole: BlackHole = { url: '', connections: 0, stop: async () => undefined };
  const server: Server = createServer((s) => {
    hole.connections++;
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  hole.url = `smtp://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  hole.stop = async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  };
  return hole;
}

/** Stops, in reverse order, everything registered; errors are collected, not thrown midway. */
export function cleanup() {
  const stops: Array<() => Promise<void> | void> = [];
  return {
    add<T>(thing: T, stop: (t: T) => Promise<void> | void): T {
      stops.push(() => stop(thing));
      return thing;
    },
    async run() {
      for (const stop of stops.splice(0).reverse()) await Promise.resolve(stop()).catch(() => undefined);
    },
  };
}
