/**
 * A channel message framed once for every socket it goes to (issue 37's fan-out). A server's
 * WebSocket frames are not masked (RFC 6455 §5.1), so a text frame is the same bytes on every
 * connection: header and payload are made once per message and written as one Buffer to each
 * socket, instead of ws framing the same payload again per member (an options object, a header,
 * two writes and a cork per send).
 *
 * Written straight on the socket under ws, which is what ws's own Sender does for a frame when
 * it has nothing queued; it queues only while it compresses or reads a Blob, and these sockets
 * do neither (perMessageDeflate is off on both faces, no Blob is ever sent). Should a ws version
 * lack what this relies on, or have something queued, the frame goes through `ws.send` as before.
 *
 * And a socket written in a turn of the event loop is corked until the turn ends (corkForTick):
 * what it is sent in the turn (broadcasts, presence, changes, ws's own frames, in the order
 * written) goes out in one write (writev) instead of one system call per message. It costs no
 * wait (the turn ends within it), and saves most when the server is busiest: many messages
 * handled in one turn, each to the same members.
 * Tests: frames.test.ts (the bytes a ws client reads, in order with ws's own sends).
 */
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** A text message framed once: `frame` for the socket, `text` (its payload) for ws.send. */
export interface SharedFrame {
  readonly frame: Buffer;
  readonly text: Buffer;
}

/**
 * Frames UTF-8 text as one final, unmasked text frame.
 * @example textFrame(Buffer.from('{"type":"pong"}')).frame // <Buffer 81 0f 7b 22 …>
 */
export function textFrame(text: Buffer): SharedFrame {
  const n = text.length;
  const head = n < 126 ? 2 : n < 65_536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(head + n);
  frame[0] = 0x81; // FIN, opcode 1 (text)
  if (n < 126) frame[1] = n;
  else if (n < 65_536) {
    frame[1] = 126;
    frame.writeUInt16BE(n, 2);
  } else {
    frame[1] = 127;
    frame.writeUInt32BE(Math.floor(n / 2 ** 32), 2);
    frame.writeUInt32BE(n >>> 0, 6);
  }
  text.copy(frame, head);
  return { frame, text };
}

/** Sockets corked in this turn of the event loop, uncorked together at its end. */
const corked = new Set<Duplex>();
let uncorkScheduled = false;

function uncorkAll(): void {
  uncorkScheduled = false;
  // Taken whole first: a socket corked while these are written waits for the next turn's end.
  const now = [...corked];
  corked.clear();
  // Each uncork writes what its socket was given this turn, in order, in one writev.
  for (const raw of now) raw.uncork();
}

/**
 * Corks a WebSocket's socket until the end of this turn of the event loop (once per turn; Node's
 * cork nests, so ws's own cork and uncork inside it write nothing until then).
 * @example corkForTick(ws); ws.send(a); ws.send(b); // one write at the end of the turn
 */
export function corkForTick(ws: WebSocket): void {
  const raw = (ws as unknown as WsInside)._socket;
  if (!raw || typeof raw.cork !== 'function' || corked.has(raw)) return;
  raw.cork();
  corked.add(raw);
  if (!uncorkScheduled) {
    uncorkScheduled = true;
    setImmediate(uncorkAll);
  }
}

/** What of ws's WebSocket this relies on (ws 8: lib/websocket.js, lib/sender.js). */
interface WsInside {
  _socket?: Duplex | null;
  _sender?: { _state?: unknown; _queue?: unknown[] } | null;
}

/**
 * Writes a shared frame on an open socket (the caller checked readyState and its buffer).
 * @example writeFrame(ws, textFrame(Buffer.from('{"type":"broadcast",…}')))
 */
export function writeFrame(ws: WebSocket, f: SharedFrame): void {
  const inside = ws as unknown as WsInside;
  const raw = inside._socket;
  const sender = inside._sender;
  // ws's Sender writes in place when its state is DEFAULT (0) and its queue empty: the same here.
  if (raw && typeof raw.write === 'function' && sender && sender._state === 0 && sender._queue?.length === 0) {
    corkForTick(ws);
    raw.write(f.frame);
    return;
  }
  ws.send(f.text, { binary: false });
}
