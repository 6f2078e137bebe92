import { describe, expect, it } from 'vitest';
import { type ChannelMember, type ChannelMessage, Channels, type PresenceState } from './channels.js';

// Presence changes of one tick go out together (issue 37: 1,000 clients joining one channel must
// converge within 2 s): one diff per topic per tick to each member, not one per change to every
// member (n² messages for n joins). A member that joins during the tick is answered the state as of
// the last flush, and the diff that follows applies to it exactly.

type Diff = Extract<ChannelMessage, { kind: 'presence_diff' }>;

function member(topic: string, key: string): ChannelMember & { got: ChannelMessage[] } {
  const got: ChannelMessage[] = [];
  return { topic, ip: '127.0.0.1', presenceKey: key, self: false, meta: null, got, deliver: (m) => got.push(m) };
}

/** What a client makes of a state and its diffs (leaves, then joins, by phx_ref: the SDK's merge). */
function apply(state: PresenceState, d: Diff): PresenceState {
  const next: PresenceState = {};
  for (const [k, v] of Object.entries(state)) next[k] = { metas: [...v.metas] };
  for (const [k, v] of Object.entries(d.leaves)) {
    const gone = new Set(v.metas.map((m) => m.phx_ref));
    const left = (next[k]?.metas ?? []).filter((m) => !gone.has(m.phx_ref));
    if (left.length > 0) next[k] = { metas: left };
    else delete next[k];
  }
  for (const [k, v] of Object.entries(d.joins)) next[k] = { metas: [...(next[k]?.metas ?? []), ...v.metas] };
  return next;
}

const diffs = (m: { got: ChannelMessage[] }) => m.got.filter((x): x is Diff => x.kind === 'presence_diff');
const metaCount = (s: PresenceState) => Object.values(s).reduce((n, v) => n + v.metas.length, 0);

describe('presence diffs, one per topic per tick', () => {
  it('n members tracking in one tick: each member gets one diff with all n, not n diffs', async () => {
    const channels = new Channels();
    const n = 200;
    const members = Array.from({ length: n }, (_, i) => member('lobby', `u${i}`));
    const states = members.map((m) => channels.join(m));
    for (const [i, m] of members.entries()) channels.track(m, { i });
    expect(diffs(members[0])).toEqual([]);
    // The end of the tick sends them.
    await expect.poll(() => diffs(members[0]).length).toBe(1);
    for (const [i, m] of members.entries()) {
      expect(diffs(m)).toHaveLength(1);
      expect(Object.keys(apply(states[i], diffs(m)[0])).length).toBe(n);
    }
    expect(members.reduce((sum, m) => sum + m.got.length, 0)).toBe(n);
  });

  it('a member joining mid-tick gets the last flushed state, and the diff applies to it exactly', () => {
    const channels = new Channels();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map((k) => member('room', k));
    channels.join(a);
    channels.join(b);
    channels.track(a, { n: 1 });
    channels.track(b, { n: 2 });
    channels.flush();
    // In one tick: b untracks, c joins and tracks, a re-tracks; then d joins, before the flush.
    channels.untrack(b);
    channels.join(c);
    channels.track(c, { n: 3 });
    channels.track(a, { n: 4 });
    const seenByD = channels.join(d);
    expect(Object.keys(seenByD).sort()).toEqual(['a', 'b']);
    channels.flush();
    const final = apply(seenByD, diffs(d)[0]);
    expect(diffs(d)).toHaveLength(1);
    expect(Object.keys(final).sort()).toEqual(['a', 'c']);
    expect(final.a.metas.map((m) => m.n)).toEqual([4]);
    expect(metaCount(final)).toBe(2);
    // What d holds is what the hub holds.
    expect(final).toEqual({ ...channels.state('room') });
  });

  it('a presence that comes and goes within a tick tells nobody; a leave of one told is sent', () => {
    const channels = new Channels();
    const [watcher, brief, leaver] = ['w', 'brief', 'leaver'].map((k) => member('room', k));
    channels.join(watcher);
    channels.join(leaver);
    channels.track(leaver, {});
    channels.flush();
    const before = diffs(watcher).length;
    channels.join(brief);
    channels.track(brief, {});
    channels.leave(brief);
    channels.leave(leaver);
    channels.flush();
    const sent = diffs(watcher).slice(before);
    expect(sent).toHaveLength(1);
    expect(Object.keys(sent[0].joins)).toEqual([]);
    expect(Object.keys(sent[0].leaves)).toEqual(['leaver']);
    expect(channels.state('room')).toEqual({});
  });

  it('a presence key such as "__proto__" is a key like any other', async () => {
    const channels = new Channels();
    const [odd, other] = [member('room', '__proto__'), member('room', 'x')];
    channels.join(odd);
    channels.join(other);
    channels.track(odd, { odd: true });
    channels.flush();
    expect(Object.keys(channels.state('room'))).toEqual(['__proto__']);
    expect(JSON.stringify(diffs(other)[0].joins)).toContain('"__proto__":{"metas":[{"odd":true');
  });
});
