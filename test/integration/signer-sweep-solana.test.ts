import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createCloseAccountInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  type TransactionInstruction,
} from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { HOT_WALLET_SLOT, OPERATOR_SLOT, type KeyPath, type SweepRequest, type Wallet } from '../../chains/types.js';
import { merchantAccountIndex } from '../../src/ledger/merchants/merchants.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { depositWallet } from '../../src/treasury/wallets.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { createMerchant, signer } from '../support/evm-tokens/scenario.js';
import { driveThroughSigner, persistSweep, stepSigner } from '../support/signer-sweep.js';

// Solana sweep steps through the signer role (docs/signer.md, "Sweep steps"): a sweep planned by the real
// 'solana-fee-payer' method on the LiteSVM endpoint, persisted as the ledger's sweep; its batch (gas station fee payer,
// each deposit owner signing its TransferChecked) and its close (CloseAccount, rent to the gas station) built by the
// method and signed key by key through a RemoteSigner under the step's intent. Forged batches and closes under the
// same intents are refused, each audited: tokens to a stranger or over the plan, a deposit that is not the sweep's,
// another fee payer, an extra instruction, rent to another account.

let t: TestDatabase;
let rpc: FakeSolanaRpc;
let conn: Connection;
let adapter: SolanaChainAdapter;
let server: { socketPath: string; close(): Promise<void> };
let shop: { id: string; account: number };
let gasStation: Wallet;
let hot: Wallet;
let nextIndex = 0n;
const MINT = Keypair.generate().publicKey.toBase58();
const socketPath = join(tmpdir(), `sp-signer-ssw-${randomBytes(6).toString('hex')}.sock`);
const tick = async () => void rpc.validator.advanceSlots(33);
const ata = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(MINT), new PublicKey(owner), true);

