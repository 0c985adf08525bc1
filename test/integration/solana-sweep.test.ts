// Sweep method 'solana-fee-payer' (chains/solana/sweep.ts) on the LiteSVM endpoint, driven by the non-persistent sweep
// driver: the operator's gas station pays the fee, each deposit owner signs its TransferChecked and the close of its
// emptied token account, rent back to the gas station; the destination's ATA is created idempotently when missing.
// Every figure is read back from the chain (token accounts, lamports, landed transactions), never from the plan.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ACCOUNT_SIZE,
  ASSOCIATED_TOKEN_PROGRAM_ID,
  AccountLayout,
  AccountState,
  TOKEN_PROGRAM_ID,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { solanaDepositKeyPath } from '../../chains/solana/keys.js';
import { MAX_TRANSACTION_BYTES } from '../../chains/solana/sweep.js';
import { OPERATOR_SLOT, isSweeper, type SweepMethodImpl, type SweepRequest, type SweepSource, type Wallet } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { driveSweep, type DrivenStep } from '../support/sweep-driver.js';

const signer = new MnemonicSigner('test test test test test test test test test test test junk');
const MERCHANT_ACCOUNT = 1;

let rpc: FakeSolanaRpc;
let conn: Connection;
let adapter: SolanaChainAdapter;
let gasStation: Wallet;
let rent: bigint;
const mints = { USDC: Keypair.generate().publicKey.toBase58(), USDT: Keypair.generate().publicKey.toBase58() };
let nextIndex = 0n;

const ata = (mint: string, owner: string) => getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true);
const lamportsOf = async (address: string) => BigInt(await conn.getBalance(new PublicKey(address), 'confirmed'));
const tokenBalance = async (mint: string, owner: string): Promise<bigint | null> => {
  const info = await conn.getAccountInfo(ata(mint, owner), 'confirmed');
  return info ? info.data.readBigUInt64LE(64) : null;
};
/** Lets every landed transaction reach `finalized` (32 slots behind) between the driver's polls. */
const finalize = async () => void rpc.validator.advanceSlots(33);

/** Fresh deposit owners (the merchant's deposit keys) holding `amounts` of USDC in their ATAs. */
async function deposits(amounts: bigint[], mint = mints.USDC): Promise<SweepSource[]> {
  const out: SweepSource[] = [];
  for (const amount of amounts) {
    const index = nextIndex++;
    const address = await adapter.deriveDepositAddress(signer, MERCHANT_ACCOUNT, index);
    const key = solanaDepositKeyPath(MERCHANT_ACCOUNT, index);
    rpc.validator.setTokenAccount({ mint, owner: address, amount });
    out.push({ key, address, amount });
  }
  return out;
}

/** Rewrites a deposit's token account in place: frozen by the mint, or with a close authority other than its owner. */
async function rewriteAccount(owner: string, change: { frozen?: boolean; closeAuthority?: string }): Promise<void> {
  const address = ata(mints.USDC, owner);
  const info = (await conn.getAccountInfo(address, 'confirmed'))!;
  const acc = AccountLayout.decode(info.data);
  const data = Buffer.alloc(ACCOUNT_SIZE);
  AccountLayout.encode(
    {
      ...acc,
      state: change.frozen ? AccountState.Frozen : acc.state,
      closeAuthorityOption: change.closeAuthority ? 1 : acc.closeAuthorityOption,
      closeAuthority: change.closeAuthority ? new PublicKey(change.closeAuthority) : acc.closeAuthority,
    },
    data,
  );
  rpc.validator.setAccount({ address: address.toBase58(), lamports: BigInt(info.lamports), data, owner: TOKEN_PROGRAM_ID.toBase58() });
}

function request(sources: SweepSource[], destination: string, token: 'USDC' | 'USDT' = 'USDC'): SweepRequest {
  return { token, sources, destination, gasStation };
}

async function sweep(req: SweepRequest, method: SweepMethodImpl = adapter.sweep) {
  const res = await driveSweep(adapter, method, signer, req, { tick: finalize, pollMs: 5 });
  for (const s of res.steps) expect(s.outcome?.status, s.outcome?.status === 'failed' ? s.outcome.detail : '').toBe('succeeded');
  return res;
}

