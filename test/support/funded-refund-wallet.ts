import { expect } from 'vitest';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { fund } from './evm-tokens/scenario.js';
import type { HarnessMerchant, ServiceHarness } from './service-harness.js';

/**
 * A merchant's Ethereum refund hot wallet, registered for watching, then given `gas` wei (anvil_setBalance: reconcile
 * books it as an unexplained native movement on its first run) and `usdt` base units of USDT, whose unexplained
 * arrival the operator acknowledges as a treasury top-up. Returns the wallet's lowercase address.
 */
export async function fundedRefundWallet(h: ServiceHarness, shop: HarnessMerchant, gas: bigint, usdt: bigint): Promise<string> {
  const hot = shop.hotWallet.toLowerCase();
  // Registered where the watcher is: before its first step there is no tip, the opening balance would be read just
  // before the wallet's first journaled movement (after the funding below) and the top-up would vanish into it.
  await h.until(async () =>
    (await h.t.db.selectFrom('chain_cursors').select('tip_height').where('chain_key', '=', 'ethereum:test').executeTakeFirst())
      ?.tip_height != null
      ? true
      : undefined,
  );
  await registerWallets(h.t.db, [{ network: 'ethereum', mode: 'test', address: hot, merchantId: shop.id, role: 'refunds' }]);
  await fundAfterRegistration(h.node);
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${gas.toString(16)}`]);
  await fund(h.tokens.USDT, shop.hotWallet, usdt);
  const [topUp] = await h.until(async () => {
    const u = await listUnexplained(h.t.db, { network: 'ethereum', mode: 'test' });
    return u.length > 0 ? u : undefined;
  });
  expect(await acknowledgeUnexplained(h.t.db, topUp!.entryId, 'treasury top-up')).toBe(true);
  return hot;
}

/**
 * Mines one block, so that what a test sets next with anvil_setBalance lands above the registration height. Anvil
 * applies anvil_setBalance to the state of its head block: right after `registerWallets` (whose height is the watcher's
 * tip, often the head itself) the funding would be read as part of the opening balance and reconcile would find no
 * difference. On a real chain funding sent after registering lands in a later block.
 */
export async function fundAfterRegistration(node: { mine(blocks?: number): Promise<void> }): Promise<void> {
  await node.mine(1);
}
