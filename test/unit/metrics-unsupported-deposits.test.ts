import { describe, expect, it } from 'vitest';
import { metrics } from '../../src/metrics/registry.js';
import { watcherMetricsHooks } from '../../src/metrics/watcher.js';

// Issue 37: unsupported-token (look-alike) deposits confirmed by a watcher step are counted per network and mode, in
// their own counter and among the unmatched ones. Reads the process-wide registry: runs isolated (vitest.isolated.ts).

const poll = {
  rollbackAbove: null,
  transfers: [],
  finalHeight: 10n,
  processedTip: { height: 12n, hash: '0xabc', time: new Date() },
  cursor: {},
  caughtUp: true,
};

describe('stablepay_deposits_unsupported_token_total', () => {
  it('counts the look-alike deposits a step confirmed, by network and mode only', async () => {
    const hooks = watcherMetricsHooks({ network: 'base', mode: 'live' });
    hooks.onCommitted({ poll, credited: 1, confirmed: 4, unsupportedConfirmed: 2 });
    hooks.onCommitted({ poll, credited: 0, confirmed: 0, unsupportedConfirmed: 0 });
    const text = await metrics.render();
    expect(text).toContain('stablepay_deposits_unsupported_token_total{network="base",mode="live"} 2');
    expect(text).toContain('stablepay_deposits_unmatched_total{network="base",mode="live"} 3');
    expect(text).not.toMatch(/stablepay_deposits_unsupported_token_total\{[^}]*(session|token|address)/);
  });
});
