import { afterEach, describe, expect, it } from 'vitest';
import { LiveHub, type Admission } from '../../src/checkout/live-hub.js';
import type { LiveStatus } from '../../src/checkout/live-status.js';

const status = (state: LiveStatus['state']): LiveStatus => ({
  state,
  network: null,
  token: null,
  due: null,
  received: null,
  pending: null,
  remaining: null,
  remaining_base: null,
  confirmations: null,
  expires_at: 0,
  redirect: null,
  shortfall: null,
  shortfall_base: null,
});

let hub: LiveHub | undefined;
afterEach(() => hub?.close());

function makeHub(o: { perSession?: number; perIp?: number; total?: number; known?: Set<string> } = {}) {
  const reads: string[] = [];
  hub = new LiveHub({
    intervalMs: 60_000,
    perSession: o.perSession ?? 0,
    perIp: o.perIp ?? 0,
    ...(o.total !== undefined ? { total: o.total } : {}),
    read: async (id) => {
      reads.push(id);
      await new Promise((r) => setTimeout(r, 20));
      return (o.known ?? new Set(['cs_a', 'cs_b'])).has(id) ? status('waiting') : undefined;
    },
    onReadError: () => {},
  });
  return { hub, reads };
}

const leaveAll = (as: Admission[]) => as.forEach((a) => a.kind === 'joined' && a.leave());

describe('live-status hub', () => {
  it('admits 200 streams arriving at once on one session with a single read', async () => {
    const { hub, reads } = makeHub();
    const all = await Promise.all(Array.from({ length: 200 }, (_, i) => hub.join('cs_a', `ip${i}`, () => {})));
    expect(all.every((a) => a.kind === 'joined')).toBe(true);
    expect(reads).toEqual(['cs_a']);
    leaveAll(all);
  });

  it('counts streams being admitted against the caps, and frees a slot on leave and on not found', async () => {
    const { hub } = makeHub({ perSession: 2, perIp: 3, known: new Set(['cs_a', 'cs_b', 'cs_c']) });
    const [a, b, c] = await Promise.all([
      hub.join('cs_a', 'x', () => {}),
      hub.join('cs_a', 'y', () => {}),
      hub.join('cs_a', 'z', () => {}),
    ]);
    expect([a!.kind, b!.kind, c!.kind]).toEqual(['joined', 'joined', 'full']);
    expect(c).toEqual({ kind: 'full', scope: 'session' });

    expect((await hub.join('cs_missing', 'x', () => {})).kind).toBe('not_found');
    expect(hub.streamsOf('x')).toBe(1);
    const more = await Promise.all([hub.join('cs_b', 'x', () => {}), hub.join('cs_c', 'x', () => {})]);
    expect(more.map((m) => m.kind)).toEqual(['joined', 'joined']);
    expect(await hub.join('cs_c', 'x', () => {})).toEqual({ kind: 'full', scope: 'ip' });

    leaveAll([a!, ...more]);
    leaveAll([a!]); // leaving twice frees one slot only
    expect(hub.streamsOf('x')).toBe(0);
    expect(hub.streamsOf('y')).toBe(1);
    expect((await hub.join('cs_a', 'w', () => {})).kind).toBe('joined');
  });

  it('caps the streams of the process in all, whatever their addresses and sessions, and frees a slot on leave and on not found', async () => {
    const { hub } = makeHub({ total: 3, known: new Set(['cs_a', 'cs_b', 'cs_c']) });
    const first = await Promise.all([
      hub.join('cs_a', 'ip1', () => {}),
      hub.join('cs_b', 'ip2', () => {}),
      hub.join('cs_c', 'ip3', () => {}),
      hub.join('cs_a', 'ip4', () => {}),
    ]);
    expect(first.map((a) => a.kind)).toEqual(['joined', 'joined', 'joined', 'full']);
    expect(first[3]).toEqual({ kind: 'full', scope: 'total' });
    expect(hub.streams).toBe(3);
    leaveAll([first[0]!]);
    expect(hub.streams).toBe(2);
    expect((await hub.join('cs_missing', 'ip5', () => {})).kind).toBe('not_found');
    expect(hub.streams).toBe(2);
    const again = await hub.join('cs_a', 'ip6', () => {});
    expect(again.kind).toBe('joined');
    expect(await hub.join('cs_b', 'ip7', () => {})).toEqual({ kind: 'full', scope: 'total' });
    leaveAll([...first, again]);
    expect(hub.streams).toBe(0);
  });
});
