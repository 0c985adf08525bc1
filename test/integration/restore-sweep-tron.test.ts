import { afterAll, beforeAll, describe, it } from 'vitest';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { evmHexToTron, normalizeTronAddress } from '../../chains/tron/address.js';
import { fund } from '../support/evm-tokens/scenario.js';
import type { FakeTicker } from '../support/fake-ticker.js';
import { runRestoreSweepScenario } from '../support/restore-sweep-scenario.js';
import { tronSweepSetup } from '../support/sweep-setup.js';
import { startTronServiceHarness, tronEvm, type TronServiceHarness } from '../support/tron-service-harness.js';

// Issue 36, "Restores never pay twice", for TRON sweeps (the TRX top-up method: the gas station funds each deposit
// address, which then transfers its tokens): test/support/restore-sweep-scenario.ts through the fake java-tron
// (TronGrid's account history included) and Anvil. The gas station and both deposit addresses of the restored sweep
// are held on their transactions the restored ledger does not know; after the accept no TRX is sent a second time.
// The service runs without the worker role until the restore: the test drives the sweeps as the worker's tick does.
describe('TRON: a restored backup sweeps nothing twice', () => {
  let h: TronServiceHarness;
  let ticker: FakeTicker;
  let station: string;
  beforeAll(async () => {
    h = await startTronServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
    ({ ticker, station } = await tronSweepSetup(h, { stationSun: 10_000n * TRX }));
  }, 120_000);
  afterAll(async () => {
    await ticker?.close();
    await h?.close();
  });

  it('holds the restored sweep on its senders, lists its transactions, and after the accept sends no top-up again', async () => {
    let seq = 0;
    await runRestoreSweepScenario({
      h,
      network: 'tron',
      token: 'USDT',
      tickerUrl: ticker.url,
      gasStation: station,
      newTreasury: () => evmHexToTron(`0x${(0xe00000 + ++seq).toString(16).padStart(40, '0')}`),
      async paidDeposit(m, amount) {
        const s = await h.paidSession(m, { amount, token: 'USDT' });
        return { sessionId: s.id, address: normalizeTronAddress(s.depositAddress)! };
      },
      sendTokens: (address, amount) => fund(h.tokens.USDT, tronEvm(address), amount),
      async tokenBalance(address) {
        return (await h.tokens.USDT.contract.getFunction('balanceOf')(tronEvm(address))) as bigint;
      },
      nativeBalance: async (address) => h.fake.chain.account(address)?.balanceSun ?? 0n,
    });
  }, 240_000);
});
