/**
 * The tar format (POSIX ustar) as backups need it: headers for files and folders to write, and
 * a reader that streams entries out of an archive one at a time, so neither side ever holds more
 * than one chunk of a file in memory. PGlite's own `dumpDataDir` writes this format too.
 */

const BLOCK = 512;

export interface TarHeader {
  /** The path inside the archive, `/`-separated, without a leading `/`. */
  name: string;
  type: 'file' | 'dir' | 'other';
  size: number;
  mode: number;
  /** Seconds since 1970. */
  mtime: number;
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

/** Splits a long name into ustar's prefix (155) and name (100) at a `/`. */
function splitName(name: string): [string, string] {
  if (Buffer.byteLength(name) <= 100) return ['', name];
  for (let i = name.length - 1; i > 0; i--) {
    if (name[i] !== '/') continue;
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100) return [prefix, rest];
  }
  throw new Error(`tar: the name is too long for ustar: ${name.slice(0, 80)}…`);
}

/**
 * The 512-byte header of an entry; a file's bytes follow it, padded to a multiple of 512.
 * @example tarHeader({ name: 'keys.json', type: 'file', size: 120, mode: 0o600, mtime: 0 })
 */
export function tarHeader(h: TarHeader): Buffer {
  const block = Buffer.alloc(BLOCK);
  const [prefix, name] = splitName(h.type === 'dir' && !h.name.endsWith('/') ? `${h.name}/` : h.name);
  block.write(name, 0, 100, 'utf8');
  block.write(octal(h.mode & 0o7777, 8), 100, 8, 'ascii');
  block.write(octal(0, 8), 108, 8, 'ascii');
  block.write(octal(0, 8), 116, 8, 'ascii');
  block.write(octal(h.type === 'file' ? h.size : 0, 12), 124, 12, 'ascii');
  block.write(octal(Math.max(0, Math.floor(h.mtime)), 12), 136, 12, 'ascii');
  block.write('        ', 148, 8, 'ascii');
  block.write(h.type === 'dir' ? '5' : '0', 156, 1, 'ascii');
  block.write('ustar\u000000', 257, 8, 'ascii');
  block.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 8, 'ascii');
  return block;
}

/** The zero bytes that pad a file of `size` bytes to the next block. */
export function tarPadding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The end of an archive: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * BLOCK);

/** Reads exactly the bytes asked for from a stream of chunks. */
class ByteReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private done = false;
  constructor(private readonly source: AsyncIterator<Uint8Array>) {}

  private async fill(n: number): Promise<void> {
    while (this.buffered < n && !this.done) {
      const next = await this.source.next();
      if (next.done) this.done = true;
      else {
        const chunk = Buffer.from(next.value);
        this.chunks.push(chunk);
        this.buffered += chunk.length;
      }
    }
  }

  /** Up to `n` bytes (fewer only at the end of the stream). */
  async read(n: number): Promise<Buffer> {
    await this.fill(n);
    const all = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const out = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(out.length);
    this.chunks = rest.length ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }
}

const field = (block: Buffer, start: number, length: number) =>
  block
    .subarray(start, start + length)
    .toString('utf8')
    .replace(/\0[\s\S]*$/, '');
const number = (block: Buffer, start: number, length: number) => Number.parseInt(field(block, start, length).trim() || '0', 8);

export interface TarEntry extends TarHeader {
  /** The entry's bytes, in chunks; read them before asking for the next entry. */
  body: AsyncIterable<Buffer>;
}

/**
 * The entries of an archive, one at a time. Each entry's `body` must be read (or left) before
 * the next is asked for; what is not read is skipped. Names lose a leading `/`; pax and other
 * extended headers are skipped. Throws on a header whose checksum is wrong.
 * @example for await (const e of readTar(createReadStream('a.tar'))) if (e.type === 'file') for await (const c of e.body) out.write(c);
 */
export async function* readTar(source: AsyncIterable<Uint8Array>): AsyncGenerator<TarEntry> {
  const reader = new ByteReader(source[Symbol.asyncIterator]());
  for (;;) {
    const block = await reader.read(BLOCK);
    // The end: two zero blocks, or (leniently) none at all; a part of a header is a cut archive.
    if (block.length === 0 || (block.length === BLOCK && block.every((b) => b === 0))) return;
    if (block.length < BLOCK) throw new Error('tar: the archive ends inside a header (truncated)');
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i];
    if (sum !== number(block, 148, 8)) throw new Error('tar: a header has a wrong checksum (not a tar archive, or a damaged one)');
    const size = number(block, 124, 12);
    const flag = String.fromCharCode(block[156] || 48);
    const prefix = block.subarray(257, 262).toString('ascii') === 'ustar' ? field(block, 345, 155) : '';
    const name = (prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100)).replace(/^\/+/, '').replace(/\/$/, '');
    let left = size;
    const body = (async function* () {
      while (left > 0) {
        const chunk = await reader.read(Math.min(left, 1024 * 1024));
        if (chunk.length === 0) throw new Error('tar: the archive ends inside a file (truncated)');
        left -= chunk.length;
        yield chunk;
      }
    })();
    yield {
      name,
      type: flag === '0' || flag === '7' ? 'file' : flag === '5' ? 'dir' : 'other',
      size,
      mode: number(block, 100, 8),
      mtime: number(block, 136, 12),
      body,
    };
    // Whatever the consumer left of the body, then the padding.
    while (left > 0) {
      const chunk = await reader.read(Math.min(left, 1024 * 1024));
      if (chunk.length === 0) throw new Error('tar: the archive ends inside a file (truncated)');
      left -= chunk.length;
    }
    await reader.read((BLOCK - (size % BLOCK)) % BLOCK);
  }
}
