// The shared adapter scenarios (test/support/adapter-conformance) against the Solana adapter over the fake LiteSVM RPC,
// at the end of this file. Before them, what only Solana has, read through @solana/web3.js over HTTP: commitment levels
// and account indexes, the Solana Pay reference, restarts and the RPC cost of idle polls. A minimal in-test ledger applies PollResults the way the watcher does:
// unique by (txHash, logIndex), final once block height <= finalHeight.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { paymentReference } from '../../chains/solana/solana-pay.js';
import { MAINNET_TOKENS } from '../../chains/tokens/registry.js';
import { TokenRegistryMismatchError, type CursorState, type ObservedTransfer, type PollResult, type WatchSet } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { solanaFixture } from '../support/adapter-conformance/solana.js';

const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const USDT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
const MNEMONIC = 'test test test test test test test test test test test junk';

let rpc: FakeSolanaRpc;
let conn: Connection;
const payer = Keypair.generate();
const signer = new MnemonicSigner(MNEMONIC);
let nextIndex = 0n;

class SetWatch implements WatchSet {
  readonly set = new Set<string>();
  syncs = 0;
  async sync() {
    this.syncs++;
  }
  has(a: string) {
    return this.set.has(a);
  }
  addresses() {
    return this.set.values();
  }
  get size() {
    return this.set.size;
  }
}

/** What the watcher + ledger do with poll results, reduced to the invariants the adapter must support. */
class MiniLedger {
  readonly credits = new Map<string, { t: ObservedTransfer; final: boolean }>();
  cursor!: CursorState;
  last!: PollResult;
  apply(r: PollResult) {
    expect(r.rollbackAbove).toBeNull();
    for (const t of r.transfers) {
      const key = `${t.txHash}:${t.logIndex}`;
      const prev = this.credits.get(key);
      if (prev)
        expect(prev.t.amount).toBe(t.amount); // a repeat must be identical
      else this.credits.set(key, { t, final: false });
    }
    for (const c of this.credits.values()) if (c.t.block.height <= r.finalHeight) c.final = true;
    this.cursor = r.cursor;
    this.last = r;
    r.committed?.(); // as the watcher does after its commit
  }
  sum(owner: string, symbol: 'USDC' | 'USDT', finalOnly = true): bigint {
    let s = 0n;
    for (const c of this.credits.values()) if (c.t.to === owner && c.t.token === symbol && (c.final || !finalOnly)) s += c.t.amount;
    return s;
  }
  of(owner: string) {
    return [...this.credits.values()].filter((c) => c.t.to === owner).map((c) => c.t);
  }
}

function makeAdapter(tokens = MAINNET_TOKENS.solana) {
  return new SolanaChainAdapter({ mode: 'live', rpcUrl: rpc.url, tokens: [...tokens], rpcConcurrency: 4 });
}

async function newDepositOwner(): Promise<string> {
  return makeAdapter().deriveDepositAddress(signer, 7, nextIndex++);
}

function fundPayer(mint: string, amount: bigint): Keypair {
  const kp = Keypair.generate();
  rpc.validator.setTokenAccount({ mint, owner: kp.publicKey.toBase58(), amount });
  return kp;
}

/** A Solana Pay style transfer: the wallet creates the recipient ATA if missing and adds the reference as a
 * read-only key of the transfer instruction. */
function payIxs(
  from: Keypair,
  mint: string,
  owner: string,
  amount: bigint,
  opts: { reference?: boolean; destination?: string } = {},
): TransactionInstruction[] {
  const m = new PublicKey(mint);
  const dest = opts.destination ? new PublicKey(opts.destination) : getAssociatedTokenAddressSync(m, new PublicKey(owner), true);
  const ixs: TransactionInstruction[] = [];
  if (!opts.destination) ixs.push(createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, new PublicKey(owner), m));
  const transfer = createTransferCheckedInstruction(getAssociatedTokenAddressSync(m, from.publicKey), m, dest, from.publicKey, amount, 6);
  if (opts.reference) transfer.keys.push({ pubkey: new PublicKey(paymentReference(owner)), isSigner: false, isWritable: false });
  ixs.push(transfer);
  return ixs;
}

