import { describe, expect, it } from 'vitest';
import { reconcileExitCode, renderTable } from '../../src/cli/reconcile.js';
import type { ChainReconciliation, ReconcileReport } from '../../src/reconcile/reconcile.js';

// The reconcile CLI's exit status (docs/journal.md): 3 when a balance differs, 4 when nothing differs among what was
// compared but a chain was skipped or balances were left uncompared, 0 only when every configured chain was compared.

const chain = (over: Partial<ChainReconciliation> = {}): ChainReconciliation => ({
  network: 'tron',
  mode: 'test',
  height: 100n,
  addresses: 2,
  balances: 6,
  rpcCalls: 8,
  durationMs: 12,
  differences: [],
  summary: [],
  ...over,
});
const report = (chains: ChainReconciliation[], ok = true): ReconcileReport => ({ chains, ok });
const difference: ChainReconciliation['differences'][number] = {
  address: 'TXYZ',
  asset: 'USDT',
  merchantId: null,
  journal: 5n,
  expected: 5n,
  chain: 4n,
  difference: 1n,
  unexplained: 0n,
  failing: true,
};

describe('reconcile exit status', () => {
  it('0 only when every chain was compared with no difference', () => {
    const r = report([chain(), chain({ network: 'ethereum' })]);
    expect(reconcileExitCode(r)).toBe(0);
    expect(renderTable(r)).toMatch(/reconciled: no difference\n$/);
  });

  it('4 when a chain was skipped (its watcher behind or never run), with the reason in the table', () => {
    const r = report([chain(), chain({ network: 'solana', height: null, skipped: 'the watcher has not run on this chain yet' })]);
    expect(reconcileExitCode(r)).toBe(4);
    const table = renderTable(r);
    expect(table).toContain('solana/test: skipped (the watcher has not run on this chain yet)');
    expect(table).toMatch(/NOT reconciled: no difference among what was compared, but not everything was/);
  });

  it('4 when balances were left uncompared on a chain that ran', () => {
    const r = report([chain({ stateHeights: { lowest: 98n, highest: 100n, retries: 3, uncompared: 2 } })]);
    expect(reconcileExitCode(r)).toBe(4);
    expect(reconcileExitCode(report([chain({ stateHeights: { lowest: 98n, highest: 100n, retries: 3, uncompared: 0 } })]))).toBe(0);
  });

  it('3 when a balance differs, whatever else was skipped', () => {
    const r = report([chain({ differences: [difference] }), chain({ network: 'solana', height: null, skipped: 'x' })], false);
    expect(reconcileExitCode(r)).toBe(3);
    expect(renderTable(r)).toMatch(/NOT reconciled: differences above\n$/);
  });
});
