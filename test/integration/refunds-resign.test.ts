import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { acceptWalletNonce } from '../../src/ledger/outbound/wallet-nonce-guard.js';
import { advanceRefund, type PayoutEngineDeps } from '../../src/refunds/payout-engine.js';
import { transfersFrom } from '../support/chain-watch.js';
import { fund, signer } from '../support/evm-tokens/scenario.js';
import { attemptsOf as attemptsOfIn, startProxiedRefunds, type ProxiedRefunds } from '../support/proxied-refunds.js';
import { paidRefund } from '../support/paid-refund.js';
import type { FaultProxy } from '../support/rpc-fault-proxy.js';
import type { HarnessMerchant, ServiceHarness } from '../support/service-harness.js';

// A refund whose nonce was given back (the node refused the first offer of its bytes and no later nonce was handed
// out) is signed again at the same nonce. With the same fees the new signature is byte for byte the old one
// (deterministic ECDSA): the same transaction hash. The refund's dropped attempt with that hash is revived (one row,
// one transaction), never a second row (the (network, mode, tx_hash) unique key would refuse it and leave the refund
// stuck) nor a second send.
// The real payout engine on Anvil, behind a JSON-RPC proxy that plays a node refusing eth_sendRawTransaction.
let h: ServiceHarness;
let shop: HarnessMerchant;
let proxy: FaultProxy;
let adapters: ChainRegistry;
let env: ProxiedRefunds | undefined;

beforeAll(async () => {
  // In-process: API and watcher only; the payout engine is driven step by step below.
  env = await startProxiedRefunds('Resigner');
  ({ h, shop, proxy, adapters } = env);
}, 120_000);
afterAll(async () => {
  await env?.close();
});

/** A paid session of `m` and a refund of `amountMinor` against it, in USDT: its internal id and the payer. */
const refundOf = (m: HarnessMerchant, refundId: string, amount: string, amountMinor: number) =>
  paidRefund(h, m, refundId, amount, amountMinor);

/** Steps the payout engine, mining a block between steps, until the refund is done; answers its final status. */
async function payOut(deps: PayoutEngineDeps, id: string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const step = await advanceRefund(deps, id);
    if (step.kind === 'done') return step.status;
    await h.node.mine(1);
  }
  return 'not done';
}

const attemptsOf = (refundId: string) => attemptsOfIn(h, refundId);

describe('a refund signed again after its nonce was given back', () => {
  it('revives its dropped attempt with the identical bytes and pays once', async () => {
    const { id, payer } = await refundOf(shop, 'resign-1', '4.00', 400);
    const deps: PayoutEngineDeps = { db: h.t.db, adapters, signer, stuckAfterMs: 600_000, feeBumpPercent: 25, pollMs: 100 };

    // The node refuses the first offer of the bytes ("txpool is full"): a refusal that is neither "nonce too low" nor
    // an expiry, of bytes no node ever took, so the refund gives its nonce back and drops them.
    proxy.setFaults({ refuseSendRaw: 1 });
    expect((await advanceRefund(deps, id)).kind).toBe('wait');
    const first = await attemptsOf(id);
    expect(first.map((a) => [a.state, a.detail])).toEqual([['dropped', 'refused by the network before landing; nonce given back']]);
    // No block is mined meanwhile: same nonce, same fees, so the next signature is the same transaction.
    expect((await advanceRefund(deps, id)).kind).toBe('wait');
    expect(proxy.counts.refused).toBe(1);
    const revived = await attemptsOf(id);
    expect(revived).toHaveLength(1);
    expect(revived[0]).toMatchObject({ id: first[0]!.id, tx_hash: first[0]!.tx_hash, nonce: first[0]!.nonce, state: 'broadcast' });
    expect(revived[0]!.detail).toMatch(/signed again with identical bytes/);

    const done = await payOut(deps, id);
    expect(done).toBe('completed');
    const settled = await attemptsOf(id);
    expect(settled.map((a) => [a.tx_hash, a.state])).toEqual([[first[0]!.tx_hash, 'confirmed']]);
    const moved = await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer);
    expect(moved).toEqual([{ to: payer, amount: 4_000_000n, tx: first[0]!.tx_hash }]);
    const nonceRow = await h.t.db
      .selectFrom('hot_wallet_nonces')
      .select('next_nonce')
      .where('address', '=', shop.hotWallet.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(nonceRow.next_nonce).toBe(first[0]!.nonce! + 1n);
  }, 180_000);
});

