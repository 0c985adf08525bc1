import { createHmac, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../scripts/sim/prng.js';
import { startSimReceiver } from '../../scripts/sim/receiver.js';
import { buildScenario } from '../../scripts/sim/scenario.js';
import { buildSchedule, FAULT_KINDS, SIGNER_FAULT_KINDS } from '../../scripts/sim/schedule.js';

// The simulator runner's deterministic parts (docs/simulation.md): one seed, one scenario and one fault schedule, so a
// failing seed replays; and its webhook receiver, a real HTTP server that records what it got and what it answered.

const opts = { activeMs: 20_000, networks: ['ethereum', 'bsc'], intensity: 1, confirmations: 2 };

describe('simulator PRNG, scenario and schedule', () => {
  it('the same seed draws the same numbers, scenario and schedule; another seed draws others', () => {
    const a = createPrng(42);
    const b = createPrng(42);
    const seqA = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(seqA);
    expect(Array.from({ length: 20 }, () => createPrng(43).next())).not.toEqual(seqA);
    for (const seed of [1, 2, 99]) {
      expect(buildSchedule(createPrng(seed).fork('faults'), opts)).toEqual(buildSchedule(createPrng(seed).fork('faults'), opts));
      expect(buildScenario(createPrng(seed).fork('scenario'), opts)).toEqual(buildScenario(createPrng(seed).fork('scenario'), opts));
    }
    expect(buildSchedule(createPrng(1).fork('faults'), opts)).not.toEqual(buildSchedule(createPrng(2).fork('faults'), opts));
  });

  it('keeps reorgs on one network at least confirmations + 1 blocks apart, so together they never reach a final block', () => {
    const o = { activeMs: 15_000, networks: ['ethereum'], intensity: 1, confirmations: 3 };
    // Seed 108 drew a depth-2 reorg at 5.2 s and a depth-1 one at 6.1 s; the second now comes 4 s after the first.
    const reorgs108 = buildSchedule(createPrng(108).fork('faults'), o).filter((f) => f.kind === 'reorg');
    expect(reorgs108.map((f) => [f.at, f.params.depth])).toEqual([
      [5201, 2],
      [9201, 1],
    ]);
    let spaced = 0;
    for (let seed = 0; seed < 500; seed++) {
      const s = buildSchedule(createPrng(seed).fork('faults'), { ...o, networks: ['ethereum', 'bsc'] });
      for (const network of ['ethereum', 'bsc']) {
        const at = s.filter((f) => f.kind === 'reorg' && f.params.network === network).map((f) => f.at);
        for (let i = 1; i < at.length; i++, spaced++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(4000);
        for (const x of at) expect(x).toBeLessThanOrEqual(o.activeMs - 1000);
      }
    }
    expect(spaced).toBeGreaterThan(0);
  });

  it('draws within its ranges: numbers in [0,1), ints inclusive, faults inside the active phase of known kinds', () => {
    const p = createPrng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 2000; i++) {
      const x = p.next();
      expect(x >= 0 && x < 1).toBe(true);
      seen.add(p.int(1, 3));
    }
    expect([...seen].sort()).toEqual([1, 2, 3]);
    const kinds = new Set<string>();
    for (let seed = 0; seed < 200; seed++) {
      const s = buildSchedule(createPrng(seed).fork('faults'), opts);
      expect(s.map((f) => f.at)).toEqual([...s.map((f) => f.at)].sort((x, y) => x - y));
      for (const f of s) {
        kinds.add(f.kind);
        expect(f.at).toBeGreaterThanOrEqual(1500);
        expect(f.at).toBeLessThanOrEqual(opts.activeMs);
        if (f.kind === 'reorg') expect(Number(f.params.depth)).toBeLessThan(opts.confirmations);
      }
    }
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
  });

  it('with a separate signer, draws one of each signer fault from its own stream; the other faults stay what they were', () => {
    for (let seed = 0; seed < 100; seed++) {
      const without = buildSchedule(createPrng(seed).fork('faults'), opts);
      const withSigner = buildSchedule(createPrng(seed).fork('faults'), { ...opts, signer: true });
      expect(without.some((f) => f.kind.startsWith('signer.'))).toBe(false);
      expect(withSigner.filter((f) => !f.kind.startsWith('signer.'))).toEqual(without);
      const signer = withSigner.filter((f) => f.kind.startsWith('signer.'));
      expect(signer.map((f) => f.kind).sort()).toEqual([...SIGNER_FAULT_KINDS].sort());
      expect(withSigner.map((f) => f.at)).toEqual([...withSigner.map((f) => f.at)].sort((x, y) => x - y));
      for (const f of signer) {
        expect(f.at).toBeGreaterThanOrEqual(1500);
        expect(f.at).toBeLessThanOrEqual(opts.activeMs - 2000);
        if (f.kind === 'signer.kill') expect(f.params).toEqual({});
        else expect(Number(f.params.forMs)).toBeGreaterThanOrEqual(1000);
        if (f.kind !== 'signer.kill') expect(Number(f.params.forMs)).toBeLessThanOrEqual(4000);
      }
    }
    // Intensity scales them as it does the others: two of each at intensity 2.
    const twice = buildSchedule(createPrng(5).fork('faults'), { ...opts, intensity: 2, signer: true });
    expect(twice.filter((f) => f.kind === 'signer.stall')).toHaveLength(2);
  });
});

describe('simulator webhook receiver', () => {
  it('records every delivery with its answer and verifies signatures; after heal() it answers 200', async () => {
    const secret = 'whsec_sim_test';
    const r = await startSimReceiver(createPrng(5), 200);
    r.addSecret(secret);
    const post = async (id: number, signWith = secret) => {
      const body = JSON.stringify({ id: `evt_${id}`, type: 'payment.completed', created_at: 1, data: { object: { id: `cs_${id}` } } });
      const ts = String(Math.floor(Date.now() / 1000));
      const nonce = randomUUID();
      const sig = createHmac('sha256', signWith).update(`${ts}.${nonce}.${body}`).digest('hex');
      return fetch(r.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Service-Webhook/1.0',
          'x-service-timestamp': ts,
          'x-service-nonce': nonce,
          'x-service-signature': sig,
          'x-service-event-id': `evt_${id}`,
          'x-service-event-type': 'payment.completed',
        },
        body,
        signal: AbortSignal.timeout(1000),
      }).then(
        (res) => res.status,
        () => 0,
      );
    };
    try {
      const statuses = [];
      for (let i = 1; i <= 30; i++) statuses.push(await post(i));
      expect(r.deliveries.map((d) => d.eventId)).toEqual(statuses.map((_, i) => `evt_${i + 1}`));
      expect(r.deliveries.map((d) => d.objectId)).toContain('cs_1');
      // The PRNG makes it answer more than 2xx: errors and requests it never answers.
      expect(statuses.some((s) => s >= 400)).toBe(true);
      expect(statuses.some((s) => s === 0)).toBe(true);
      expect(r.problems).toEqual([]);
      r.heal();
      for (let i = 31; i <= 35; i++) expect([200, 204]).toContain(await post(i));
      await post(36, 'wrong secret');
      expect(r.problems).toHaveLength(1);
      expect(r.problems[0]).toMatch(/^evt_36: .*signature/);
    } finally {
      await r.close();
    }
  });
});
