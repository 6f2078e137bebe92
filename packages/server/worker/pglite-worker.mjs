// The embedded database runs here, off the main thread: PGlite executes queries on the
// JavaScript thread of whoever owns it, so a slow query would otherwise freeze every request.
// Plain ESM (not compiled) so the same file serves the built server and the tests.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { pgcrypto } from '@electric-sql/pglite/contrib/pgcrypto';
import { uuid_ossp } from '@electric-sql/pglite/contrib/uuid_ossp';

// `deallocate all`: what a script prepared, under runAs's names or not, is never run by a
// request (db/run-as.ts prepares its statements again when it finds them gone).
const SCRIPT_CLEANUP =
  'rollback; reset session authorization; reset role; reset all; select pg_advisory_unlock_all(); close all; discard temp; deallocate all';

/** A simple-protocol `rollback` (Query message). */
const ROLLBACK = (() => {
  const text = Buffer.from('rollback\0');
  const b = Buffer.alloc(5 + text.length);
  b[0] = 0x51;
  b.writeInt32BE(4 + text.length, 1);
  text.copy(b, 5);
  return b;
})();

// int8 as a number when it is exact, else as text, the same on both drivers.
const int8 = (v) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
};
const text = (v) => v;
const parsers = { 20: int8, 1700: text, 1082: text, 1114: text, 1184: text, 1083: text, 1266: text, 17: text };

/**
 * Memory for one process on a laptop (issue 10 §6). PGlite's default shared_buffers (128 MB)
 * lives in its WebAssembly memory, which is touched at start and never shrinks: most of an
 * idle server's resident memory. The data files are read through the operating system's page
 * cache anyway, so a small buffer pool costs little speed (npm run bench). Durability is
 * untouched: WAL, checkpoints and full-page writes keep PGlite's settings.
 */
const MEMORY_SETTINGS = ['shared_buffers=16MB'];

// A fresh data dir is made beforehand by pglite-init.mjs, in a process of its own.
const startParams = [...PGlite.defaultStartParams, ...MEMORY_SETTINGS.flatMap((s) => ['-c', s])];
// The extensions Supabase's SQL assumes in its `extensions` schema (migration 0140): loaded
// where asked (the template, which creates them, and a Supabase project folder), since they
// hold about 28 MB of an idle server's memory (issue 10 §6's budget). Elsewhere their
// functions are in the catalog but not callable.
const pg = new PGlite(workerData.dataDir, {
  parsers,
  startParams,
  ...(workerData.extensions ? { extensions: { pgcrypto, uuid_ossp } } : {}),
});
const txs = new Map();
const listeners = new Map();
let nextTx = 1;

function errorOf(err) {
  const e = err ?? {};
  return {
    message: String(e.message ?? err),
    code: e.code,
    detail: e.detail,
    constraint: e.constraint,
    hint: e.hint,
    position: e.position,
    column: e.column,
    table: e.table,
  };
}

function shape(r) {
  return {
    rows: r.rows,
    fields: r.fields.map((f) => ({ name: f.name, dataTypeID: f.dataTypeID })),
    rowCount: r.fields.length ? r.rows.length : (r.affectedRows ?? 0),
  };
}

// A dump's bytes are handed over, not copied (tens of MB).
const reply = (id, result) => parentPort.postMessage({ id, ok: true, result }, result instanceof Uint8Array ? [result.buffer] : []);
const fail = (id, err) => parentPort.postMessage({ id, ok: false, error: errorOf(err) });

// One connection serves every request, so a script (SQL runner, CLI, migrations) runs alone:
// the requests that arrive meanwhile wait here until it and its cleanup are done, instead of
// queueing inside PGlite between the two, where they would run with what the script left
// behind (a role, a search_path). Statements of an open transaction (`txId`) never wait: the
// script itself may be waiting for that transaction to end.
let alone = Promise.resolve();
function exclusively(fn) {
  const run = alone.then(fn);
  alone = run.then(
    () => undefined,
    () => undefined,
  );
  return run;
}
async function shared(fn) {
  await alone;
  return fn();
}

/**
 * Undoes what a script may have left on the session: an open or failed transaction is rolled
 * back (as when a client disconnects), SET / SET ROLE / set_config, advisory locks, cursors and
 * temp tables go, and the server's own LISTENs (which a script's UNLISTEN may have dropped) are
 * taken again.
 */
async function cleanup() {
  await pg.exec(SCRIPT_CLEANUP);
  for (const channel of listeners.keys()) await pg.exec(`LISTEN ${channel}`);
}

