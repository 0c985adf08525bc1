import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Keypair, PublicKey, SystemProgram, TransactionMessage, type TransactionInstruction } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type KeyPath, type TxSigner } from '../../chains/types.js';
import { merchantAccountIndex } from '../../src/ledger/merchants/merchants.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { pauseSigner, resumeSigner } from '../../src/operations/signer.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import { withIntent } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { pollApprovals } from '../../src/subscriptions/approval-poller.js';
import { runSchedulerTick } from '../../src/subscriptions/scheduler.js';
import { plan } from './subscriptions-fixture.js';
import { signer, startSolanaSubsFixture, type SolanaSubsFixture } from './subscriptions-solana-fixture.js';

// Solana subscription charges through the signer role (docs/signer.md, "Subscription charges"): the charge engine of
// the Solana subscription fixture (LiteSVM endpoint) signs with a RemoteSigner only, so the charger's TransferChecked
// (as the customer's SPL delegate) is signed by the signer service after it read the charge, its invoice and the
// payment method. While the charge waits (the signer paused), forged messages under its intent are refused, each
// with its audit row: another recipient, another amount, another owner's account, another merchant's charger, an
// extra instruction, a revoked payment method.

let f: SolanaSubsFixture;
let server: { socketPath: string; close(): Promise<void> };
const socketPath = join(tmpdir(), `sp-signer-sol-${randomBytes(6).toString('hex')}.sock`);

beforeAll(async () => {
  f = await startSolanaSubsFixture({ start: new Date('2027-01-31T10:00:00Z') });
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

describe('Solana subscription charges through the signer', () => {
  it('refuses forged delegate transfers while the charge waits, then signs the engine’s own and the invoice is paid', async () => {
    const db = f.h.t.db;
    const customer = f.customer(100_000_000n);
    const owner = customer.publicKey.toBase58();
    const w = await f.deps.walletResolver.resolve(f.merchantId, 'test', 'solana');
    const sub = await f.create({ ...plan({}, 1), customer: 'cus_signer_sol' });
    const info = await f.select(sub.id, owner);
    await f.approve(customer, info.spender, BigInt(info.allowance_base));

    // Paused: the charge is created and asked for, refused `paused`, and waits (pending, invoice open).
    await pauseSigner(db, 'cli:test', 'hold the charge');
    f.rpc.validator.advanceSlots(33);
    await pollApprovals({ ...f.deps, authorizationCheckMs: 0 });
    for (let i = 0; i < 3; i++) await runSchedulerTick(f.deps);
    const charge = await db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', sub.id).executeTakeFirstOrThrow();
    expect(charge.state).toBe('pending');
    expect((await listSignerAudit(db, { limit: 1 }))[0]).toMatchObject({
      outcome: 'refused',
      code: 'paused',
      purpose: 'subscription_charge',
    });
    await resumeSigner(db, 'cli:test');

    const chargeId = String(charge.id);
    const amount = charge.amount_base;
    const mint = new PublicKey(f.mints.USDT);
    const ata = (who: string, m = mint) => getAssociatedTokenAddressSync(m, new PublicKey(who), true);
    /** The charge as the sender compiles it (idempotent ATA creation, TransferChecked by the delegate), with changes. */
    const message = (
      o: Partial<{
        payer: string;
        from: string;
        to: string;
        amount: bigint;
        decimals: number;
        m: PublicKey;
        extra: TransactionInstruction;
      }> = {},
    ) => {
      const payer = new PublicKey(o.payer ?? w.charger);
      const to = o.to ?? w.settlement;
      const m = o.m ?? mint;
      const instructions = [
        createAssociatedTokenAccountIdempotentInstruction(payer, ata(to, m), new PublicKey(to), m),
        createTransferCheckedInstruction(ata(o.from ?? owner, m), m, ata(to, m), payer, o.amount ?? amount, o.decimals ?? 6),
        ...(o.extra ? [o.extra] : []),
      ];
      const recentBlockhash = Keypair.generate().publicKey.toBase58();
      return new TransactionMessage({ payerKey: payer, recentBlockhash, instructions }).compileToV0Message().serialize();
    };
    const remote = withIntent(new RemoteSigner(socketPath) as unknown as TxSigner, { purpose: 'subscription_charge', charge_id: chargeId });
    const refusedWith = async (bytes: Uint8Array, code: string, key: KeyPath = w.chargerKey.key) => {
      const err = await remote.signEd25519(key, bytes).then(
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
        network: 'solana',
      });
      return row!;
    };

    const stranger = Keypair.generate().publicKey.toBase58();
    await refusedWith(message({ to: stranger }), 'wrong_recipient');
    await refusedWith(message({ to: owner }), 'wrong_recipient'); // back to the customer: not the settlement address
    await refusedWith(message({ amount: amount + 1n }), 'wrong_amount');
    await refusedWith(message({ from: Keypair.generate().publicKey.toBase58() }), 'wrong_key'); // another owner's account
    await refusedWith(message({ payer: w.settlement }), 'wrong_key'); // the charger is not the fee payer / authority
    await refusedWith(message({ m: new PublicKey(f.mints.USDC) }), 'wrong_recipient'); // another mint's account created
    await refusedWith(message({ decimals: 9 }), 'wrong_contract');
    const drain = SystemProgram.transfer({ fromPubkey: new PublicKey(w.charger), toPubkey: new PublicKey(stranger), lamports: 1_000_000 });
    await refusedWith(message({ extra: drain }), 'wrong_method');
    // A CloseAccount riding along (the charger's own token account, its rent to a stranger): no charge closes anything.
    const close = createCloseAccountInstruction(ata(w.charger), new PublicKey(stranger), new PublicKey(w.charger));
    await refusedWith(message({ extra: close }), 'wrong_method');
    const other = await f.h.merchant('Another Solana shop');
    const otherCharger = await f.adapter.deriveHotWallet(
      signer,
      await merchantAccountIndex(db, other.merchantId, 'test'),
      HOT_WALLET_SLOT.charges,
    );
    await refusedWith(message({ payer: otherCharger.address }), 'wrong_key', otherCharger.key);
    await db.updateTable('payment_methods').set({ status: 'revoked' }).where('owner_address', '=', owner).execute();
    await refusedWith(message(), 'not_payable');
    await db.updateTable('payment_methods').set({ status: 'active' }).where('owner_address', '=', owner).execute();

    // The engine's own TransferChecked, through the RemoteSigner: signed, landed, the invoice paid.
    await f.settle();
    const settled = await db.selectFrom('subscription_charges').selectAll().where('id', '=', charge.id).executeTakeFirstOrThrow();
    expect(settled.state).toBe('succeeded');
    expect(await f.tokenBalance(f.mints.USDT, w.settlement)).toBe(amount);
    const signed = await db
      .selectFrom('signer_audit')
      .selectAll()
      .where('purpose', '=', 'subscription_charge')
      .where('outcome', '=', 'signed')
      .execute();
    expect(signed).toHaveLength(1);
    expect(signed[0]).toMatchObject({
      merchant_id: f.merchantId,
      network: 'solana',
      key_path: `ed25519:${w.chargerKey.key.path}`,
      summary: { to: w.settlement, token: 'USDT', amount_base: String(amount) },
      amount_base: amount,
    });
    // A settled charge is not signed again.
    await refusedWith(message(), 'not_payable');
  }, 120_000);
});