/** Serialized sizes of the landed transactions: every one within a packet. */
async function landedSizes(steps: DrivenStep[]): Promise<number[]> {
  const sizes: number[] = [];
  for (const s of steps) {
    const tx = await conn.getTransaction(s.hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    sizes.push(1 + 64 * tx!.transaction.signatures.length + tx!.transaction.message.serialize().length);
  }
  for (const size of sizes) expect(size).toBeLessThanOrEqual(MAX_TRANSACTION_BYTES);
  return sizes;
}

/** As few transactions as fit: one more source (at least a signature, an owner key, a token account key and a
 * 17-byte TransferChecked: 145 bytes) would not have fitted in any batch but the last. */
function expectFullBatches(sizes: number[]): void {
  for (const size of sizes.slice(0, -1)) expect(size + 145).toBeGreaterThan(MAX_TRANSACTION_BYTES);
}

const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);
const receipts = (steps: DrivenStep[]) => steps.map((s) => s.receipt!);
const batchesOf = <T extends { purpose: string }>(steps: T[]) => steps.filter((s) => s.purpose === 'batch');
const closesOf = <T extends { purpose: string }>(steps: T[]) => steps.filter((s) => s.purpose === 'close');
/** Signatures of a step's transaction: the fee payer's and each deposit owner's (moved or closed). */
const signatures = (s: DrivenStep['step']) => 1 + (s.purpose === 'close' ? s.params.close!.split(',').length : s.sources.length);

beforeAll(async () => {
  rpc = await startFakeSolanaRpc();
  conn = new Connection(rpc.url, 'confirmed');
  rpc.validator.createMint({ address: mints.USDC, decimals: 6 });
  rpc.validator.createMint({ address: mints.USDT, decimals: 6 });
  adapter = new SolanaChainAdapter({
    mode: 'test',
    rpcUrl: rpc.url,
    tokens: [
      { symbol: 'USDC', address: mints.USDC, decimals: 6 },
      { symbol: 'USDT', address: mints.USDT, decimals: 6 },
    ],
  });
  gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  rpc.validator.airdrop(gasStation.address, 10n * BigInt(LAMPORTS_PER_SOL));
  rent = BigInt(await conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE));
});

afterAll(async () => {
  await rpc?.close();
});

