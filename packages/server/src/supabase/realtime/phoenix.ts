/**
 * Phoenix channel frames as `@supabase/realtime-js` writes and reads them: vsn 1.0.0 JSON
 * objects, vsn 2.0.0 JSON arrays `[join_ref, ref, topic, event, payload]` and its binary
 * user-broadcast push (kind 3) and user broadcast (kind 4). Only the wire: what a frame means is the face's (index.ts).
 */

export interface Frame {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: Record<string, unknown>;
}

export type Vsn = 1 | 2;

/** A frame's text; `payloadJson` is the payload as JSON text already (a change's row is). */
export function encodeFrame(vsn: Vsn, f: Omit<Frame, 'payload'>, payloadJson: string): string {
  const s = (v: string | null) => (v === null ? 'null' : JSON.stringify(v));
  if (vsn === 2) return `[${s(f.join_ref)},${s(f.ref)},${s(f.topic)},${s(f.event)},${payloadJson}]`;
  return `{"join_ref":${s(f.join_ref)},"ref":${s(f.ref)},"topic":${s(f.topic)},"event":${s(f.event)},"payload":${payloadJson}}`;
}

/** vsn 2's binary user-broadcast push (kind 3): realtime-js sends `broadcast` this way. */
function decodeBinary(buf: Buffer): Frame | null {
  if (buf.length < 7 || buf[0] !== 3) return null;
  const [joinLen, refLen, topicLen, eventLen, metaLen, encoding] = [buf[1], buf[2], buf[3], buf[4], buf[5], buf[6]];
  let o = 7;
  const take = (n: number) => {
    const s = buf.subarray(o, o + n).toString('utf8');
    o += n;
    return s;
  };
  const join_ref = take(joinLen) || null;
  const ref = take(refLen) || null;
  const topic = take(topicLen);
  const event = take(eventLen);
  take(metaLen);
  if (o > buf.length) return null;
  const rest = buf.subarray(o);
  // A binary payload stays bytes: vsn 2 members get them back as bytes (encodeUserBroadcast).
  const payload = encoding === 1 ? JSON.parse(rest.toString('utf8')) : Buffer.from(rest);
  return { join_ref, ref, topic, event: 'broadcast', payload: { type: 'broadcast', event, payload } };
}

/**
 * vsn 2's binary user broadcast (kind 4), server to client, for a payload of bytes: `[4, topic
 * size, event size, meta size, encoding 0, topic, event, payload]`, as realtime-js decodes it.
 * Null when a name is too long for its one-byte size.
 */
export function encodeUserBroadcast(topic: string, event: string, payload: Buffer): Buffer | null {
  const t = Buffer.from(topic, 'utf8');
  const e = Buffer.from(event, 'utf8');
  if (t.length > 255 || e.length > 255) return null;
  return Buffer.concat([Buffer.from([4, t.length, e.length, 0, 0]), t, e, payload]);
}

/** A client's frame, or null when it is not one (the socket is closed with 1003). */
export function decodeFrame(data: Buffer, isBinary: boolean, vsn: Vsn): Frame | null {
  if (isBinary) return vsn === 2 ? decodeBinary(data) : null;
  const v = JSON.parse(data.toString('utf8')) as unknown;
  let f: Partial<Frame>;
  if (Array.isArray(v)) {
    const [join_ref, ref, topic, event, payload] = v as [string | null, string | null, string, string, Record<string, unknown>];
    f = { join_ref, ref, topic, event, payload };
  } else if (v && typeof v === 'object') f = v as Partial<Frame>;
  else return null;
  if (typeof f.topic !== 'string' || typeof f.event !== 'string') return null;
  return {
    join_ref: typeof f.join_ref === 'string' ? f.join_ref : null,
    ref: typeof f.ref === 'string' ? f.ref : null,
    topic: f.topic,
    event: f.event,
    payload: f.payload && typeof f.payload === 'object' ? f.payload : {},
  };
}
