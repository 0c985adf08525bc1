import { describe, expect, it } from 'vitest';
import { sharedReadiness, type Readiness } from '../../src/api/readiness.js';

const READY: Readiness = { status: 'ready', checks: { postgres: 'ok', redis: 'ok' } };
const DOWN: Readiness = { status: 'unavailable', checks: { postgres: 'ok', redis: 'unreachable' } };

describe('shared readiness probe', () => {
  it('runs one probe for callers arriving together, reuses its answer for reuseMs, then probes again', async () => {
    let t = 0;
    let runs = 0;
    let release: (r: Readiness) => void = () => {};
    const probe = () => {
      runs++;
      return new Promise<Readiness>((r) => (release = r));
    };
    const ready = sharedReadiness(probe, 1000, () => t);
    const together = Array.from({ length: 100 }, () => ready());
    expect(runs).toBe(1);
    release(READY);
    expect(await Promise.all(together)).toEqual(Array.from({ length: 100 }, () => READY));
    t = 999;
    expect(await ready()).toEqual(READY);
    expect(runs).toBe(1);
    t = 1000;
    const later = ready();
    expect(runs).toBe(2);
    release(DOWN);
    expect(await later).toEqual(DOWN);
  });

  it('does not keep a failed probe: the next caller probes again', async () => {
    let runs = 0;
    const ready = sharedReadiness(
      async () => {
        runs++;
        if (runs === 1) throw new Error('boom');
        return READY;
      },
      1000,
      () => 0,
    );
    await expect(ready()).rejects.toThrow('boom');
    expect(await ready()).toEqual(READY);
    expect(runs).toBe(2);
  });
});
