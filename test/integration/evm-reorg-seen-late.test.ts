import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnits } from 'ethers';
import { DeepReorgError } from '../../chains/types.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  depositsFor,
  fund,
  makeAdapter,
  payFrom,
  sessionRow,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// A reorg shallower than the confirmation depth that the watcher sees only once the new branch has grown past the
// replaced blocks by that depth (the reorg itself extended the chain, or the watcher was behind) replaced no block the
// watcher ever held final: it is rolled back like any shallow reorg. It used to be judged against the new branch's
// final height and stop the watcher as a deep reorg, waiting for an operator (simulator seed 108: a depth-2 reorg
// with one block more on BSC, confirmations 3). A reorg replacing a block the watcher did confirm still stops it.

let t: TestDatabase;
let eth: AnvilNode;
let usdc: DeployedToken;
let adapter: EvmChainAdapter;
let merchant: { id: string; account: number };
const payer = () => walletAt(1, eth.provider);

async function drain(w: NetworkWatcher): Promise<void> {
  for (let i = 0; i < 100; i++) if ((await w.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

beforeAll(async () => {
  [t, eth] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdc] = (await deployTokens(eth, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
  await fund(usdc, payer().address, parseUnits('1000', 6));
  adapter = makeAdapter(eth, [usdc]); // confirmations 3: final = head - 2
  merchant = await createMerchant(t.db);
}, 120_000);
afterAll(async () => {
  await eth?.stop();
  await t?.destroy();
});

describe('a shallow reorg seen after the new branch outgrew the confirmation depth', () => {
  it('rolls the provisional credit back instead of stopping; a reorg of a confirmed block still stops the watcher', async () => {
    const w = new NetworkWatcher({ db: t.db, adapter, pollIntervalMs: 50 });
    await drain(w);
    const s = await createBoundSession(t.db, adapter, merchant, { amountMinor: 500n, token: 'USDC' });
    await eth.mine(1);
    await payFrom(payer(), usdc, s.address, parseUnits('5', 6)); // mined in block P, the head
    await drain(w); // head P: the credit is provisional (final P - 2)
    expect((await depositsFor(t.db, s.id)).map((d) => d.status)).toEqual(['provisional']);

    // Blocks P-1 and P replaced (the payment dropped), then one block more: new head P+1, whose final height is P-1,
    // the first replaced block. The watcher had P-2 final, so nothing it confirmed was replaced.
    await eth.rpc('anvil_reorg', [2, []]);
    await eth.mine(1);
    await drain(w);
    expect((await depositsFor(t.db, s.id)).map((d) => d.status)).toEqual(['orphaned']);
    expect((await sessionRow(t.db, s.id)).status).toBe('open');

    // Paid again and confirmed (3 confirmations), then a reorg replacing that block: deeper than the policy.
    await payFrom(payer(), usdc, s.address, parseUnits('5', 6));
    await eth.mine(3);
    await drain(w);
    expect((await sessionRow(t.db, s.id)).status).toBe('paid');
    await eth.rpc('anvil_reorg', [5, []]);
    await expect(w.step()).rejects.toBeInstanceOf(DeepReorgError);
  }, 120_000);
});
