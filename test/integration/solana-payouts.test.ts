// Solana refund payouts through @solana/web3.js over HTTP against the fake LiteSVM RPC: destination ATA created
// when missing, compute-unit price from recent fees, persisted bytes re-sent until settled, re-signed only after
// the blockhash expired, exactly one transfer after a crash at any point.
// A short balance, success, a failed landing and expiry through the adapter alone are the shared scenarios
// (adapter-conformance-solana.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  VersionedTransaction,
} from '@solana/web3.js';
import { getAccount, getAssociatedTokenAddressSync, TokenAccountNotFoundError } from '@solana/spl-token';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { solanaAddressAt, solanaDepositKeyPath, solanaHotWalletKeyPath } from '../../chains/solana/keys.js';
import { payUntilSettled, type PayoutStore } from '../support/solana-payout-loop.js';
import { MAINNET_TOKENS } from '../../chains/tokens/registry.js';
import { TransferRejectedError, type SignedTransfer, type TokenTransferRequest } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const signer = new MnemonicSigner('test test test test test test test test test test test junk');

let rpc: FakeSolanaRpc;
let conn: Connection;
let adapter: SolanaChainAdapter;
let hot: { key: ReturnType<typeof solanaHotWalletKeyPath>; address: string };

class MemoryStore implements PayoutStore {
  saved: SignedTransfer[] = [];
  async load() {
    return this.saved.at(-1) ?? null;
  }
  async save(s: SignedTransfer) {
    this.saved.push(JSON.parse(JSON.stringify(s)) as SignedTransfer); // as JSON, like a database row
  }
}

const ata = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(USDC), new PublicKey(owner), true);
async function usdcOf(owner: string): Promise<bigint> {
  try {
    return (await getAccount(conn, ata(owner))).amount;
  } catch (e) {
    if (e instanceof TokenAccountNotFoundError) return 0n;
    throw e;
  }
}
function refund(to: string, amount: bigint): TokenTransferRequest {
  return { from: hot, to, token: 'USDC', amount };
}
/** Lets every landed transaction reach `finalized` between rounds of the payout loop. */
const finalizeSlots = () => void rpc.validator.advanceSlots(33);

beforeAll(async () => {
  rpc = await startFakeSolanaRpc();
  conn = new Connection(rpc.url, 'confirmed');
  adapter = new SolanaChainAdapter({ mode: 'live', rpcUrl: rpc.url, tokens: [...MAINNET_TOKENS.solana] });
  rpc.validator.createMint({ address: USDC, decimals: 6 });
  const key = solanaHotWalletKeyPath(0);
  hot = { key, address: await solanaAddressAt(signer, key) };
  rpc.validator.airdrop(hot.address, 10n * BigInt(LAMPORTS_PER_SOL));
  rpc.validator.setTokenAccount({ mint: USDC, owner: hot.address, amount: 1_000_000_000n });
});

afterAll(async () => {
  await rpc.close();
});

