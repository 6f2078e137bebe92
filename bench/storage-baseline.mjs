// The storage baseline of `npm run bench`: a bare node:http server that streams files with
// node:fs and nothing else (no auth, no database): `GET /file` sends the file given on the
// command line (`/small` and `/big`), `PUT /upload` writes the body to a file of the given directory and fsyncs it,
// as Plinth does before it acknowledges. Usage: node bench/storage-baseline.mjs <port> <small file> <big file> <dir>
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

const [port, small, big, dir] = process.argv.slice(2);
const files = { '/small': { path: small, size: statSync(small).size }, '/big': { path: big, size: statSync(big).size } };
let n = 0;

createServer(async (req, res) => {
  try {
    if (req.method === 'GET') {
      const f = files[req.url];
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': f.size });
      await pipeline(createReadStream(f.path, { highWaterMark: 256 * 1024 }), res);
      return;
    }
    const target = join(dir, `upload-${n++}`);
    await pipeline(req, createWriteStream(target));
    const fh = await open(target, 'r+');
    await fh.sync();
    await fh.close();
    res.writeHead(201, { 'content-type': 'application/json' });
    res.end('{}');
    await rm(target, { force: true });
  } catch (err) {
    if (!res.headersSent) res.writeHead(500);
    res.end(String(err?.message ?? err));
  }
}).listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
