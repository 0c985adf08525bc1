// The fake Solana JSON-RPC endpoint (scripts/devnet/solana-rpc) driven through @solana/web3.js over HTTP.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ComputeBudgetProgram,
  Connection,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SendTransactionError,
  TransactionMessage,
  VersionedTransaction,
  type TransactionInstruction,
} from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
  getMint,
} from '@solana/spl-token';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';

const USDC = new PublicKey('EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v');

let rpc: FakeSolanaRpc;
let conn: Connection;
const payer = Keypair.generate();
const alice = Keypair.generate();
const bob = Keypair.generate().publicKey;

async function rawCall(body: unknown): Promise<unknown> {
  const res = await fetch(rpc.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return res.json();
}

async function buildTx(signers: Keypair[], ixs: TransactionInstruction[], legacy = false): Promise<VersionedTransaction> {
  const { blockhash } = await conn.getLatestBlockhash('confirmed');
  const message = new TransactionMessage({ payerKey: signers[0]!.publicKey, recentBlockhash: blockhash, instructions: ixs });
  const tx = new VersionedTransaction(legacy ? message.compileToLegacyMessage() : message.compileToV0Message());
  tx.sign(signers);
  return tx;
}

function transferToBob(amount: bigint): TransactionInstruction[] {
  const from = getAssociatedTokenAddressSync(USDC, alice.publicKey);
  const to = getAssociatedTokenAddressSync(USDC, bob);
  return [
    createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, to, bob, USDC),
    createTransferCheckedInstruction(from, USDC, to, alice.publicKey, amount, 6),
  ];
}

beforeAll(async () => {
  rpc = await startFakeSolanaRpc({ confirmedDepth: 1, finalizedDepth: 32 });
  conn = new Connection(rpc.url, 'confirmed');
  rpc.validator.createMint({ address: USDC.toBase58(), decimals: 6 });
  rpc.validator.setTokenAccount({ mint: USDC.toBase58(), owner: alice.publicKey.toBase58(), amount: 5_000_000n });
  const sig = await conn.requestAirdrop(payer.publicKey, 5 * LAMPORTS_PER_SOL);
  expect((await conn.getSignatureStatus(sig)).value?.err).toBeNull();
  rpc.validator.airdrop(alice.publicKey.toBase58(), BigInt(LAMPORTS_PER_SOL));
});

afterAll(async () => {
  await rpc.close();
});

