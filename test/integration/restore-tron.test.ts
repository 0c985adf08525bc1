import { afterAll, beforeAll, describe, it } from 'vitest';
import { runRestoreScenario } from '../support/restore-scenario.js';
import { startTronServiceHarness, type TronServiceHarness } from '../support/tron-service-harness.js';

// Issue 36, "Restores never pay twice", on TRON (no account nonces): the scenario of test/support/restore-scenario.ts
// through the whole service, the fake java-tron (TronGrid's account history included) and Anvil.
describe('TRON: a restored backup pays nothing twice', () => {
  let h: TronServiceHarness;
  beforeAll(async () => {
    h = await startTronServiceHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('holds the hot wallet on its transactions the restored ledger does not know, lists them, settles and accepts them', async () => {
    await runRestoreScenario({
      h,
      network: 'tron',
      token: 'USDT',
      stranger: `41${'ab'.repeat(20)}`,
      fund: (m) => h.fundHotWallet(m),
      async paidSession(m, amount) {
        const s = await h.paidSession(m, { amount, token: 'USDT' });
        return { id: s.id, payer: s.payer };
      },
      async paidTo(m, to) {
        return (await h.transfers('USDT', m.hotWallet, to)).map((t) => t.amount);
      },
    });
  }, 120_000);
});