/** Who the server's session is; a script or a function that changed it for good breaks every request. */
let sessionUser = null;
async function checkSession() {
  const r = await pg.query('select current_user::text as cu, session_user::text as su');
  const { cu, su } = r.rows[0];
  if (cu === sessionUser && su === sessionUser) return { ok: true };
  await exclusively(cleanup);
  return { ok: false, reason: `the session ran as role "${cu}" instead of "${sessionUser}"; it was reset` };
}

async function runScript(msg) {
  try {
    if (msg.params?.length) {
      if (msg.as?.length) {
        return await pg.transaction(async (tx) => {
          for (const s of msg.as) await tx.query(s);
          return [shape(await tx.query(msg.sql, msg.params))];
        });
      }
      return [shape(await pg.query(msg.sql, msg.params))];
    }
    return (await pg.exec(msg.sql)).map(shape);
  } finally {
    await cleanup();
  }
}

/**
 * One runAs batch (db/run-as.ts): wire-protocol messages ending in a Sync, run as they come,
 * after any open transaction (PGlite's transaction mutex) and alone (its query mutex); the
 * reply's bytes, copied out of PGlite's buffer before the next query reuses it.
 */
function runBatch(bytes) {
  return pg._runExclusiveTransaction(() =>
    pg.runExclusive(async () => {
      const out = (await pg.execProtocolRaw(bytes)).slice();
      // Not idle after the Sync: something opened a transaction block. Roll it back, as the
      // end of a connection would on PostgreSQL; the caller reports the batch as failed.
      if (out[out.length - 1] !== 0x49) await pg.execProtocolRaw(ROLLBACK);
      return out;
    }),
  );
}

async function handle(msg) {
  switch (msg.op) {
    case 'query': {
      if (msg.txId) {
        const tx = txs.get(msg.txId)?.tx;
        if (!tx) throw new Error('transaction is closed');
        return shape(await tx.query(msg.sql, msg.params ?? []));
      }
      return shared(async () => shape(await pg.query(msg.sql, msg.params ?? [])));
    }
    case 'batch':
      return shared(() => runBatch(msg.bytes));
    case 'script':
      return exclusively(() => runScript(msg));
    case 'check':
      return shared(checkSession);
    case 'begin':
      return shared(() => begin());
    case 'commit':
    case 'rollback': {
      const entry = txs.get(msg.txId);
      if (!entry) return null;
      const done = entry.done;
      if (msg.op === 'commit') entry.resolve();
      else entry.reject(Object.assign(new Error('rollback'), { rollback: true }));
      try {
        await done;
      } catch (err) {
        if (!err?.rollback) throw err;
      }
      return null;
    }
    case 'listen': {
      if (!listeners.has(msg.channel)) {
        const unsub = await shared(() => pg.listen(msg.channel, (payload) => parentPort.postMessage({ notify: msg.channel, payload })));
        listeners.set(msg.channel, unsub);
      }
      return null;
    }
    case 'unlisten': {
      const unsub = listeners.get(msg.channel);
      listeners.delete(msg.channel);
      if (unsub) await unsub();
      return null;
    }
    case 'dump':
      // A backup (plinth backup): alone, like a script. The checkpoint writes what the WAL
      // holds into the data files, so a restore has little to replay; PGlite then copies the
      // files while no statement runs (its query lock), which is a state PostgreSQL recovers
      // from as after a crash: every committed transaction in, none half.
      return exclusively(async () => {
        await pg.exec('checkpoint');
        const file = await pg.dumpDataDir('none');
        return new Uint8Array(await file.arrayBuffer());
      });
    case 'close':
      await pg.close();
      return null;
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

function begin() {
  const txId = nextTx++;
  return new Promise((resolveBegin, rejectBegin) => {
    const done = pg
      .transaction(
        (tx) =>
          new Promise((resolve, reject) => {
            txs.set(txId, { tx, resolve, reject, done: null });
            resolveBegin(txId);
          }),
      )
      .finally(() => txs.delete(txId));
    done.catch(rejectBegin);
    // Kept so commit/rollback can wait for PGlite to finish the transaction.
    queueMicrotask(() => {
      const entry = txs.get(txId);
      if (entry) entry.done = done;
    });
  });
}

pg.waitReady
  .then(async () => {
    sessionUser = (await pg.query('select session_user::text as u')).rows[0].u;
    parentPort.postMessage({ ready: true, sessionUser });
    parentPort.on('message', (msg) => {
      handle(msg).then(
        (r) => reply(msg.id, r),
        (e) => fail(msg.id, e),
      );
    });
  })
  .catch((err) => parentPort.postMessage({ ready: false, error: errorOf(err) }));
