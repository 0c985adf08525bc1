import { describe, expect, it } from 'vitest';
import {
  countDeliveries,
  countPayouts,
  machineTicks,
  nonceProblems,
  procStatTicks,
  ratioCeiling,
} from '../../scripts/bench/processes-count.js';

// The counting of scripts/bench/processes.ts (issue 38): what it calls a duplicate, a loss, a gap. No timing.

describe('countDeliveries', () => {
  it('tells exactly once, duplicated, missing and unknown events apart', () => {
    const hits = new Map([
      ['evt_1', 1],
      ['evt_2', 3],
      ['evt_9', 2],
    ]);
    expect(countDeliveries(['evt_1', 'evt_2', 'evt_3'], hits)).toEqual({
      events: 3,
      exactlyOnce: 1,
      duplicated: 1,
      extraHits: 2,
      missing: 1,
      unexpected: 2,
    });
  });
});

describe('nonceProblems', () => {
  it('counts the missing nonces between the first and the last, and repeats', () => {
    expect(nonceProblems([0n, 1n, 2n])).toEqual({ count: 3, first: 0n, last: 2n, gaps: 0, repeats: 0 });
    expect(nonceProblems([4n, 0n, 1n, 1n])).toEqual({ count: 4, first: 0n, last: 4n, gaps: 2, repeats: 1 });
    expect(nonceProblems([])).toEqual({ count: 0, first: null, last: null, gaps: 0, repeats: 0 });
  });
});

describe('countPayouts', () => {
  const wallet = '0xaaaa';
  const attempt = (refundId: string, txHash: string, nonce: bigint, state = 'confirmed') => ({
    refundId,
    txHash,
    sender: wallet,
    nonce,
    state,
  });

  it('a clean run: each refund one transfer, nonces 0..n-1 as on chain', () => {
    const c = countPayouts({
      refunds: [
        { id: 're_1', status: 'completed' },
        { id: 're_2', status: 'completed' },
      ],
      attempts: [attempt('re_1', '0xT1', 0n), attempt('re_2', '0xt2', 1n)],
      transfers: [
        { txHash: '0xt1', from: wallet },
        { txHash: '0xT2', from: wallet },
      ],
      chainNonces: new Map([[wallet, 2n]]),
    });
    expect(c).toEqual({
      refunds: 2,
      completed: 2,
      paidOnce: 2,
      paidTwice: 0,
      unpaid: 0,
      unknownTransfers: 0,
      nonceGaps: 0,
      nonceRepeats: 0,
      chainNonceMismatches: 0,
    });
  });

  it('finds a refund paid twice (two attempts both mined), an unpaid one, a stray transfer and a nonce gap', () => {
    const c = countPayouts({
      refunds: [
        { id: 're_1', status: 'completed' },
        { id: 're_2', status: 'completed' },
        { id: 're_3', status: 'pending' },
      ],
      attempts: [attempt('re_1', '0xa', 0n), attempt('re_1', '0xb', 1n, 'replaced'), attempt('re_2', '0xc', 3n)],
      transfers: [
        { txHash: '0xa', from: wallet },
        { txHash: '0xb', from: wallet },
        { txHash: '0xdead', from: wallet },
      ],
      chainNonces: new Map([[wallet, 4n]]),
    });
    expect(c.paidOnce).toBe(0);
    expect(c.paidTwice).toBe(1);
    expect(c.unpaid).toBe(1); // re_2 completed without a transfer; re_3 is pending, not counted
    expect(c.unknownTransfers).toBe(1);
    expect(c.nonceGaps).toBe(2); // confirmed 0 and 3: 1 and 2 missing
    expect(c.chainNonceMismatches).toBe(1); // 2 confirmed in the ledger, 4 on chain
  });

  it('counts nonces below the first confirmed one as gaps', () => {
    const c = countPayouts({
      refunds: [{ id: 're_1', status: 'completed' }],
      attempts: [attempt('re_1', '0xa', 2n)],
      transfers: [{ txHash: '0xa', from: wallet }],
      chainNonces: new Map([[wallet, 3n]]),
    });
    expect(c.nonceGaps).toBe(2);
    expect(c.chainNonceMismatches).toBe(1);
  });
});

describe('CPU readings', () => {
  it('reads utime + stime from /proc/<pid>/stat, whatever the command name holds', () => {
    const fields = ['S', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '250', '50', '0', '0'];
    expect(procStatTicks(`123 (node) ${fields.join(' ')}`)).toBe(300);
    expect(procStatTicks(`123 (a b) c)) ${fields.join(' ')}`)).toBe(300);
  });

  it('reads busy and total ticks from /proc/stat (idle and iowait not busy)', () => {
    expect(machineTicks('cpu  100 5 50 800 20 3 2 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n')).toEqual({ busy: 160, total: 980 });
  });
});

describe('ratioCeiling', () => {
  it('a second process doubles only what one core bounded', () => {
    // 500 µs of service CPU per request, little else: one process tops out at 2,000/s, two at 4,000/s on 4 cores.
    expect(ratioCeiling({ serviceUs: 500, generatorUs: 0, totalUs: 600, cores: 4 }).ratio).toBeCloseTo(2);
    // The same on 2 cores: the machine (2e6 / 1,000 µs = 2,000/s) is reached by one process already.
    const c = ratioCeiling({ serviceUs: 500, generatorUs: 100, totalUs: 1000, cores: 2 });
    expect(c.machine).toBeCloseTo(2000);
    expect(c.one).toBeCloseTo(2000);
    expect(c.ratio).toBeCloseTo(1);
    // In between: 2 cores, 1,000 µs in all, of which 750 in the service: 1,333/s for one, the machine's 2,000/s for two.
    const d = ratioCeiling({ serviceUs: 750, generatorUs: 0, totalUs: 1000, cores: 2 });
    expect(d.one).toBeCloseTo(1333.3, 0);
    expect(d.two).toBeCloseTo(2000, 0);
    expect(d.ratio).toBeCloseTo(1.5);
  });
});
