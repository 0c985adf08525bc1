import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { runRestoreScenario } from '../support/restore-scenario.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';

// Issue 36, "Restores never pay twice", on Solana (no account nonces): the scenario of
// test/support/restore-scenario.ts through the whole service and the LiteSVM endpoint (getSignaturesForAddress).
describe('Solana: a restored backup pays nothing twice', () => {
  let h: SolanaServiceHarness;
  beforeAll(async () => {
    h = await startSolanaServiceHarness();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('holds the hot wallet on its transactions the restored ledger does not know, lists them, settles and accepts them', async () => {
    await runRestoreScenario({
      h,
      network: 'solana',
      token: 'USDC',
      stranger: Keypair.generate().publicKey.toBase58(),
      fund: async (m) => h.fundHotWallet(m),
      async paidSession(m, amount) {
        const s = await h.paidSession(m, { amount, token: 'USDC' });
        return { id: s.id, payer: s.payer };
      },
      async paidTo(m, to) {
        return (await h.transfersFrom(h.mints.USDC, m.hotWallet, to)).map((t) => t.amount);
      },
    });
  }, 120_000);
});