beforeAll(async () => {
  [t, rpc] = await Promise.all([createTestDatabase(), startFakeSolanaRpc()]);
  conn = new Connection(rpc.url, 'confirmed');
  rpc.validator.createMint({ address: MINT, decimals: 6 });
  adapter = new SolanaChainAdapter({ mode: 'test', rpcUrl: rpc.url, tokens: [{ symbol: 'USDC', address: MINT, decimals: 6 }] });
  gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  rpc.validator.airdrop(gasStation.address, 10n * BigInt(LAMPORTS_PER_SOL));
  const m = await createMerchant(t.db);
  shop = { id: m.id, account: await merchantAccountIndex(t.db, m.id, 'test') };
  hot = await adapter.deriveHotWallet(signer, shop.account, HOT_WALLET_SLOT.refunds);
  server = await startSignerServer({
    db: t.db,
    signer,
    adapters: new ChainRegistry([adapter]),
    socketPath,
    limits: { refundPerHour: '1000', refundPerDay: '1000' },
    log: createLogger('silent'),
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await rpc?.close();
  await t?.destroy();
});

/** A deposit address of the merchant holding `amount` USDC in its ATA, with its key as the treasury derives it. */
async function deposit(amount: bigint): Promise<Wallet & { amount: bigint }> {
  const index = nextIndex++;
  const address = await adapter.deriveDepositAddress(signer, shop.account, index);
  const w = await depositWallet(adapter, signer, shop.account, index, address);
  if ('error' in w) throw new Error(w.error);
  rpc.validator.setTokenAccount({ mint: MINT, owner: address, amount });
  return { ...w, amount };
}

const tokenBalance = async (owner: string): Promise<bigint | null> => {
  const info = await conn.getAccountInfo(ata(owner), 'confirmed');
  return info ? info.data.readBigUInt64LE(64) : null;
};

const compile = (payer: string, instructions: TransactionInstruction[]) =>
  new TransactionMessage({ payerKey: new PublicKey(payer), recentBlockhash: Keypair.generate().publicKey.toBase58(), instructions })
    .compileToV0Message()
    .serialize();
const pk = (a: string) => new PublicKey(a);

describe('Solana sweep steps through the signer', () => {
  it('refuses forged batches and closes with their audit rows; signs the method’s own batch and close, key by key', async () => {
    const [a, b] = [await deposit(2_000_000n), await deposit(3_500_000n)];
    const outsider = await deposit(1_000_000n); // the merchant's own deposit, not in this sweep
    const request: SweepRequest = {
      token: 'USDC',
      sources: [a, b].map((s) => ({ key: s.key, address: s.address, amount: s.amount })),
      destination: hot.address,
      gasStation,
    };
    const method = adapter.sweepMethods().find((m) => m.method === 'solana-fee-payer')!;
    const plan = await method.plan(request);
    expect(plan.steps.map((s) => s.purpose)).toEqual(['batch', 'close']);
    const sweep = await persistSweep(t.db, { merchantId: shop.id, network: 'solana', method: method.method, request, plan });
    const stepId = (purpose: string) => sweep.steps.find((s) => s.purpose === purpose)!.id;

    /** The batch as the method compiles it (creation of the destination's ATA, one transfer per source), changed. */
    const batch = (
      o: Partial<{
        payer: string;
        to: string;
        create: string;
        sources: Array<{ address: string; amount: bigint }>;
        extra: TransactionInstruction;
      }> = {},
    ) => {
      const payer = o.payer ?? gasStation.address;
      const to = o.to ?? hot.address;
      const create = o.create ?? to;
      return compile(payer, [
        createAssociatedTokenAccountIdempotentInstruction(pk(payer), ata(create), pk(create), pk(MINT)),
        ...(o.sources ?? [a, b]).map((s) =>
          createTransferCheckedInstruction(ata(s.address), pk(MINT), ata(to), pk(s.address), s.amount, 6),
        ),
        ...(o.extra ? [o.extra] : []),
      ]);
    };
    const close = (o: Partial<{ rentTo: string; owners: string[] }> = {}) =>
      compile(
        gasStation.address,
        (o.owners ?? [a.address, b.address]).map((owner) =>
          createCloseAccountInstruction(ata(owner), pk(o.rentTo ?? gasStation.address), pk(owner)),
        ),
      );
    const refusedWith = async (purpose: string, message: Uint8Array, code: string, key: KeyPath = gasStation.key) => {
      const err = await stepSigner(socketPath, sweep.id, stepId(purpose))
        .signEd25519(key, message)
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(err, `${purpose} → ${code}`).toBeInstanceOf(SignerRefusedError);
      expect((err as SignerRefusedError).code, purpose).toBe(code);
      const [row] = await listSignerAudit(t.db, { limit: 1 });
      expect(row).toMatchObject({ outcome: 'refused', code, purpose: 'sweep_step', merchant_id: shop.id, network: 'solana' });
      return row!;
    };
    const stranger = Keypair.generate().publicKey.toBase58();

    const row = await refusedWith('batch', batch({ to: stranger }), 'wrong_recipient');
    expect(row.summary).toMatchObject({ amount_base: String(a.amount + b.amount) });
    await refusedWith('batch', batch({ create: stranger }), 'wrong_recipient'); // creates a stranger's account
    await refusedWith('batch', batch({ sources: [{ address: a.address, amount: a.amount + 1n }, b] }), 'wrong_amount');
    await refusedWith('batch', batch({ sources: [a, outsider] }), 'wrong_key'); // a deposit that is not this sweep's
    await refusedWith('batch', batch({ payer: hot.address }), 'wrong_key'); // another fee payer
    await refusedWith('batch', batch(), 'wrong_key', outsider.key); // asked with a key that does not sign this batch
    const drain = SystemProgram.transfer({ fromPubkey: pk(gasStation.address), toPubkey: pk(stranger), lamports: 1_000_000 });
    await refusedWith('batch', batch({ extra: drain }), 'wrong_method');
    await refusedWith(
      'batch',
      batch({ extra: createCloseAccountInstruction(ata(a.address), pk(stranger), pk(a.address)) }),
      'wrong_method',
    );
    await refusedWith('close', close({ rentTo: stranger }), 'wrong_recipient', a.key);
    await refusedWith('close', close({ owners: [a.address, outsider.address] }), 'wrong_key');
    await refusedWith('close', batch(), 'wrong_method'); // token transfers under the close's intent

    // The method's own batch and close, signed through the signer by the gas station and each deposit key.
    const driven = await driveThroughSigner({ adapter, method, request, plan, sweepId: sweep.id, steps: sweep.steps }, socketPath, tick);
    expect(driven.map((d) => [d.purpose, d.outcome?.status])).toEqual([
      ['batch', 'succeeded'],
      ['close', 'succeeded'],
    ]);
    expect(await tokenBalance(hot.address)).toBe(a.amount + b.amount);
    expect([await tokenBalance(a.address), await tokenBalance(b.address)]).toEqual([null, null]); // closed
    const signed = await t.db
      .selectFrom('signer_audit')
      .select(['intent', 'summary', 'amount_base', 'key_path'])
      .where('outcome', '=', 'signed')
      .where('purpose', '=', 'sweep_step')
      .execute();
    const byStep = (p: string) => signed.filter((s) => (s.intent as { step_id: string }).step_id === stepId(p));
    const keysOf = (p: string) =>
      byStep(p)
        .map((s) => s.key_path)
        .sort();
    const expected = [gasStation, a, b].map((w) => `ed25519:${w.key.path}`).sort();
    expect(keysOf('batch')).toEqual(expected);
    expect(keysOf('close')).toEqual(expected);
    for (const s of byStep('batch'))
      expect(s).toMatchObject({
        summary: { to: hot.address, token: 'USDC', amount_base: String(a.amount + b.amount) },
        amount_base: a.amount + b.amount,
      });
    for (const s of byStep('close')) expect(s).toMatchObject({ summary: { to: gasStation.address, token: 'SOL' }, amount_base: 0n });
  }, 120_000);
});
