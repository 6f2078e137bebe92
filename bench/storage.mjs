// The storage scenarios of `npm run bench` (run.mjs calls them with the Plinth it started):
// (a) download of a 1 MiB object as a user under RLS, against a bare node:http server that
//     streams the same file with node:fs (bench/storage-baseline.mjs), measured A B B A;
// (b) upload, then download, of one big file (BENCH_STORAGE_BIG_MIB, default 1024 MiB): MiB/s
//     for Plinth and for the baseline, and Plinth's resident memory (VmRSS, sampled every
//     20 ms) over its idle size, which must stay under 200 MiB: the bytes stream;
// (c) image transforms: a 4000×3000 JPEG to a 400-pixel-wide WebP through
//     /storage/v1/render/image/authenticated/…, 8 requests at a time, each one transformed (the
//     object's 16 stored variants are filled first, so a further option is served and not kept),
//     against sharp called directly in this process on the same bytes with the same steps, 8 at
//     a time, measured A B B A; Plinth's RSS over its idle size during the 8 concurrent
//     transforms; and a cached repeat (one stored variant) against a plain download of an
//     object of the same bytes (goals: ≥ 0.8 and ≥ 0.9);
// (d) TUS: a BENCH_STORAGE_TUS_MIB (default 256) MiB file through /storage/v1/upload/resumable in
//     8 MiB PATCHes, MiB/s against one plain streamed upload of the same file, alternated twice
//     (goal ≥ 0.8).
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const MiB = 2 ** 20;
const BIG_MIB = Number(process.env.BENCH_STORAGE_BIG_MIB ?? 1024);
const TUS_MIB = Number(process.env.BENCH_STORAGE_TUS_MIB ?? 256);
const TUS_CHUNK = 8 * MiB;
const TRANSFORMS_AT_ONCE = 8;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

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

/** Runs `fn` `concurrency` at a time for `seconds`; resolves to completions per second. A failure stops the run. */
async function rate(concurrency, seconds, fn) {
  const end = performance.now() + seconds * 1000;
  let done = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        await fn();
        done++;
      }
    }),
  );
  return Math.round((done / ((performance.now() - started) / 1000)) * 10) / 10;
}

