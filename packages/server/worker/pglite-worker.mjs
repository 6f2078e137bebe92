// The embedded database runs here, off the main thread: PGlite executes queries on the
// JavaScript thread of whoever owns it, so a slow query would otherwise freeze every request.
// Plain ESM (not compiled) so the same file serves the built server and the tests.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const SCRIPT_CLEANUP =
  'rollback; reset session authorization; reset role; reset all; select pg_advisory_unlock_all(); close all; discard temp';

// int8 as a number when it is exact, else as text, the same on both drivers.
const int8 = (v) => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
};
const text = (v) => v;
const parsers = { 20: int8, 1700: text, 1082: text, 1114: text, 1184: text, 1083: text, 1266: text, 17: text };

const pg = new PGlite(workerData.dataDir, { parsers });
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

const reply = (id, result) => parentPort.postMessage({ id, ok: true, result });
const fail = (id, err) => parentPort.postMessage({ id, ok: false, error: errorOf(err) });

async function handle(msg) {
  switch (msg.op) {
    case 'query': {
      const target = msg.txId ? txs.get(msg.txId)?.tx : pg;
      if (!target) throw new Error('transaction is closed');
      return shape(await target.query(msg.sql, msg.params ?? []));
    }
    case 'script': {
      if (msg.params && msg.params.length) return [shape(await pg.query(msg.sql, msg.params))];
      try {
        const results = await pg.exec(msg.sql);
        return results.map(shape);
      } finally {
        // One connection serves every request: nothing a script leaves behind may stay. A
        // transaction it left open is rolled back (as when a client disconnects), and what
        // it set for the session (SET, SET ROLE, advisory locks, temp tables) is undone.
        await pg.exec(SCRIPT_CLEANUP);
      }
    }
    case 'begin': {
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
        const unsub = await pg.listen(msg.channel, (payload) => parentPort.postMessage({ notify: msg.channel, payload }));
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
    case 'close':
      await pg.close();
      return null;
    default:
      throw new Error(`unknown op ${msg.op}`);
  }
}

pg.waitReady.then(
  () => {
    parentPort.postMessage({ ready: true });
    parentPort.on('message', (msg) => {
      handle(msg).then(
        (r) => reply(msg.id, r),
        (e) => fail(msg.id, e),
      );
    });
  },
  (err) => parentPort.postMessage({ ready: false, error: errorOf(err) }),
);
