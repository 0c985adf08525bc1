import { Keypair, PublicKey } from '@solana/web3.js';
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { FakeTicker } from '../support/fake-ticker.js';
import { runRestoreSweepScenario } from '../support/restore-sweep-scenario.js';
import { startSolanaServiceHarness, type SolanaServiceHarness } from '../support/solana-service-harness.js';
import { solanaSweepSetup } from '../support/sweep-setup.js';

// Issue 36, "Restores never pay twice", for Solana sweeps (the gas station as fee payer of one batch moving every
// deposit, co-signed by the deposit owners, then a close returning their accounts' rent):
// test/support/restore-sweep-scenario.ts on the LiteSVM endpoint. The gas station is the sender of every step, so it
// alone is held, on the four transactions of both sweeps. The service runs without the worker role until the restore:
// the test drives the sweeps as the worker's tick does.
describe('Solana: a restored backup sweeps nothing twice', () => {
  let h: SolanaServiceHarness;
  let ticker: FakeTicker;
  let station: string;
  beforeAll(async () => {
    h = await startSolanaServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
    ({ ticker, station } = await solanaSweepSetup(h, { token: 'USDC' }));
  }, 120_000);
  afterAll(async () => {
    await ticker?.close();
    await h?.close();
  });

  it('holds the restored sweep on the gas station, lists its transactions, and after the accept moves nothing again', async () => {
    await runRestoreSweepScenario({
      h,
      network: 'solana',
      token: 'USDC',
      tickerUrl: ticker.url,
      gasStation: station,
      newTreasury: () => Keypair.generate().publicKey.toBase58(),
      async paidDeposit(m, amount) {
        const s = await h.paidSession(m, { amount, token: 'USDC' });
        return { sessionId: s.id, address: s.depositOwner };
      },
      async sendTokens(address, amount) {
        h.rpc.validator.setTokenAccount({
          mint: h.mints.USDC,
          owner: address,
          amount: (await h.tokenBalance(h.mints.USDC, address)) + amount,
        });
      },
      tokenBalance: (address) => h.tokenBalance(h.mints.USDC, address),
      nativeBalance: async (address) => BigInt(await h.conn.getBalance(new PublicKey(address), 'confirmed')),
    });
  }, 240_000);
});
