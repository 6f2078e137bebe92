// Where `npm run bench` reads CPU time (Linux /proc; bench/README.md explains the method):
// a server's process tree, the PostgreSQL backends serving one database, the whole box.
import { readdirSync, readFileSync } from 'node:fs';
import postgres from 'postgres';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** [utime + stime, cutime + cstime] of a process in ms, and its parent, or null when it is gone. */
export function ticks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { self: (Number(f[11]) + Number(f[12])) * TICK_MS, children: (Number(f[13]) + Number(f[14])) * TICK_MS, ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/**
 * CPU ms used so far by a process and all its descendants, live or ended (an ended child's
 * time is in its parent's cutime/cstime once reaped): Node, PGlite's worker thread, --workers.
 */
export function treeCpuMs(root) {
  if (!root) return 0;
  const parent = new Map();
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    const t = ticks(p);
    if (t) parent.set(Number(p), t);
  }
  let total = 0;
  const walk = (pid) => {
    const t = parent.get(pid);
    if (!t) return;
    total += t.self + t.children;
    for (const [child, c] of parent) if (c.ppid === pid) walk(child);
  };
  walk(root);
  return total;
}

/** The box's CPU ticks so far: busy (all but idle and iowait) and total, over every core. */
export function boxTicks() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { busy: total - f[3] - f[4], total };
}

/** The share of the box's CPU (every core) that was busy between two boxTicks(). */
export const busyShare = (a, b) => (b.total > a.total ? Math.round(((b.busy - a.busy) / (b.total - a.total)) * 100) / 100 : null);

/**
 * The CPU of the PostgreSQL backends serving one database, and no other process of the
 * cluster: the client backends that pg_stat_activity lists for `database`, each read from
 * /proc/<pid>/stat. Sampled every 200 ms while a run lasts, so a backend that starts during
 * the run counts from its start (its connect included) and one that ends counts up to its last sample.
 * @example const pg = backendsCpu(adminUrl, 'plinth_bench_1'); const stop = await pg.start((app) => app !== 'x'); … await stop() // ms
 */
export function backendsCpu(adminUrl, database) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connection: { application_name: 'bench-probe' } });
  return {
    /** Starts counting the backends whose application_name `mine` accepts; resolves to stop() → CPU ms. */
    async start(mine) {
      const seen = new Map();
      const sample = async (first) => {
        const rows = await admin`select pid, application_name from pg_stat_activity
          where datname = ${database} and backend_type = 'client backend'`;
        for (const { pid, application_name } of rows) {
          if (!mine(application_name)) continue;
          const t = ticks(pid);
          if (!t) continue;
          const s = seen.get(pid);
          if (s) s.last = t.self;
          else seen.set(pid, { first: first ? t.self : 0, last: t.self });
        }
      };
      await sample(true);
      let running = true;
      const loop = (async () => {
        while (running) {
          await new Promise((r) => setTimeout(r, 200));
          if (running) await sample(false);
        }
      })();
      return async () => {
        running = false;
        await loop;
        await sample(false);
        let ms = 0;
        for (const s of seen.values()) ms += s.last - s.first;
        return ms;
      };
    },
    end: () => admin.end({ timeout: 1 }),
  };
}