describe('fake Solana RPC over LiteSVM', () => {
  it('answers node, slot and commitment queries in the documented shapes', async () => {
    const version = await conn.getVersion();
    expect(version['solana-core']).toMatch(/fake/);
    expect(await conn.getGenesisHash()).toBe(rpc.validator.genesisHash);
    rpc.validator.advanceSlots(40);
    const processed = await conn.getSlot('processed');
    expect(await conn.getSlot('confirmed')).toBe(processed - 1);
    expect(await conn.getSlot('finalized')).toBe(processed - 32);
    const height = await conn.getBlockHeight('processed');
    expect(height).toBeLessThan(processed);
    const epoch = await conn.getEpochInfo('processed');
    expect(epoch.absoluteSlot).toBe(processed);
    expect(epoch.blockHeight).toBe(height);
    const { blockhash, lastValidBlockHeight } = await conn.getLatestBlockhash('processed');
    expect(lastValidBlockHeight).toBe(height + 150);
    expect((await conn.isBlockhashValid(blockhash)).value).toBe(true);
    expect(await conn.getMinimumBalanceForRentExemption(165)).toBe(2_039_280);
  });

  it('serves a mint written at the real USDC address to spl-token, raw and jsonParsed', async () => {
    const mint = await getMint(conn, USDC);
    expect(mint.decimals).toBe(6);
    expect(mint.isInitialized).toBe(true);
    const parsed = await conn.getParsedAccountInfo(USDC);
    expect(parsed.value?.data).toMatchObject({ program: 'spl-token', parsed: { type: 'mint', info: { decimals: 6 } } });
    expect(await conn.getBalance(payer.publicKey)).toBe(5 * LAMPORTS_PER_SOL);
  });

  it('lands a v0 token transfer, walks it through processed, confirmed and finalized, and records token balances', async () => {
    const tx = await buildTx([payer, alice], transferToBob(1_250_000n));
    const sig = await conn.sendRawTransaction(tx.serialize());
    let status = (await conn.getSignatureStatuses([sig])).value[0];
    expect(status?.confirmationStatus).toBe('processed');
    expect(status?.confirmations).toBe(0);
    expect(await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })).toBeNull();
    expect(await conn.getSignaturesForAddress(getAssociatedTokenAddressSync(USDC, bob))).toEqual([]);

    rpc.validator.advanceSlots(1);
    status = (await conn.getSignatureStatuses([sig])).value[0];
    expect(status?.confirmationStatus).toBe('confirmed');
    const got = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(got?.version).toBe(0);
    expect(got?.meta?.err).toBeNull();
    expect(got?.meta?.fee).toBe(10_000);
    const keys = got!.transaction.message.getAccountKeys().staticAccountKeys.map((k) => k.toBase58());
    const bobAta = getAssociatedTokenAddressSync(USDC, bob).toBase58();
    const post = got!.meta!.postTokenBalances!.find((b) => keys[b.accountIndex] === bobAta);
    expect(post).toMatchObject({ mint: USDC.toBase58(), owner: bob.toBase58(), uiTokenAmount: { amount: '1250000', decimals: 6 } });
    expect(got!.meta!.preTokenBalances!.find((b) => keys[b.accountIndex] === bobAta)).toBeUndefined();
    const alicePre = got!.meta!.preTokenBalances!.find((b) => b.owner === alice.publicKey.toBase58());
    expect(alicePre?.uiTokenAmount.amount).toBe('5000000');

    await expect(conn.getTransaction(sig, { commitment: 'confirmed' })).rejects.toThrow(/maxSupportedTransactionVersion/);
    const parsed = await conn.getParsedTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    const ix = parsed!.transaction.message.instructions[1] as { parsed: { type: string; info: { tokenAmount: { amount: string } } } };
    expect(ix.parsed.type).toBe('transferChecked');
    expect(ix.parsed.info.tokenAmount.amount).toBe('1250000');
    expect(parsed!.meta!.postTokenBalances!.length).toBe(2);

    expect((await getAccount(conn, new PublicKey(bobAta))).amount).toBe(1_250_000n);
    expect((await conn.getTokenAccountBalance(new PublicKey(bobAta))).value.amount).toBe('1250000');
    const byOwner = await conn.getParsedTokenAccountsByOwner(bob, { mint: USDC });
    expect(byOwner.value.map((a) => a.pubkey.toBase58())).toEqual([bobAta]);

    rpc.validator.advanceSlots(30); // 31 slots after landing: still one short of the finalized depth
    expect((await conn.getSignatureStatuses([sig])).value[0]?.confirmationStatus).toBe('confirmed');
    rpc.validator.advanceSlots(1);
    status = (await conn.getSignatureStatuses([sig])).value[0];
    expect(status?.confirmationStatus).toBe('finalized');
    expect(status?.confirmations).toBeNull();
  });

  it('lists signatures newest first with limit, before and until', async () => {
    const sigs: string[] = [];
    for (const amount of [1n, 2n, 3n, 4n]) {
      sigs.push(await conn.sendRawTransaction((await buildTx([payer, alice], transferToBob(amount), amount % 2n === 0n)).serialize()));
    }
    rpc.validator.advanceSlots(1);
    const bobAta = getAssociatedTokenAddressSync(USDC, bob);
    const all = await conn.getSignaturesForAddress(bobAta);
    expect(all.slice(0, 4).map((s) => s.signature)).toEqual([...sigs].reverse());
    expect(all[0]!.slot).toBeGreaterThan(all[1]!.slot);
    const page = await conn.getSignaturesForAddress(bobAta, { limit: 2, before: sigs[3] });
    expect(page.map((s) => s.signature)).toEqual([sigs[2], sigs[1]]);
    const until = await conn.getSignaturesForAddress(bobAta, { until: sigs[1] });
    expect(until.map((s) => s.signature)).toEqual([sigs[3], sigs[2]]);
    const legacy = await conn.getTransaction(sigs[1]!, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(legacy?.version).toBe('legacy');
  });

  it('rejects in preflight, lands failures with skipPreflight, and never lands the same bytes twice', async () => {
    const tooMuch = await buildTx([payer, alice], transferToBob(10n ** 12n));
    const err = await conn.sendRawTransaction(tooMuch.serialize()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SendTransactionError);
    expect((err as SendTransactionError).message).toMatch(/custom program error: 0x1/);
    const lamportsBefore = await conn.getBalance(payer.publicKey, 'processed');
    const sig = await conn.sendRawTransaction(tooMuch.serialize(), { skipPreflight: true });
    const st = (await conn.getSignatureStatuses([sig])).value[0];
    expect(st?.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    // Landed failed: the fee payer still paid the fee (as on a validator), nothing else changed.
    rpc.validator.advanceSlots(1);
    const failed = await conn.getTransaction(sig, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(failed?.meta?.err).toEqual({ InstructionError: [1, { Custom: 1 }] });
    expect(failed?.meta?.fee).toBe(10_000);
    expect(failed!.meta!.preBalances[0]! - failed!.meta!.postBalances[0]!).toBe(10_000);
    expect(failed!.meta!.postBalances.slice(1)).toEqual(failed!.meta!.preBalances.slice(1));
    expect(await conn.getBalance(payer.publicKey, 'processed')).toBe(lamportsBefore - 10_000);

    const ok = await buildTx([payer, alice], transferToBob(7n));
    const before = rpc.validator.transactionCount();
    const s1 = await conn.sendRawTransaction(ok.serialize());
    const s2 = await conn.sendRawTransaction(ok.serialize(), { skipPreflight: true });
    expect(s2).toBe(s1);
    expect(rpc.validator.transactionCount()).toBe(before + 1);
    await expect(conn.sendRawTransaction(ok.serialize())).rejects.toThrow(/already been processed/);
  });

  it('expires blockhashes by block height and holds or drops transactions while landing is paused', async () => {
    const stale = await buildTx([payer, alice], transferToBob(11n));
    const { lastValidBlockHeight } = await conn.getLatestBlockhash('confirmed');
    rpc.validator.expireBlockhashes();
    expect(await conn.getBlockHeight('confirmed')).toBeGreaterThan(lastValidBlockHeight);
    expect((await conn.isBlockhashValid(stale.message.recentBlockhash)).value).toBe(false);
    await expect(conn.sendRawTransaction(stale.serialize())).rejects.toThrow(/Blockhash not found/);
    const dropped = await conn.sendRawTransaction(stale.serialize(), { skipPreflight: true });
    expect((await conn.getSignatureStatuses([dropped])).value[0]).toBeNull();

    rpc.validator.pauseLanding('hold');
    const held = await conn.sendRawTransaction((await buildTx([payer, alice], transferToBob(12n))).serialize());
    expect((await conn.getSignatureStatuses([held])).value[0]).toBeNull();
    expect(rpc.validator.resumeLanding()).toEqual([held]);
    expect((await conn.getSignatureStatuses([held])).value[0]?.err).toBeNull();

    rpc.validator.pauseLanding('drop');
    const lost = await conn.sendRawTransaction((await buildTx([payer, alice], transferToBob(13n))).serialize());
    expect(rpc.validator.resumeLanding()).toEqual([]);
    expect((await conn.getSignatureStatuses([lost])).value[0]).toBeNull();
  });

  it('reports prioritization fees per slot and simulates unsigned transactions', async () => {
    rpc.validator.setPriorityFeeFloor(10);
    const ata = getAssociatedTokenAddressSync(USDC, alice.publicKey);
    const sig = await conn.sendRawTransaction(
      (
        await buildTx([payer, alice], [ComputeBudgetProgram.setComputeUnitPrice({ microLamports: 5_000 }), ...transferToBob(1n)])
      ).serialize(),
    );
    const fees = await conn.getRecentPrioritizationFees({ lockedWritableAccounts: [ata] });
    expect(fees.length).toBeLessThanOrEqual(150);
    const slot = (await conn.getSignatureStatuses([sig])).value[0]!.slot;
    expect(fees.find((f) => f.slot === slot)?.prioritizationFee).toBe(5_000);
    expect(fees.find((f) => f.slot === slot - 1)?.prioritizationFee).toBe(10);

    const { blockhash } = await conn.getLatestBlockhash();
    const unsigned = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: transferToBob(1n),
      }).compileToV0Message(),
    );
    const sim = await conn.simulateTransaction(unsigned, { sigVerify: false });
    expect(sim.value.err).toBeNull();
    expect(sim.value.unitsConsumed).toBeGreaterThan(0);
  });

  it('speaks JSON-RPC 2.0: batches, unknown methods, parse errors, control methods', async () => {
    const batch = (await rawCall([
      { jsonrpc: '2.0', id: 1, method: 'getSlot', params: [{ commitment: 'processed' }] },
      { jsonrpc: '2.0', id: 'b', method: 'noSuchMethod' },
      { jsonrpc: '2.0', id: 3, method: 'svm_advanceSlots', params: [2] },
    ])) as { id: unknown; result?: number; error?: { code: number } }[];
    expect(batch.map((r) => r.id)).toEqual([1, 'b', 3]);
    expect(batch[1]!.error?.code).toBe(-32601);
    expect(batch[2]!.result).toBe(batch[0]!.result! + 2);
    const res = await fetch(rpc.url, { method: 'POST', body: '{not json' });
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(-32700);
    const counts = (await rawCall({ jsonrpc: '2.0', id: 9, method: 'svm_getCallCounts' })) as { result: Record<string, number> };
    expect(counts.result.getSlot).toBeGreaterThan(0);
    const processedOnly = (await rawCall({
      jsonrpc: '2.0',
      id: 10,
      method: 'getSignaturesForAddress',
      params: [bob.toBase58(), { commitment: 'processed' }],
    })) as { error: { code: number } };
    expect(processedOnly.error.code).toBe(-32602);
  });
});
