// Makes a fresh embedded data dir (initdb) and exits. Run as a process of its own by
// db/pglite.ts: initdb fills hundreds of MB of WebAssembly memory, which a thread of the
// server would keep (its allocator does not give it back) but an exiting process returns.
import { PGlite } from '@electric-sql/pglite';

const dir = process.argv[2];
try {
  const pg = new PGlite(dir);
  await pg.waitReady;
  await pg.close();
} catch (err) {
  process.stderr.write(`${err?.message ?? err}\n`);
  process.exit(1);
}
