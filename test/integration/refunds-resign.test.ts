import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainRegistry } from '../../chains/registry.js';
import { advanceRefund, type PayoutEngineDeps } from '../../src/payouts/engine.js';
import { loadWatcherSettings } from '../../src/watcher/config.js';
import { createVerifiedAdapters } from '../../src/watcher/start.js';
import { transfersFrom } from '../support/chain-watch.js';
import { fund, signer } from '../support/evm-tokens/scenario.js';
import { startFaultProxy, type FaultProxy } from '../support/rpc-fault-proxy.js';
import { startServiceHarness, type HarnessMerchant, type ServiceHarness } from '../support/service-harness.js';

// A refund whose nonce was given back (the node refused its bytes and no later nonce was handed out) is signed again
// at the same nonce. With the same fees the new signature is byte for byte the old one (deterministic ECDSA): the
// same transaction hash. The refund's dropped attempt with that hash is revived (one row, one transaction), never a
// second row (the (network, mode, tx_hash) unique key would refuse it and leave the refund stuck) nor a second send.
// The real payout engine on Anvil, behind a JSON-RPC proxy that plays a node refusing eth_sendRawTransaction.
let h: ServiceHarness;
let shop: HarnessMerchant;
let proxy: FaultProxy;
let adapters: ChainRegistry;

beforeAll(async () => {
  // In-process: API and watcher only; the payout engine is driven step by step below.
  h = await startServiceHarness({ extraEnv: { ROLES: 'api,watcher' } });
  shop = await h.newMerchant('Resigner');
  await h.node.rpc('anvil_setBalance', [shop.hotWallet, '0x8ac7230489e80000']);
  await fund(h.tokens.USDT, shop.hotWallet, 1_000_000_000n);
  proxy = await startFaultProxy({ upstream: h.node.url });
  const env = { ...h.env, CHAIN_ETHEREUM_TEST_RPC_URL: proxy.url };
  adapters = await createVerifiedAdapters(loadWatcherSettings(env), env);
}, 120_000);
afterAll(async () => {
  await proxy?.close();
  await h?.close();
});

const attemptsOf = (refundId: string) =>
  h.t.db.selectFrom('payout_attempts').selectAll().where('refund_id', '=', refundId).orderBy('id').execute();

describe('a refund signed again after its nonce was given back', () => {
  it('revives its dropped attempt with the identical bytes and pays once', async () => {
    const s = await h.paidSession(shop, { amount: '4.00' });
    const created = await shop.client.post('/api/v1/refunds/create', {
      session_id: s.id,
      refund_id: 'resign-1',
      amount: 400,
      currency: 'USDT',
    });
    expect(created.status).toBe(201);
    const id = created.json.id as string;
    const deps: PayoutEngineDeps = { db: h.t.db, adapters, signer, stuckAfterMs: 600_000, feeBumpPercent: 25, pollMs: 100 };

    // The node refuses the first broadcast and the re-broadcast ("txpool is full"): a refusal that is neither
    // "nonce too low" nor an expiry, so the refund gives its nonce back and drops the bytes.
    proxy.setFaults({ refuseSendRaw: 2 });
    expect((await advanceRefund(deps, id)).kind).toBe('wait');
    const first = await attemptsOf(id);
    expect(first.map((a) => a.state)).toEqual(['signed']);
    // No block is mined meanwhile: same nonce, same fees, so the next signature is the same transaction.
    expect((await advanceRefund(deps, id)).kind).toBe('wait');
    expect(proxy.counts.refused).toBe(2);
    const revived = await attemptsOf(id);
    expect(revived).toHaveLength(1);
    expect(revived[0]).toMatchObject({ id: first[0]!.id, tx_hash: first[0]!.tx_hash, nonce: first[0]!.nonce, state: 'broadcast' });
    expect(revived[0]!.detail).toMatch(/signed again with identical bytes/);

    let done = '';
    for (let i = 0; i < 200 && !done; i++) {
      const step = await advanceRefund(deps, id);
      if (step.kind === 'done') done = step.status;
      else await h.node.mine(1);
    }
    expect(done).toBe('completed');
    const settled = await attemptsOf(id);
    expect(settled.map((a) => [a.tx_hash, a.state])).toEqual([[first[0]!.tx_hash, 'confirmed']]);
    const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, s.payer);
    expect(moved).toEqual([{ to: s.payer, amount: 4_000_000n, tx: first[0]!.tx_hash }]);
    const nonceRow = await h.t.db
      .selectFrom('hot_wallet_nonces')
      .select('next_nonce')
      .where('address', '=', shop.hotWallet.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(nonceRow.next_nonce).toBe(first[0]!.nonce! + 1n);
  }, 180_000);
});