/** A 4000×3000 JPEG like a camera's (a gradient with grain), made with sharp. */
async function makePhoto(sharp) {
  const width = 4000;
  const height = 3000;
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 3;
      const grain = (x * 7919 + y * 104729) % 23;
      raw[i] = ((x * 255) / width + grain) & 255;
      raw[i + 1] = ((y * 255) / height + grain) & 255;
      raw[i + 2] = (((x + y) % 256) + grain) & 255;
    }
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A TUS upload of `file` in PATCHes of `chunk` bytes; resolves to the seconds from creation to the last answer. */
async function tusUpload(base, headers, bucket, name, file, chunk) {
  const size = statSync(file).size;
  const b64 = (v) => Buffer.from(v).toString('base64');
  const started = performance.now();
  const created = await fetch(`${base}/storage/v1/upload/resumable`, {
    method: 'POST',
    headers: {
      ...headers,
      'tus-resumable': '1.0.0',
      'upload-length': String(size),
      'upload-metadata': `bucketName ${b64(bucket)},objectName ${b64(name)},contentType ${b64('application/octet-stream')}`,
    },
  });
  if (created.status !== 201) throw new Error(`TUS create: HTTP ${created.status} ${await created.text()}`);
  const location = created.headers.get('location');
  for (let offset = 0; offset < size; offset += chunk) {
    const end = Math.min(size, offset + chunk);
    const status = await new Promise((resolve, reject) => {
      const req = request(
        `${base}${location}`,
        {
          method: 'PATCH',
          headers: {
            ...headers,
            'tus-resumable': '1.0.0',
            'upload-offset': String(offset),
            'content-type': 'application/offset+octet-stream',
            'content-length': String(end - offset),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', reject);
      pipeline(createReadStream(file, { start: offset, end: end - 1, highWaterMark: MiB }), req).catch(reject);
    });
    if (status !== 204) throw new Error(`TUS PATCH at ${offset}: HTTP ${status}`);
  }
  return (performance.now() - started) / 1000;
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

      const transforms = await benchTransforms(ctx, user, work);
      const tus = await benchTus(ctx, user, work);

      const downloadRatio = baseDownload.rps ? Math.round((download.rps / baseDownload.rps) * 100) / 100 : null;
      console.log(`  ratio Plinth/baseline: 1 MiB download ${downloadRatio}   (goal ≥ 0.7)`);
      return { download, baseDownload, downloadRatio, big: bigResult, transforms, tus };
    } finally {
      await tools.stop(baseline);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
    tools.tempDirs.delete(work);
  }
}

/** (c) Image transforms, uncached and cached, against sharp called directly and a plain download. */
async function benchTransforms(ctx, user, work) {
  const { base, tools } = ctx;
  const { default: sharp } = await import('sharp');
  const photo = await makePhoto(sharp);
  const photoFile = join(work, 'photo.jpg');
  await new Promise((r, j) => createWriteStream(photoFile).end(photo, (err) => (err ? j(err) : r())));
  const name = `${ctx.userId}/photo.jpg`;
  const up = await uploadFile(`${base}/api/v1/storage/object/bench/${name}`, { ...user, 'content-type': 'image/jpeg' }, photoFile);
  if (up.status !== 201) throw new Error(`photo upload: HTTP ${up.status} ${up.body}`);
  const render = (q) => `${base}/storage/v1/render/image/authenticated/bench/${name}?${q}`;
  const get = async (url, headers) => {
    const res = await fetch(url, { headers });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status} ${body.toString().slice(0, 200)}`);
    return { body, cache: res.headers.get('x-transform-cache') };
  };
  const asWebp = { ...user, accept: 'image/webp' };
  // The 16 variants an object keeps, filled with other qualities: then quality 80 is served and never kept.
  for (let q = 60; q < 76; q++) await get(render(`width=400&quality=${q}`), asWebp);
  // Kept after each answer is on its way: each of the 16 is a hit before the measure.
  for (let q = 60; q < 76; q++) await expectPoll(async () => (await get(render(`width=400&quality=${q}`), asWebp)).cache === 'hit');
  const uncachedUrl = render('width=400&quality=80');
  const first = await get(uncachedUrl, asWebp);
  if (first.cache !== 'miss') throw new Error(`transform: expected a miss, got ${first.cache}`);
  const direct = async () => {
    const meta = await sharp(photo, { limitInputPixels: false }).metadata();
    if (!meta.width) throw new Error('sharp: no width');
    await sharp(photo, { failOn: 'error' }).rotate().resize({ width: 400, fit: 'cover' }).toFormat('webp', { quality: 80 }).toBuffer();
  };
  const plinthOnce = async () => {
    const r = await get(uncachedUrl, asWebp);
    if (r.cache !== 'miss') throw new Error('transform: a request was served from the cache');
  };
  const half = Math.max(1, SECONDS / 2);
  await rate(TRANSFORMS_AT_ONCE, 1, plinthOnce);
  await rate(TRANSFORMS_AT_ONCE, 1, direct);
  const idle = rssMiB(ctx.plinthPid);
  const a1 = await peakRss(ctx.plinthPid, () => rate(TRANSFORMS_AT_ONCE, half, plinthOnce));
  const b1 = await rate(TRANSFORMS_AT_ONCE, half, direct);
  const b2 = await rate(TRANSFORMS_AT_ONCE, half, direct);
  const a2 = await peakRss(ctx.plinthPid, () => rate(TRANSFORMS_AT_ONCE, half, plinthOnce));
  const plinthRps = Math.round(((a1.result + a2.result) / 2) * 10) / 10;
  const sharpRps = Math.round(((b1 + b2) / 2) * 10) / 10;
  const rssGrowth = Math.round(Math.max(a1.peak, a2.peak) - idle);
  const uncachedRatio = Math.round((plinthRps / sharpRps) * 100) / 100;
  console.log(
    `  transform 4000×3000 JPEG → 400 px WebP, ${TRANSFORMS_AT_ONCE} at once: Plinth ${plinthRps} req/s, sharp directly ${sharpRps}/s: ratio ${uncachedRatio}   (goal ≥ 0.8)`,
  );
  console.log(`  Plinth   RSS growth under ${TRANSFORMS_AT_ONCE} concurrent transforms: ${rssGrowth} MiB (idle ${Math.round(idle)} MiB)`);

  // Cached: a variant kept (quality 60), against a plain download of an object of the same bytes.
  const cachedUrl = render('width=400&quality=60');
  const hit = await get(cachedUrl, asWebp);
  if (hit.cache !== 'hit') throw new Error(`transform: expected a hit, got ${hit.cache}`);
  const sameFile = join(work, 'same.webp');
  await new Promise((r, j) => createWriteStream(sameFile).end(hit.body, (err) => (err ? j(err) : r())));
  const plainPath = `/api/v1/storage/object/bench/${ctx.userId}/same.webp`;
  const plainUp = await uploadFile(base + plainPath, { ...user, 'content-type': 'image/webp' }, sameFile);
  if (plainUp.status !== 201) throw new Error(`webp upload: HTTP ${plainUp.status} ${plainUp.body}`);
  const [cached, plain] = await tools.cannonPair(
    {
      label: `Plinth   cached transform (${hit.body.length} B)`,
      opts: { url: cachedUrl, headers: asWebp, server: ctx.plinthPid, pg: 'plinth' },
    },
    {
      label: `Plinth   plain download (same ${hit.body.length} B)`,
      opts: { url: base + plainPath, headers: user, server: ctx.plinthPid, pg: 'plinth' },
    },
  );
  const cachedRatio = plain.rps ? Math.round((cached.rps / plain.rps) * 100) / 100 : null;
  console.log(`  ratio cached transform / plain download: ${cachedRatio}   (goal ≥ 0.9)`);
  // A missed goal is a figure, said beside it; `problems` is for runs that got non-2xx answers (their figures are wrong).
  return { plinthRps, sharpRps, uncachedRatio, rssGrowth, cached, plain, cachedRatio, bytes: hit.body.length };
}

/** Polls `check` every 50 ms until true (at most 10 s). */
async function expectPoll(check) {
  const end = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('bench: a condition never came true');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** (d) A TUS upload in 8 MiB PATCHes against one plain streamed upload of the same file: A B B A. */
async function benchTus(ctx, user, work) {
  const { base } = ctx;
  const file = join(work, 'tus.bin');
  await makeFile(file, TUS_MIB);
  let n = 0;
  const viaTus = async () => {
    const name = `${ctx.userId}/tus-${n++}.bin`;
    const seconds = await tusUpload(base, user, 'bench', name, file, TUS_CHUNK);
    await fetch(`${base}/api/v1/storage/object/bench/${name}`, { method: 'DELETE', headers: user });
    return seconds;
  };
  const plain = async () => {
    const path = `/api/v1/storage/object/bench/${ctx.userId}/plain-${n++}.bin`;
    const r = await uploadFile(base + path, { ...user, 'content-type': 'application/octet-stream' }, file);
    if (r.status !== 201) throw new Error(`plain upload: HTTP ${r.status} ${r.body}`);
    await fetch(base + path, { method: 'DELETE', headers: user });
    return r.seconds;
  };
  const t1 = await viaTus();
  const p1 = await plain();
  const p2 = await plain();
  const t2 = await viaTus();
  const tusMibps = Math.round(TUS_MIB / ((t1 + t2) / 2));
  const plainMibps = Math.round(TUS_MIB / ((p1 + p2) / 2));
  const ratio = Math.round((tusMibps / plainMibps) * 100) / 100;
  console.log(
    `  TUS ${TUS_MIB} MiB in 8 MiB PATCHes ${tusMibps} MiB/s, one plain upload ${plainMibps} MiB/s: ratio ${ratio}   (goal ≥ 0.8)`,
  );
  return { mib: TUS_MIB, tusMibps, plainMibps, ratio };
}