describe('Solana sweep (fee payer, rent back)', () => {
  it('is a Sweeper whose gas station is the operator wallet m/44/501/0/1/0', async () => {
    expect(isSweeper(adapter)).toBe(true);
    expect(adapter.sweepMethods().map((m) => m.method)).toEqual(['solana-fee-payer']);
    expect(await adapter.sweep.available()).toEqual({ ok: true });
    expect(gasStation.key.path).toBe("m/44'/501'/0'/1'/0'");
    expect(gasStation.address).toBe(await adapter.deriveHotWallet(signer, 0, 0).then((w) => w.address));
  });

  it('sweeps 14 deposits in as few transactions as fit, closes them, creates the destination ATA once, rent back exact', async () => {
    const amounts = Array.from({ length: 14 }, (_v, i) => 1_000_000n + BigInt(i) * 1_234_567n);
    const held = await deposits(amounts);
    const treasury = Keypair.generate().publicKey.toBase58();
    expect(await conn.getAccountInfo(ata(mints.USDC, treasury))).toBeNull();
    // The planner's amounts: the balances at the final commitment.
    const finalBalances = await adapter.finalTokenBalances(
      'USDC',
      held.map((s) => s.address),
    );
    expect(finalBalances).toEqual(amounts);
    const sources = held.map((s, i) => ({ ...s, amount: finalBalances[i]! }));
    const gasBefore = await lamportsOf(gasStation.address);

    const { plan, steps } = await sweep(request(sources, treasury));

    // 1232 bytes hold 5 deposits with the ATA creation, 6 without: every batch of the plan creates the missing ATA
    // (batches of group 0 land in any order), so 14 deposits take 3 transactions (5 + 5 + 4); then, in group 1, one
    // close transaction per batch closes the accounts it emptied.
    expect(plan.skipped).toEqual([]);
    expect(batchesOf(plan.steps).map((s) => s.sources.length)).toEqual([5, 5, 4]);
    expect(batchesOf(plan.steps).every((s) => s.group === 0 && s.params.createDestination === 'true')).toBe(true);
    expect(closesOf(plan.steps).map((s) => [s.group, s.sources.length, s.params.close])).toEqual(
      batchesOf(plan.steps).map((b) => [1, 0, b.sources.join(',')]),
    );
    expect(plan.steps).toHaveLength(6);
    expect(plan.estimatedCost).toBe(rent + sum(plan.steps.map((s) => s.estimatedFee)));
    const sizes = await landedSizes(steps); // batches first (group 0), then the closes (group 1)
    for (const s of steps) {
      const tx = await conn.getTransaction(s.hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
      expect(tx!.transaction.signatures.length).toBe(signatures(s.step)); // fee payer + each deposit owner
      expect(tx!.transaction.message.staticAccountKeys[0]!.toBase58()).toBe(gasStation.address);
      expect(tx!.meta!.computeUnitsConsumed!).toBeLessThanOrEqual(Number(s.step.params.computeUnitLimit));
      expect(s.receipt!.fee).toBeLessThanOrEqual(s.step.estimatedFee);
    }

    // The first batch (with the creation) is full; the driver builds a batch only once the previous one landed, so the
    // later ones found the ATA and left the creation out (build re-reads the chain: fewer bytes, no rent).
    expectFullBatches(sizes.slice(0, 2));
    const ataProgram = ASSOCIATED_TOKEN_PROGRAM_ID.toBase58();
    const programsOf = async (hash: string) =>
      (await conn.getTransaction(hash, {
        commitment: 'confirmed',
        maxSupportedTransactionVersion: 0,
      }))!.transaction.message.staticAccountKeys.map((k) => k.toBase58());
    expect(await programsOf(steps[0]!.hash!)).toContain(ataProgram);
    for (const s of steps.slice(1)) expect(await programsOf(s.hash!)).not.toContain(ataProgram);
    expect(steps.map((s) => s.step.purpose)).toEqual(['batch', 'batch', 'batch', 'close', 'close', 'close']);

    // Tokens: every deposit emptied into the treasury's new ATA; the receipts say exactly that.
    expect(await tokenBalance(mints.USDC, treasury)).toBe(sum(amounts));
    const swept = receipts(steps).flatMap((r) => r.swept);
    expect(swept).toEqual(sources.map((s) => ({ source: s.address, amount: s.amount })));
    expect(receipts(steps).every((r) => r.elsewhere === 0n && r.energy === 0n)).toBe(true);
    // Deposit token accounts closed; their rent came back to the gas station.
    for (const s of sources) expect(await conn.getAccountInfo(ata(mints.USDC, s.address))).toBeNull();
    const rentBack = sum(receipts(steps).map((r) => r.nativeMoved));
    expect(rentBack).toBe(14n * rent);
    expect(sum(closesOf(steps.map((s) => s.step)).map((s) => BigInt(s.params.expectedRentBack!)))).toBe(rentBack);
    // The ATA's rent was paid once, by whichever batch landed first; the others' idempotent creates were no-ops.
    expect(sum(receipts(steps).map((r) => r.rentPaid ?? 0n))).toBe(rent);
    const fees = sum(receipts(steps).map((r) => r.fee));
    expect(fees).toBe(sum(steps.map((s) => 5_000n * BigInt(signatures(s.step)))));
    expect((await lamportsOf(gasStation.address)) - gasBefore).toBe(rentBack - fees - rent);

    // At the final commitment too (the driver waited for finality): nothing left, the treasury holds the sum.
    expect(await adapter.finalTokenBalances('USDC', [...sources.map((s) => s.address), treasury])).toEqual([
      ...sources.map(() => 0n),
      sum(amounts),
    ]);
  });

  it('does not recreate a destination ATA that exists: no creation, no rent paid, fees only', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 5n });
    const sources = await deposits([7_000_000n, 8_000_000n, 9_000_000n]);
    const gasBefore = await lamportsOf(gasStation.address);
    const { plan, steps } = await sweep(request(sources, hot));
    expect(plan.steps.map((s) => s.purpose)).toEqual(['batch', 'close']);
    expect(plan.steps[0]!.params.createDestination).toBe('false');
    expect(plan.estimatedCost).toBe(plan.steps[0]!.estimatedFee + plan.steps[1]!.estimatedFee);
    const tx = await conn.getTransaction(steps[0]!.hash!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(tx!.transaction.message.staticAccountKeys.map((k) => k.toBase58())).not.toContain(ASSOCIATED_TOKEN_PROGRAM_ID.toBase58());
    const [r, closed] = [steps[0]!.receipt!, steps[1]!.receipt!];
    expect(r.rentPaid).toBe(0n);
    expect(r.nativeMoved).toBe(0n);
    expect(r.fee).toBe(4n * 5_000n);
    expect(closed).toMatchObject({ swept: [], nativeMoved: 3n * rent, fee: 4n * 5_000n });
    expect(await tokenBalance(mints.USDC, hot)).toBe(5n + 24_000_000n);
    expect((await lamportsOf(gasStation.address)) - gasBefore).toBe(3n * rent - r.fee - closed.fee);
  });

  it('packs partial sweeps (no closes) 6 to a transaction to an existing ATA, each account left open', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 0n });
    const held = await deposits(Array.from({ length: 13 }, () => 2_000_000n));
    const { plan, steps } = await sweep(
      request(
        held.map((s) => ({ ...s, amount: 1_500_000n })),
        hot,
      ),
    );
    expect(plan.steps.map((s) => s.sources.length)).toEqual([6, 6, 1]);
    expect(plan.steps.every((s) => s.purpose === 'batch')).toBe(true); // nothing emptied: no close step
    expectFullBatches(await landedSizes(steps));
    expect(sum(receipts(steps).map((r) => r.nativeMoved))).toBe(0n);
    expect(await adapter.finalTokenBalances('USDC', [...held.map((s) => s.address), hot])).toEqual([
      ...held.map(() => 500_000n),
      13n * 1_500_000n,
    ]);
  });

  it('sweeps to a destination that is itself a token account of the mint', async () => {
    const owner = Keypair.generate().publicKey.toBase58();
    const account = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner, amount: 0n, address: account });
    const sources = await deposits([2_500_000n]);
    const { plan, steps } = await sweep(request(sources, account));
    expect(plan.steps[0]!.params.destinationAccount).toBe(account);
    expect(steps[0]!.receipt!.swept).toEqual([{ source: sources[0]!.address, amount: 2_500_000n }]);
    expect((await conn.getAccountInfo(new PublicKey(account)))!.data.readBigUInt64LE(64)).toBe(2_500_000n);
    expect(await conn.getAccountInfo(ata(mints.USDC, account))).toBeNull(); // no ATA of the token account itself
  });

  it('a partial amount leaves the account open (no close, no rent) while a full one in the same batch closes', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 0n });
    const [partial, full] = await deposits([3_000_000n, 4_000_000n]);
    const req = request([{ ...partial!, amount: 1_000_000n }, full!], hot);
    const gasBefore = await lamportsOf(gasStation.address);
    const { plan, steps } = await sweep(req);
    expect(plan.steps[1]!).toMatchObject({ purpose: 'close', params: { close: full!.address } });
    expect(await tokenBalance(mints.USDC, partial!.address)).toBe(2_000_000n);
    expect(await conn.getAccountInfo(ata(mints.USDC, full!.address))).toBeNull();
    const [r, closed] = [steps[0]!.receipt!, steps[1]!.receipt!];
    expect(r.swept).toEqual([
      { source: partial!.address, amount: 1_000_000n },
      { source: full!.address, amount: 4_000_000n },
    ]);
    expect(closed.nativeMoved).toBe(rent);
    expect((await lamportsOf(gasStation.address)) - gasBefore).toBe(rent - r.fee - closed.fee);
    expect(await tokenBalance(mints.USDC, hot)).toBe(5_000_000n);
  });

  it('an account whose close authority is not its owner is emptied but not closed', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 0n });
    const [held] = await deposits([1_000_000n]);
    await rewriteAccount(held!.address, { closeAuthority: Keypair.generate().publicKey.toBase58() });
    const { plan, steps } = await sweep(request([held!], hot));
    expect(plan.steps.map((s) => s.purpose)).toEqual(['batch']);
    expect(await tokenBalance(mints.USDC, held!.address)).toBe(0n);
    expect(steps[0]!.receipt!).toMatchObject({ swept: [{ source: held!.address, amount: 1_000_000n }], nativeMoved: 0n });
  });

  it('a deposit landing after planning is not swept and keeps its account open; only the planned amount moves', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 0n });
    const [late, calm] = await deposits([6_000_000n, 1_000_000n]);
    // Between plan and build, a second payment reaches `late`.
    const method: SweepMethodImpl = {
      method: adapter.sweep.method,
      available: () => adapter.sweep.available(),
      plan: async (r) => {
        const p = await adapter.sweep.plan(r);
        rpc.validator.setTokenAccount({ mint: mints.USDC, owner: late!.address, amount: 6_000_000n + 750_000n });
        return p;
      },
      build: (r, s, n, b) => adapter.sweep.build(r, s, n, b),
      read: (h, r, s) => adapter.sweep.read(h, r, s),
    };
    const { plan, steps } = await sweep(request([late!, calm!], hot), method);
    expect(plan.steps[1]!.params.close!.split(',')).toEqual([late!.address, calm!.address]);
    expect(await tokenBalance(mints.USDC, late!.address)).toBe(750_000n);
    expect(await conn.getAccountInfo(ata(mints.USDC, calm!.address))).toBeNull();
    expect(steps[0]!.receipt!.swept).toEqual([
      { source: late!.address, amount: 6_000_000n },
      { source: calm!.address, amount: 1_000_000n },
    ]);
    expect(steps[1]!.receipt!.nativeMoved).toBe(rent);
    expect(await adapter.finalTokenBalances('USDC', [late!.address])).toEqual([750_000n]);
  });

  it('a payment landing after the batch is built, before it lands: the batch lands, the payment stays for a later sweep', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: hot, amount: 0n });
    const [late, calm] = await deposits([6_000_000n, 1_000_000n]);
    // The batch is built (and then signed) with both accounts holding exactly the planned amounts; before it lands, a
    // second payment reaches `late`. Closing `late`'s account in the same transaction would fail the whole batch.
    let paidLate = false;
    const method: SweepMethodImpl = {
      method: adapter.sweep.method,
      available: () => adapter.sweep.available(),
      plan: (r) => adapter.sweep.plan(r),
      build: async (r, s, n, b) => {
        const unsigned = await adapter.sweep.build(r, s, n, b);
        if (s.purpose === 'batch' && !paidLate) {
          paidLate = true;
          rpc.validator.setTokenAccount({ mint: mints.USDC, owner: late!.address, amount: 6_000_000n + 750_000n });
        }
        return unsigned;
      },
      read: (h, r, s) => adapter.sweep.read(h, r, s),
    };
    const gasBefore = await lamportsOf(gasStation.address);
    const { steps } = await sweep(request([late!, calm!], hot), method);
    expect(paidLate).toBe(true);
    // Every planned token moved; the late payment stayed in its (open) account, the emptied one was closed.
    const batch = steps.find((s) => s.step.purpose === 'batch')!;
    expect(batch.receipt!.swept).toEqual([
      { source: late!.address, amount: 6_000_000n },
      { source: calm!.address, amount: 1_000_000n },
    ]);
    expect(await tokenBalance(mints.USDC, hot)).toBe(7_000_000n);
    expect(await tokenBalance(mints.USDC, late!.address)).toBe(750_000n);
    expect(await conn.getAccountInfo(ata(mints.USDC, calm!.address))).toBeNull();
    const rentBack = sum(receipts(steps.filter((s) => s.receipt)).map((r) => r.nativeMoved));
    expect(rentBack).toBe(rent);
    const fees = sum(receipts(steps.filter((s) => s.receipt)).map((r) => r.fee));
    expect((await lamportsOf(gasStation.address)) - gasBefore).toBe(rentBack - fees);

    // A later sweep takes the rest and closes the account.
    await sweep(request([{ ...late!, amount: 750_000n }], hot));
    expect(await tokenBalance(mints.USDC, late!.address)).toBeNull();
    expect(await tokenBalance(mints.USDC, hot)).toBe(7_750_000n);
  });

  it('skips what it cannot sweep, with reasons, and plans nothing when nothing is left', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    const [ok, short, frozen] = await deposits([1_000_000n, 500n, 700n]);
    await rewriteAccount(frozen!.address, { frozen: true });
    const empty = await adapter.deriveDepositAddress(signer, MERCHANT_ACCOUNT, nextIndex++);
    const usdtOnly = (await deposits([9n], mints.USDT))[0]!;
    const plan = await adapter.sweep.plan(
      request(
        [
          ok!,
          { ...short!, amount: 501n },
          { key: ok!.key, address: empty, amount: 10n },
          { ...usdtOnly, amount: 9n },
          { ...ok!, amount: 1n },
          { ...ok!, address: hot, amount: 0n },
          frozen!,
        ],
        hot,
      ),
    );
    expect(plan.steps.map((s) => [s.purpose, s.sources])).toEqual([
      ['batch', [ok!.address]],
      ['close', []],
    ]);
    expect(plan.skipped).toEqual([
      { address: ok!.address, reason: 'listed twice in the request' },
      { address: hot, reason: 'nothing to sweep (amount 0)' },
      { address: short!.address, reason: 'holds 500 base units, planned 501' },
      { address: empty, reason: 'no USDC token account' },
      { address: usdtOnly.address, reason: 'no USDC token account' },
      { address: frozen!.address, reason: 'token account frozen by the mint' },
    ]);
    const none = await adapter.sweep.plan(request([{ ...short!, amount: 501n }], hot));
    expect(none).toMatchObject({ steps: [], estimatedCost: 0n });
    await expect(adapter.sweep.plan(request([ok!], 'not-an-address'))).rejects.toThrow(/not a Solana address/);
  });

  it('build refuses, before signing, a gas station without the lamports or a deposit emptied since planning', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    const [held] = await deposits([1_000_000n]);
    const broke = await adapter.deriveOperatorWallet(signer, 7);
    const poor = { ...request([held!], hot), gasStation: broke };
    const plan = await adapter.sweep.plan(poor);
    await expect(adapter.sweep.build(poor, plan.steps[0]!, null, 0)).rejects.toMatchObject({ reason: 'insufficient_gas' });
    const req = request([held!], hot);
    const planned = await adapter.sweep.plan(req);
    rpc.validator.setTokenAccount({ mint: mints.USDC, owner: held!.address, amount: 999_999n });
    await expect(adapter.sweep.build(req, planned.steps[0]!, null, 0)).rejects.toMatchObject({ reason: 'insufficient_token_balance' });
    expect(await tokenBalance(mints.USDC, held!.address)).toBe(999_999n);
  });

  it('sweeps USDT to the same destination independently, and finalTokenBalances reads the finalized commitment', async () => {
    const hot = Keypair.generate().publicKey.toBase58();
    const sources = await deposits([3_000_000n, 4_000_000n], mints.USDT);
    const req = request(sources, hot, 'USDT');
    const plan = await adapter.sweep.plan(req);
    const unsigned = (await adapter.sweep.build(req, plan.steps[0]!, null, 0))!;
    expect(Object.keys(unsigned.body.signers).sort()).toEqual([gasStation.address, ...sources.map((s) => s.address)].sort());
    const signed = await adapter.signTransfer(unsigned, signer);
    expect((await adapter.broadcast(signed)).status).toBe('accepted');
    // Landed (confirmed) but not yet finalized: the final balances are still the deposits'. (The accounts are emptied,
    // not closed: their close step comes after.)
    expect(await tokenBalance(mints.USDT, sources[0]!.address)).toBe(0n);
    expect(await adapter.finalTokenBalances('USDT', [...sources.map((s) => s.address), hot])).toEqual([3_000_000n, 4_000_000n, 0n]);
    rpc.validator.advanceSlots(33);
    expect(await adapter.finalTokenBalances('USDT', [...sources.map((s) => s.address), hot])).toEqual([0n, 0n, 7_000_000n]);
    const receipt = await adapter.sweep.read(signed.hash, req, plan.steps[0]!);
    expect(receipt!.swept.map((x) => x.amount)).toEqual([3_000_000n, 4_000_000n]);
    expect(receipt!.rentPaid).toBe(rent);
  });
});