async function send(signers: Keypair[], ixs: TransactionInstruction[], skipPreflight = false): Promise<string> {
  const { blockhash } = await conn.getLatestBlockhash('confirmed');
  const tx = new VersionedTransaction(
    new TransactionMessage({ payerKey: payer.publicKey, recentBlockhash: blockhash, instructions: ixs }).compileToV0Message(),
  );
  tx.sign([payer, ...signers]);
  return conn.sendRawTransaction(tx.serialize(), { skipPreflight });
}

async function pollInto(adapter: SolanaChainAdapter, ledger: MiniLedger, watch: WatchSet): Promise<PollResult> {
  const r = await adapter.pollTransfers(ledger.cursor, watch);
  ledger.apply(r);
  return r;
}

beforeAll(async () => {
  rpc = await startFakeSolanaRpc();
  conn = new Connection(rpc.url, 'confirmed');
  rpc.validator.createMint({ address: USDC, decimals: 6 });
  rpc.validator.createMint({ address: USDT, decimals: 6 });
  rpc.validator.airdrop(payer.publicKey.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
});

afterAll(async () => {
  await rpc.close();
});

describe('Solana deposits', () => {
  it('refuses a registry address that holds no mint', async () => {
    const missing = Keypair.generate().publicKey.toBase58();
    const unknownMint = makeAdapter([{ symbol: 'USDT', address: missing, decimals: 6 }]);
    await expect(unknownMint.verifyTokens()).rejects.toThrow(TokenRegistryMismatchError);
    await expect(unknownMint.verifyTokens()).rejects.toThrow(/no SPL Token mint/);
  });

  it('reads transfers at confirmed, not processed, in raw base units, with sender and account index', async () => {
    const adapter = makeAdapter();
    const ledger = new MiniLedger();
    ledger.cursor = await adapter.initialCursor();
    const owner = await newDepositOwner();
    const watch = new SetWatch();
    watch.set.add(owner);
    const alice = fundPayer(USDC, 50_000_000n);

    const sig = await send([alice], payIxs(alice, USDC, owner, 12_345_678n, { reference: true }));
    await pollInto(adapter, ledger, watch); // only `processed`: invisible to detection
    expect(ledger.of(owner)).toEqual([]);

    rpc.validator.advanceSlots(1); // confirmed
    const r = await pollInto(adapter, ledger, watch);
    const [t] = ledger.of(owner);
    expect(t).toMatchObject({
      txHash: sig,
      token: 'USDC',
      tokenContract: USDC,
      to: owner,
      from: alice.publicKey.toBase58(),
      amount: 12_345_678n,
    });
    expect(typeof t!.amount).toBe('bigint');
    const landed = await conn.getTransaction(sig, { maxSupportedTransactionVersion: 0 });
    const keys = landed!.transaction.message.getAccountKeys().staticAccountKeys.map((k) => k.toBase58());
    expect(keys[t!.logIndex]).toBe(getAssociatedTokenAddressSync(new PublicKey(USDC), new PublicKey(owner), true).toBase58());
    expect(t!.block.height).toBe(BigInt(landed!.slot));
    expect(t!.block.height).toBeGreaterThan(r.finalHeight);
    expect(ledger.sum(owner, 'USDC')).toBe(0n); // provisional until finalized
    expect(ledger.sum(owner, 'USDC', false)).toBe(12_345_678n);
    expect(watch.syncs).toBe(2);
  });

  it('finds a payment to a non-ATA account of the deposit owner through its Solana Pay reference', async () => {
    const adapter = makeAdapter();
    const ledger = new MiniLedger();
    ledger.cursor = await adapter.initialCursor();
    const owner = await newDepositOwner();
    const watch = new SetWatch();
    watch.set.add(owner);
    const otherAccount = Keypair.generate().publicKey.toBase58();
    rpc.validator.setTokenAccount({ mint: USDC, owner, amount: 0n, address: otherAccount });
    const dave = fundPayer(USDC, 10_000_000n);
    await send([dave], payIxs(dave, USDC, owner, 3_000_000n, { reference: true, destination: otherAccount }));
    rpc.validator.advanceSlots(33);
    await pollInto(adapter, ledger, watch); // first poll of a process scans references
    expect(ledger.sum(owner, 'USDC')).toBe(3_000_000n);
    expect(ledger.of(owner)[0]!.to).toBe(owner);
  });

  it('loses nothing across watcher restarts, including a crash before the cursor was persisted', async () => {
    const owners = [await newDepositOwner(), await newDepositOwner(), await newDepositOwner()];
    const watch = new SetWatch();
    owners.forEach((o) => watch.set.add(o));
    const frank = fundPayer(USDC, 1_000_000_000n);
    const ledger = new MiniLedger();
    let adapter = makeAdapter();
    ledger.cursor = await adapter.initialCursor();
    const expected = new Map<string, bigint>(owners.map((o) => [o, 0n]));
    const pay = async (i: number, amount: bigint) => {
      await send([frank], payIxs(frank, USDC, owners[i % 3]!, amount));
      expected.set(owners[i % 3]!, expected.get(owners[i % 3]!)! + amount);
    };

    for (let i = 0; i < 6; i++) await pay(i, BigInt(1_000 + i));
    rpc.validator.advanceSlots(1);
    await pollInto(adapter, ledger, watch);
    for (let i = 6; i < 12; i++) await pay(i, BigInt(1_000 + i));
    rpc.validator.advanceSlots(1);
    // Crash: this poll's result is computed but never persisted.
    const lost = await adapter.pollTransfers(ledger.cursor, watch);
    expect(lost.transfers.length).toBeGreaterThan(0);
    // The same process polls again: the lost poll taught its caches nothing, so its transfers are listed again.
    const again = await pollInto(adapter, ledger, watch);
    expect(again.transfers.map((t) => t.txHash).sort()).toEqual(lost.transfers.map((t) => t.txHash).sort());
    adapter = makeAdapter(); // a new process, empty caches, resumes from the persisted cursor
    for (let i = 12; i < 18; i++) await pay(i, BigInt(1_000 + i));
    rpc.validator.advanceSlots(1);
    await pollInto(adapter, ledger, watch);
    adapter = makeAdapter();
    rpc.validator.advanceSlots(33);
    await pollInto(adapter, ledger, watch);
    for (const o of owners) expect(ledger.sum(o, 'USDC')).toBe(expected.get(o));
    expect(ledger.credits.size).toBe(18);
  });

  it('keeps RPC calls per idle poll to balance reads: no history calls for unchanged accounts', async () => {
    const adapter = makeAdapter();
    const ledger = new MiniLedger();
    ledger.cursor = await adapter.initialCursor();
    const watch = new SetWatch();
    for (let i = 0; i < 250; i++) watch.set.add(await newDepositOwner());
    const paidOwner = [...watch.set][0]!;
    const gina = fundPayer(USDC, 10_000_000n);
    await send([gina], payIxs(gina, USDC, paidOwner, 5_000_000n));
    rpc.validator.advanceSlots(33);
    await pollInto(adapter, ledger, watch); // first poll: learns balances, scans references
    await pollInto(adapter, ledger, watch);
    const idle = adapter.scanner.lastPollCalls;
    expect(idle.getMultipleAccounts).toBe(5); // 250 owners x 2 mints / 100 per call
    expect(idle.getSignaturesForAddress ?? 0).toBe(0);
    expect(idle.getTransaction ?? 0).toBe(0);
    await send([gina], payIxs(gina, USDC, paidOwner, 1_000_000n));
    rpc.validator.advanceSlots(33);
    await pollInto(adapter, ledger, watch);
    expect(adapter.scanner.lastPollCalls.getSignaturesForAddress).toBe(1);
    expect(adapter.scanner.lastPollCalls.getTransaction).toBe(1);
    expect(ledger.sum(paidOwner, 'USDC')).toBe(6_000_000n);
  });
});

describeAdapterConformance('Solana (fake LiteSVM RPC, final at finalized)', solanaFixture);