describe('Solana payouts', () => {
  it('refunds an owner without an ATA: creates it, prices compute units from recent fees, completes once', async () => {
    rpc.validator.setPriorityFeeFloor(1_234);
    const customer = Keypair.generate().publicKey.toBase58();
    expect(await conn.getAccountInfo(ata(customer))).toBeNull();
    const store = new MemoryStore();
    const hotBefore = await usdcOf(hot.address);
    const { signed, outcome, signatures } = await payUntilSettled({
      adapter,
      signer,
      request: refund(customer, 2_500_000n),
      store,
      pollMs: 5,
      onRound: finalizeSlots,
    });
    expect(signatures).toBe(1);
    expect(outcome).toMatchObject({ status: 'succeeded', final: true });
    expect(outcome.status === 'succeeded' && outcome.fee).toBeGreaterThan(5_000n); // base fee plus priority fee
    expect(await usdcOf(customer)).toBe(2_500_000n);
    expect(await usdcOf(hot.address)).toBe(hotBefore - 2_500_000n);
    expect(store.saved).toHaveLength(1);
    expect(signed.hash).toBe(store.saved[0]!.hash);
    expect(Number(signed.validUntilHeight)).toBeGreaterThan(0);
    const tx = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'));
    const keys = tx.message.staticAccountKeys;
    const budget = tx.message.compiledInstructions.filter((ix) => keys[ix.programIdIndex]!.equals(ComputeBudgetProgram.programId));
    const priceIx = budget.map((ix) => ({ programId: ComputeBudgetProgram.programId, keys: [], data: Buffer.from(ix.data) }));
    const price = priceIx.map((ix) => ComputeBudgetInstruction.decodeInstructionType(ix)).indexOf('SetComputeUnitPrice');
    expect(ComputeBudgetInstruction.decodeSetComputeUnitPrice(priceIx[price]!).microLamports).toBe(1_234n);
    rpc.validator.setPriorityFeeFloor(0);
  });

  it('re-signs once when the blockhash expires before the transaction lands, and pays once', async () => {
    const customer = Keypair.generate().publicKey.toBase58();
    const store = new MemoryStore();
    rpc.validator.pauseLanding('drop'); // the leader loses the first transaction
    let rounds = 0;
    const { signed, signatures } = await payUntilSettled({
      adapter,
      signer,
      request: refund(customer, 1_000_000n),
      store,
      pollMs: 5,
      onRound: async () => {
        rounds++;
        if (rounds === 2) {
          // The first bytes were re-sent once and never landed; now their blockhash dies.
          rpc.validator.resumeLanding();
          expect(await adapter.isExpired(store.saved[0]!)).toBe(false);
          rpc.validator.expireBlockhashes();
          expect(await adapter.isExpired(store.saved[0]!)).toBe(true);
        } else finalizeSlots();
      },
    });
    expect(signatures).toBe(2);
    expect(store.saved).toHaveLength(2);
    expect(store.saved[0]!.hash).not.toBe(signed.hash);
    expect((await conn.getSignatureStatuses([store.saved[0]!.hash], { searchTransactionHistory: true })).value[0]).toBeNull();
    expect(await usdcOf(customer)).toBe(1_000_000n);
  });

  it('re-sends the same bytes while they can still land: held transactions land once', async () => {
    const customer = Keypair.generate().publicKey.toBase58();
    const store = new MemoryStore();
    rpc.validator.pauseLanding('hold');
    let rounds = 0;
    const { signatures } = await payUntilSettled({
      adapter,
      signer,
      request: refund(customer, 700_000n),
      store,
      pollMs: 5,
      onRound: () => {
        if (++rounds === 3)
          rpc.validator.resumeLanding(); // three sends of identical bytes were held
        else finalizeSlots();
      },
    });
    expect(signatures).toBe(1);
    expect(await usdcOf(customer)).toBe(700_000n);
  });

  it('after a crash between signing and sending, or after sending, resumes from the persisted bytes: exactly one transfer', async () => {
    for (const crashAfterBroadcast of [false, true]) {
      const customer = Keypair.generate().publicKey.toBase58();
      const store = new MemoryStore();
      const unsigned = await adapter.buildTokenTransfer(refund(customer, 333_000n));
      const signed = await adapter.signTransfer(unsigned, signer);
      await store.save(signed);
      if (crashAfterBroadcast) expect(await adapter.broadcast(signed)).toEqual({ status: 'accepted' });
      // --- process restarts here ---
      const resumed = await payUntilSettled({
        adapter,
        signer,
        request: refund(customer, 333_000n),
        store,
        pollMs: 5,
        onRound: finalizeSlots,
      });
      expect(resumed.signatures).toBe(0);
      expect(resumed.signed.hash).toBe(signed.hash);
      expect(await usdcOf(customer)).toBe(333_000n);
      expect(await adapter.broadcast(signed)).toEqual({ status: 'already_known' });
    }
  });

  it('refuses a malformed destination before signing', async () => {
    const err = await adapter.buildTokenTransfer(refund('not-an-address', 1n)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransferRejectedError);
    expect((err as TransferRejectedError).reason).toBe('invalid');
  });

  it('creates a deposit ATA for the payer at the service’s expense', async () => {
    const owner = await solanaAddressAt(signer, solanaDepositKeyPath(0, 99n));
    const lamportsBefore = await conn.getBalance(new PublicKey(hot.address));
    const unsigned = await adapter.buildDepositAccountSetup(hot, owner, 'USDC');
    const signed = await adapter.signTransfer(unsigned, signer);
    expect(await adapter.broadcast(signed)).toEqual({ status: 'accepted' });
    const acc = await getAccount(conn, ata(owner));
    expect(acc.owner.toBase58()).toBe(owner);
    expect(acc.amount).toBe(0n);
    const rent = await conn.getMinimumBalanceForRentExemption(165);
    expect(lamportsBefore - (await conn.getBalance(new PublicKey(hot.address)))).toBeGreaterThanOrEqual(rent);
  });
});
