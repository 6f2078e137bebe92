// The storage scenarios of `npm run bench` (run.mjs calls them with the Plinth it started):
// (a) download of a 1 MiB object as a user under RLS, against a bare node:http server that
//     streams the same file with node:fs (bench/storage-baseline.mjs), measured A B B A;
// (b) upload, then download, of one big file (BENCH_STORAGE_BIG_MIB, default 1024 MiB): MiB/s
//     for Plinth and for the baseline, and Plinth's resident memory (VmRSS, sampled every
//     20 ms) over its idle size, which must stay under 200 MiB: the bytes stream.
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const MiB = 2 ** 20;
const BIG_MIB = Number(process.env.BENCH_STORAGE_BIG_MIB ?? 1024);

/** Resident memory of a process in MiB (Linux /proc). */
function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
}

/** Samples a process's RSS every 20 ms while `work` runs; resolves to its result and the peak. */
async function peakRss(pid, work) {
  let peak = rssMiB(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssMiB(pid));
    } catch {}
  }, 20);
  try {
    const result = await work();
    return { result, peak: Math.max(peak, rssMiB(pid)) };
  } finally {
    clearInterval(timer);
  }
}

/** Streams a file as a request body; resolves to the status and the seconds it took. */
function uploadFile(url, headers, file) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { ...headers, 'content-length': statSync(file).size } }, (res) => {
      let body = '';
      res.on('data', (d) => {
        body += d;
      });
      res.on('end', () => resolve({ status: res.statusCode, body, seconds: (performance.now() - started) / 1000 }));
    });
    req.on('error', reject);
    pipeline(createReadStream(file, { highWaterMark: MiB }), req).catch(reject);
  });
}

/** Reads a whole response and drops it; resolves to the status, bytes and seconds. */
function downloadAll(url, headers) {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (d) => {
        bytes += d.length;
      });
      res.on('end', () => resolve({ status: res.statusCode, bytes, seconds: (performance.now() - started) / 1000 }));
      res.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

/** A file of `mib` MiB of random bytes (one random MiB repeated: the content does not matter). */
async function makeFile(path, mib) {
  const block = randomBytes(MiB);
  const out = createWriteStream(path);
  for (let i = 0; i < mib; i++) if (!out.write(block)) await new Promise((r) => out.once('drain', r));
  await new Promise((r, j) => out.end((err) => (err ? j(err) : r())));
}

/**
 * Runs the storage scenarios against a running Plinth.
 * @param ctx {{ base, secret, user, userId, plinthPid, dataDir, basePort, root, tools: { start, stop, waitFor, cannonPair, sql, problems, tempDirs } }}
 */
