import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { advanceRefund, type PayoutEngineDeps } from '../../src/refunds/payout-engine.js';
import { transfersFrom } from '../support/chain-watch.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { attemptsOf as attemptsOfIn, REFUND_WALLET_GAS, startProxiedRefunds, type ProxiedRefunds } from '../support/proxied-refunds.js';
import type { FaultProxy } from '../support/rpc-fault-proxy.js';
import { paidRefund } from '../support/paid-refund.js';
import type { HarnessMerchant, ServiceHarness } from '../support/service-harness.js';

// A refusal is not a death (docs/outbound.md). A refund's bytes were taken by the node, which then forgot them (evicted
// from its pool) and refuses them when they are offered again. Other nodes may still hold them, so the refund keeps
// its nonce and its attempt: it is neither failed in a fresh pre-flight (the wallet has no ETH left meanwhile) nor
// signed at another nonce; it is replaced at the SAME nonce once stuck, and pays once. The engine before this rule
// gave the nonce back here, and the pre-flight then failed the refund while its bytes could still land.
// The real payout engine on Anvil, behind a JSON-RPC proxy that plays the refusing node.
let h: ServiceHarness;
let shop: HarnessMerchant;
let proxy: FaultProxy;
let adapters: ChainRegistry;
let env: ProxiedRefunds | undefined;
const GAS = REFUND_WALLET_GAS;

beforeAll(async () => {
  env = await startProxiedRefunds('Reoffer');
  ({ h, shop, proxy, adapters } = env);
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const attemptsOf = (refundId: string) => attemptsOfIn(h, refundId);
const refundRow = (id: string) => h.t.db.selectFrom('refunds').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const nextNonce = async () =>
  (
    await h.t.db
      .selectFrom('hot_wallet_nonces')
      .select('next_nonce')
      .where('network', '=', 'ethereum')
      .where('address', '=', shop.hotWallet.toLowerCase())
      .executeTakeFirstOrThrow()
  ).next_nonce;

describe('a refund whose node forgot its bytes and refuses them again', () => {
  it('keeps its nonce and attempt (no fresh pre-flight, no failure), is replaced at the same nonce once stuck, pays once', async () => {
    const { id, payer } = await paidRefund(h, shop, 'reoffer-1', '3.00', 300);
    const patient: PayoutEngineDeps = { db: h.t.db, adapters, signer, stuckAfterMs: 600_000, feeBumpPercent: 25, pollMs: 100 };

    // Signed and taken by the node; then the node forgets it (evicted from its pool before any block: blocks are
    // mined only when the test says so from here on).
    await h.node.rpc('evm_setAutomine', [false]);
    expect((await advanceRefund(patient, id)).kind).toBe('wait');
    const [a] = await attemptsOf(id);
    expect(a).toMatchObject({ state: 'broadcast' });
    const nonce = a!.nonce!;
    expect(await nextNonce()).toBe(nonce + 1n);
    await h.node.rpc('anvil_dropTransaction', [a!.tx_hash]);
    expect(await h.node.rpc('eth_getTransactionByHash', [a!.tx_hash])).toBeNull();

    // Offered again and refused, three steps running, while the wallet has no ETH for a fresh pre-flight.
    await h.node.rpc('anvil_setBalance', [shop.hotWallet, '0x0']);
    proxy.setFaults({ refuseSendRaw: 3 });
    for (let i = 0; i < 3; i++) expect((await advanceRefund(patient, id)).kind).toBe('wait');
    expect(proxy.counts.refused).toBe(3);
    expect(await attemptsOf(id)).toEqual([expect.objectContaining({ id: a!.id, tx_hash: a!.tx_hash, state: 'broadcast', nonce })]);
    expect(await nextNonce()).toBe(nonce + 1n);
    expect((await refundRow(id)).status).not.toBe('failed');

    // Gas back, and stuck for longer than stuckAfterMs: the same bytes refused once more, so a replacement at the
    // same nonce with 25 % more fee is signed and taken.
    await h.node.rpc('anvil_setBalance', [shop.hotWallet, `0x${GAS.toString(16)}`]);
    proxy.setFaults({ refuseSendRaw: 1 });
    expect((await advanceRefund({ ...patient, stuckAfterMs: 0 }, id)).kind).toBe('wait');
    expect(proxy.counts.refused).toBe(4);
    const both = await attemptsOf(id);
    expect(both).toHaveLength(2);
    expect(both[1]).toMatchObject({ nonce, state: 'broadcast', fee_bump_percent: 25 });
    expect(await nextNonce()).toBe(nonce + 1n);

    // Mined: the replacement lands, the original is dropped as "nonce too low", the refund completes once.
    let status = 'processing';
    for (let i = 0; i < 60 && status !== 'completed' && status !== 'failed'; i++) {
      await h.node.mine(1);
      const step = await advanceRefund(patient, id);
      if (step.kind === 'done') status = step.status;
    }
    expect(status).toBe('completed');
    const settled = await attemptsOf(id);
    expect(settled.map((x) => [x.tx_hash, x.state])).toEqual([
      [a!.tx_hash, 'dropped'],
      [both[1]!.tx_hash, 'confirmed'],
    ]);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toEqual([
      { to: payer, amount: 3_000_000n, tx: both[1]!.tx_hash },
    ]);
    expect((await refundRow(id)).transaction_hash).toBe(both[1]!.tx_hash);
  }, 180_000);
});
