import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interface, getBytes, sha256 } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { tronToEvmHex } from '../../chains/tron/address.js';
import { encodeTriggerRawData } from '../../chains/tron/protobuf.js';
import { HOT_WALLET_SLOT, type KeyPath, type TxSigner } from '../../chains/types.js';
import { merchantAccountIndex } from '../../src/ledger/merchants/merchants.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { pauseSigner, resumeSigner } from '../../src/operations/signer.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import { withIntent } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import { signer } from '../support/evm-tokens/scenario.js';
import { plan } from './subscriptions-fixture.js';
import { startTronSubsFixture, type TronSubsFixture } from './subscriptions-tron-fixture.js';

// TRON subscription charges through the signer role (docs/signer.md, "Subscription charges"): the charge engine of
// the TRON subscription fixture (fake java-tron on Anvil) signs with a RemoteSigner only, so the charger's
// transferFrom is signed by the signer service after it read the charge, its invoice and the payment method. While
// the charge waits (the signer paused), forged transactions under its intent are refused, each with its audit row:
// another recipient, another amount, another owner's tokens, another merchant's charger, a revoked payment method.

const ERC20 = new Interface(['function transferFrom(address,address,uint256)', 'function transfer(address,uint256)']);

let f: TronSubsFixture;
let server: { socketPath: string; close(): Promise<void> };
const socketPath = join(tmpdir(), `sp-signer-tron-${randomBytes(6).toString('hex')}.sock`);

beforeAll(async () => {
  f = await startTronSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
  server = await startSignerServer({
    db: f.h.t.db,
    signer,
    adapters: new ChainRegistry([f.adapter]),
    socketPath,
    limits: { refundPerHour: '1000', refundPerDay: '1000' },
    log: createLogger('silent'),
  });
  // The service holds no key: every signature of the charge engine is asked of the signer.
  f.deps.signer = new RemoteSigner(socketPath) as unknown as TxSigner;
}, 120_000);
afterAll(async () => {
  await server?.close();
  await f?.close();
});