// A database restored from a backup taken before the refunds hot wallet's FIRST payout has no nonce row for it: the
// wallet's first nonce must then be 0, since it sends nothing but the ledger's payouts. A chain nonce above 0 means
// transactions the ledger does not know (one may be this very refund): nothing is signed until the operator accepts.
describe('a refunds hot wallet without a nonce row whose chain nonce is above 0', () => {
  it('signs nothing until the operator accepts the chain nonce, then pays once at it', async () => {
    const m = await h.newMerchant('Restored');
    const wallet = m.hotWallet.toLowerCase();
    await h.node.rpc('anvil_setBalance', [m.hotWallet, '0x8ac7230489e80000']);
    await fund(h.tokens.USDT, m.hotWallet, 1_000_000_000n);
    // The wallet sent something the ledger does not know (here, by hand: a zero-value transfer to itself).
    await h.node.rpc('anvil_impersonateAccount', [m.hotWallet]);
    await h.node.rpc('eth_sendTransaction', [{ from: m.hotWallet, to: m.hotWallet, value: '0x0' }]);
    await h.node.rpc('anvil_stopImpersonatingAccount', [m.hotWallet]);
    await h.node.mine(1);
    expect(BigInt(await h.node.rpc<string>('eth_getTransactionCount', [m.hotWallet, 'pending']))).toBe(1n);

    const { id, payer } = await refundOf(m, 'restored-1', '3.00', 300);
    const deps: PayoutEngineDeps = {
      db: h.t.db,
      adapters: h.service.adapters,
      signer,
      stuckAfterMs: 600_000,
      feeBumpPercent: 25,
      pollMs: 100,
    };
    const step = await advanceRefund(deps, id);
    expect(step.kind).toBe('wait');
    expect(await attemptsOf(id)).toEqual([]);
    const row = () =>
      h.t.db
        .selectFrom('hot_wallet_nonces')
        .selectAll()
        .where('address', '=', wallet)
        .where('network', '=', 'ethereum')
        .executeTakeFirstOrThrow();
    expect(await row()).toMatchObject({ next_nonce: 0n, unknown_chain_nonce: 1n });
    expect((await advanceRefund(deps, id)).kind).toBe('wait'); // still nothing signed
    expect(await attemptsOf(id)).toEqual([]);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, m.hotWallet, payer)).toEqual([]);

    // The operator checked the chain (no transfer paid this refund) and accepts its nonce.
    const accepted = await acceptWalletNonce(h.t.db, { network: 'ethereum', mode: 'test', address: wallet }, 1n, {
      actor: 'ops',
      note: null,
    });
    expect(accepted).toMatchObject({ kind: 'accepted', previous: 0n, accepted: 1n });
    const done = await payOut(deps, id);
    expect(done).toBe('completed');
    const attempts = await attemptsOf(id);
    expect(attempts.map((a) => [a.nonce, a.state])).toEqual([[1n, 'confirmed']]);
    expect(await transfersFrom(h.node, h.tokens.USDT.address, m.hotWallet, payer)).toHaveLength(1);
  }, 180_000);
});

// Issue 34 item 1, through the real engine: two drivers of one refund (the worker and a duplicate job), its receipt
// landing between them. Driver A reads the attempt as signed (never offered) and offers its bytes; while A waits for
// the node's answer, driver B finds the transaction mined and final and completes the refund (the attempt confirmed).
// A then records the node's acceptance: the attempt store's guard keeps it confirmed, never `broadcast` again.
describe('two drivers of one refund, its receipt landing between them', () => {
  it("the late driver's markBroadcast leaves the confirmed attempt confirmed", async () => {
    const { id, payer } = await refundOf(shop, 'race-1', '2.00', 200);
    const deps: PayoutEngineDeps = { db: h.t.db, adapters, signer, stuckAfterMs: 600_000, feeBumpPercent: 25, pollMs: 100 };
    // A first run stopped right after storing the signed bytes: the attempt is `signed`, nothing was sent.
    const stopAfterSign = (name: string) => {
      if (name === 'outbound:after_sign') throw new Error('stopped after sign');
    };
    await expect(advanceRefund({ ...deps, failpoint: stopAfterSign }, id)).rejects.toThrow('stopped after sign');
    expect((await attemptsOf(id)).map((a) => a.state)).toEqual(['signed']);

    // Driver A's adapter hands the bytes to the node, then holds the answer until B is done.
    const real = adapters.get('ethereum', 'test')!;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let offered!: () => void;
    const reachedNode = new Promise<void>((r) => {
      offered = r;
    });
    const held = new Proxy(real, {
      get(target, p) {
        if (p === 'broadcast')
          return async (s: Parameters<typeof real.broadcast>[0]) => {
            const r = await target.broadcast(s);
            offered();
            await gate;
            return r;
          };
        const v = Reflect.get(target, p, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const driverA = advanceRefund({ ...deps, adapters: { get: () => held } as unknown as ChainRegistry }, id);
    await reachedNode;

    // Driver B: the transaction is mined and final; the refund completes, its attempt confirmed.
    expect(await payOut(deps, id)).toBe('completed');
    const [attempt] = await attemptsOf(id);
    expect(attempt!.state).toBe('confirmed');

    release();
    await driverA;
    expect((await attemptsOf(id)).map((a) => [a.tx_hash, a.state])).toEqual([[attempt!.tx_hash, 'confirmed']]);
    expect((await advanceRefund(deps, id)).kind).toBe('done');
    expect(await transfersFrom(h.node, h.tokens.USDT.address, shop.hotWallet, payer)).toEqual([
      { to: payer, amount: 2_000_000n, tx: attempt!.tx_hash },
    ]);
  }, 180_000);
});