export async function benchStorage(ctx) {
  const { base, secret, user, tools } = ctx;
  const service = { authorization: `Bearer ${secret}` };
  const work = mkdtempSync(join(tmpdir(), 'plinth-bench-files-'));
  tools.tempDirs.add(work);
  try {
    const small = join(work, 'small.bin');
    const big = join(work, 'big.bin');
    await makeFile(small, 1);
    await makeFile(big, BIG_MIB);

    const bucket = await fetch(`${base}/api/v1/storage/buckets`, {
      method: 'POST',
      headers: { ...service, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    });
    if (bucket.status !== 201) throw new Error(`storage bucket: HTTP ${bucket.status} ${await bucket.text()}`);
    await tools.sql(
      base,
      secret,
      `create policy bench_own on storage.objects for all to authenticated using (owner = auth.uid()) with check (owner = auth.uid())`,
    );
    const path = `/api/v1/storage/object/bench/${ctx.userId}/1mib.bin`;
    const up = await uploadFile(base + path, { ...user, 'content-type': 'application/octet-stream' }, small);
    if (up.status !== 201) throw new Error(`1 MiB upload: HTTP ${up.status} ${up.body}`);
    const stored = (
      await tools.sql(base, secret, `select version::text as v from storage.objects where name = '${ctx.userId}/1mib.bin'`)
    )[0].rows[0].v;
    const storedFile = join(ctx.dataDir, 'storage', 'objects', 'bench', stored.slice(0, 2), stored);
    const check = await downloadAll(base + path, user);
    if (check.status !== 200 || check.bytes !== MiB) throw new Error(`1 MiB download check: HTTP ${check.status}, ${check.bytes} bytes`);

    const baseline = tools.start(
      'storage baseline',
      join(ctx.root, 'bench/storage-baseline.mjs'),
      [String(ctx.basePort), storedFile, big, work],
      {},
    );
    const bbase = `http://127.0.0.1:${ctx.basePort}`;
    try {
      await tools.waitFor(baseline, `${bbase}/small`);
      const [download, baseDownload] = await tools.cannonPair(
        // Measured with a client that only counts the bytes: autocannon caps streamed 1 MiB answers (bench/stream-load.mjs).
        {
          label: 'Plinth   download 1 MiB (user, RLS)',
          opts: { url: base + path, headers: user, stream: true, server: ctx.plinthPid, pg: 'plinth' },
        },
        { label: 'Baseline download 1 MiB (node:fs)', opts: { url: `${bbase}/small`, stream: true, server: baseline.proc.pid } },
      );

      // One big file up and down through Plinth, its memory watched; then the same through the baseline.
      const idle = rssMiB(ctx.plinthPid);
      const bigPath = `/api/v1/storage/object/bench/${ctx.userId}/big.bin`;
      const upBig = await peakRss(ctx.plinthPid, () =>
        uploadFile(base + bigPath, { ...user, 'content-type': 'application/octet-stream' }, big),
      );
      if (upBig.result.status !== 201) throw new Error(`big upload: HTTP ${upBig.result.status} ${upBig.result.body}`);
      const downBig = await peakRss(ctx.plinthPid, () => downloadAll(base + bigPath, user));
      if (downBig.result.status !== 200 || downBig.result.bytes !== BIG_MIB * MiB)
        throw new Error(`big download: ${downBig.result.status}, ${downBig.result.bytes} bytes`);
      const baseUp = await uploadFile(`${bbase}/upload`, {}, big);
      const baseDown = await downloadAll(`${bbase}/big`, {});
      const mibps = (r) => Math.round(BIG_MIB / r.seconds);
      const bigResult = {
        mib: BIG_MIB,
        upload: mibps(upBig.result),
        download: mibps(downBig.result),
        baseUpload: mibps(baseUp),
        baseDownload: mibps(baseDown),
        idleRss: Math.round(idle),
        peakRss: Math.round(Math.max(upBig.peak, downBig.peak)),
      };
      bigResult.rssGrowth = bigResult.peakRss - bigResult.idleRss;
      console.log(
        `  Plinth   ${BIG_MIB} MiB up ${bigResult.upload} MiB/s, down ${bigResult.download} MiB/s; baseline up ${bigResult.baseUpload} MiB/s, down ${bigResult.baseDownload} MiB/s`,
      );
      console.log(
        `  Plinth   RSS idle ${bigResult.idleRss} MiB, peak ${bigResult.peakRss} MiB: growth ${bigResult.rssGrowth} MiB   (goal < 200)`,
      );
      if (bigResult.rssGrowth >= 200) tools.problems.push(`storage: RSS grew ${bigResult.rssGrowth} MiB for a ${BIG_MIB} MiB transfer`);
      await fetch(base + bigPath, { method: 'DELETE', headers: user });
      const downloadRatio = baseDownload.rps ? Math.round((download.rps / baseDownload.rps) * 100) / 100 : null;
      console.log(`  ratio Plinth/baseline: 1 MiB download ${downloadRatio}   (goal ≥ 0.7)`);
      return { download, baseDownload, downloadRatio, big: bigResult };
    } finally {
      await tools.stop(baseline);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    tools.tempDirs.delete(work);
  }
}