describe('TRON subscription charges through the signer', () => {
  it('refuses forged transferFroms while the charge waits, then signs the engine’s own and the invoice is paid', async () => {
    const db = f.h.t.db;
    const customer = await f.customer(41, { usdt: 100_000_000n });
    const sub = await f.create({ ...plan({}, 1), customer: 'cus_signer_tron' });

    // Paused: the charge is created and asked for, refused `paused`, and waits (pending, invoice open).
    await pauseSigner(db, 'cli:test', 'hold the charge');
    await f.authorize(sub.id, customer);
    await f.node.rpc('anvil_mine', ['0x3']);
    await pollApprovals({ ...f.deps, initialLookback: 10_000n });
    for (let i = 0; i < 3; i++) await runSchedulerTick(f.deps);
    const charge = await db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', sub.id).executeTakeFirstOrThrow();
    expect(charge.state).toBe('pending');
    const paused = await listSignerAudit(db, { limit: 1 });
    expect(paused[0]).toMatchObject({ outcome: 'refused', code: 'paused', purpose: 'subscription_charge' });
    await resumeSigner(db, 'cli:test');

    const chargeId = String(charge.id);
    const { charger, settlement } = f.wallets;
    const chargerKey = (await f.deps.walletResolver.resolve(f.merchantId, 'test', 'tron')).chargerKey.key;
    const token = f.adapter.tokens.find((t) => t.symbol === 'USDT')!.address;
    const amount = charge.amount_base;
    const call = (o: { owner?: string; to?: string; amount?: bigint }) =>
      ERC20.encodeFunctionData('transferFrom', [
        tronToEvmHex(o.owner ?? customer.address),
        tronToEvmHex(o.to ?? settlement),
        o.amount ?? amount,
      ]).slice(2);
    const raw = (o: { from?: string; data?: string; contract?: string }) =>
      encodeTriggerRawData({
        refBlockBytes: 'abcd',
        refBlockHash: '11'.repeat(8),
        expiration: 1_900_000_000_000n,
        timestamp: 1_899_999_940_000n,
        feeLimit: 30_000_000n,
        owner: o.from ?? charger,
        contract: o.contract ?? token,
        callValue: 0n,
        data: o.data ?? call({}),
      });
    const remote = withIntent(new RemoteSigner(socketPath) as unknown as TxSigner, { purpose: 'subscription_charge', charge_id: chargeId });
    const ask = (rawDataHex: string, key: KeyPath = chargerKey) =>
      remote.signSecp256k1Digest(key, getBytes(sha256(`0x${rawDataHex}`)), { kind: 'tron-transaction', rawDataHex });
    const refusedWith = async (rawDataHex: string, code: string, key?: KeyPath) => {
      const err = await ask(rawDataHex, key).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, code).toBeInstanceOf(SignerRefusedError);
      expect((err as SignerRefusedError).code).toBe(code);
      const [row] = await listSignerAudit(db, { limit: 1 });
      expect(row).toMatchObject({
        outcome: 'refused',
        code,
        purpose: 'subscription_charge',
        intent: { charge_id: chargeId },
        merchant_id: f.merchantId,
        network: 'tron',
      });
      return row!;
    };

    const stranger = `41${'22'.repeat(20)}`;
    const wrongTo = await refusedWith(raw({ data: call({ to: stranger }) }), 'wrong_recipient');
    expect(wrongTo).toMatchObject({ summary: { to: stranger, amount_base: String(amount) } });
    // The customer's own address is not the settlement address either.
    await refusedWith(raw({ data: call({ to: customer.address }) }), 'wrong_recipient');
    await refusedWith(raw({ data: call({ amount: amount + 1n }) }), 'wrong_amount');
    await refusedWith(raw({ data: call({ owner: `41${'33'.repeat(20)}` }) }), 'wrong_key');
    await refusedWith(raw({ from: settlement }), 'wrong_key'); // sent by another wallet than the charger
    await refusedWith(raw({ contract: `41${'44'.repeat(20)}` }), 'wrong_contract');
    await refusedWith(raw({ data: ERC20.encodeFunctionData('transfer', [tronToEvmHex(settlement), amount]).slice(2) }), 'wrong_method');
    // Another merchant's charger key, and the merchant's own refunds key: not this charge's charger.
    const other = await f.h.merchant('Another TRON shop');
    const otherCharger = await f.adapter.deriveHotWallet(
      signer,
      await merchantAccountIndex(db, other.merchantId, 'test'),
      HOT_WALLET_SLOT.charges,
    );
    await refusedWith(raw({ from: otherCharger.address }), 'wrong_key', otherCharger.key);
    // The customer revoked the authorization: nothing is signed for it, however well formed.
    await db.updateTable('payment_methods').set({ status: 'revoked' }).where('owner_address', '=', charge.owner_address).execute();
    await refusedWith(raw({}), 'not_payable');
    await db.updateTable('payment_methods').set({ status: 'active' }).where('owner_address', '=', charge.owner_address).execute();

    // The engine's own transferFrom, through the RemoteSigner: signed, broadcast, the invoice paid.
    await f.settle();
    const settled = await db.selectFrom('subscription_charges').selectAll().where('id', '=', charge.id).executeTakeFirstOrThrow();
    expect(settled.state).toBe('succeeded');
    const signed = await db
      .selectFrom('signer_audit')
      .selectAll()
      .where('purpose', '=', 'subscription_charge')
      .where('outcome', '=', 'signed')
      .execute();
    expect(signed).toHaveLength(1);
    expect(signed[0]).toMatchObject({
      merchant_id: f.merchantId,
      network: 'tron',
      key_path: `secp256k1:${chargerKey.path}`,
      summary: { to: settlement, token: 'USDT', amount_base: String(amount) },
      amount_base: amount,
    });
    // A settled charge is not signed again, even its own transaction.
    await refusedWith(raw({}), 'not_payable');
  }, 120_000);
});
