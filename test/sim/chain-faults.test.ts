import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair, LAMPORTS_PER_SOL, SystemProgram, Transaction, Connection, type PublicKey } from '@solana/web3.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployTokens, fund, payFrom, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { reorgEvm } from '../../scripts/sim/faults/chain-evm.js';
import {
  dropNextSolanaTransactions,
  dropSolanaTransactionsFor,
  expireSolanaBlockhashes,
  stallSolanaLeader,
} from '../../scripts/sim/faults/chain-solana.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';

// The simulator's chain faults (scripts/sim/faults/) on a real Anvil node and the LiteSVM endpoint.

describe('EVM reorg (anvil_reorg)', () => {
  let node: AnvilNode;
  let usdc: DeployedToken;
  beforeAll(async () => {
    node = await startAnvil();
    [usdc] = (await deployTokens(node, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
    await fund(usdc, walletAt(1, node.provider).address, 1_000_000_000n);
    await fund(usdc, walletAt(2, node.provider).address, 1_000_000_000n);
  });
  afterAll(async () => node?.stop());

  const balance = async (a: string) => (await usdc.contract.getFunction('balanceOf')(a)) as bigint;
  const receipt = (h: string) => node.rpc<{ blockNumber: string; blockHash: string } | null>('eth_getTransactionReceipt', [h]);

  it('removes a mined transfer with its blocks and replaces them with new ones at the same height', async () => {
    const to = walletAt(50, node.provider).address;
    const hash = await payFrom(walletAt(1, node.provider), usdc, to, 1_250_000n);
    await node.mine(2);
    const before = await receipt(hash);
    expect(before).not.toBeNull();
    expect(await balance(to)).toBe(1_250_000n);
    const r = await reorgEvm(node.url, { depth: 3, drop: 'all' });
    expect(r.removed).toHaveLength(3);
    expect(r.removed.map((b) => b.hash)).toContain(before!.blockHash);
    expect(r.dropped).toEqual([hash]);
    expect(r.head.number).toBe(r.height);
    expect(await receipt(hash)).toBeNull();
    expect(await node.rpc('eth_getTransactionByHash', [hash])).toBeNull(); // not left pending either
    expect(await balance(to)).toBe(0n);
    const replaced = await node.rpc<{ hash: string }>('eth_getBlockByNumber', [before!.blockNumber, false]);
    expect(replaced.hash).not.toBe(before!.blockHash);
  });

  it('re-includes the removed transfer in a later block of the new branch (same hash, new block), credited once', async () => {
    const to = walletAt(51, node.provider).address;
    const hash = await payFrom(walletAt(1, node.provider), usdc, to, 700_000n);
    await node.mine(3);
    const before = (await receipt(hash))!;
    const r = await reorgEvm(node.url, { depth: 4, shift: 2, extend: 1 });
    expect(r.reincluded).toEqual([hash]);
    expect(r.dropped).toEqual([]);
    expect(r.head.number).toBe(r.height + 1);
    const after = (await receipt(hash))!;
    expect(after.blockHash).not.toBe(before.blockHash);
    expect(Number(after.blockNumber)).toBe(Number(before.blockNumber) + 2);
    expect(await balance(to)).toBe(700_000n);
  });

  it('alternate drop: every second removed transaction goes, and a sender whose transaction went loses its later ones too', async () => {
    const to = walletAt(52, node.provider).address;
    const a = walletAt(1, node.provider);
    const b = walletAt(2, node.provider);
    const b1 = await payFrom(b, usdc, to, 1n); // index 0: kept
    const a1 = await payFrom(a, usdc, to, 10n); // index 1: dropped
    const b2 = await payFrom(b, usdc, to, 100n); // index 2: kept
    const a2 = await payFrom(a, usdc, to, 1000n); // index 3: dropped (and a's later one in any case)
    const r = await reorgEvm(node.url, { depth: 4, drop: 'alternate' });
    expect(r.reincluded).toEqual([b1, b2]);
    expect(r.dropped).toEqual([a1, a2]);
    expect(await balance(to)).toBe(101n);
    // A sender's dropped nonce is free again: its next transaction is accepted and mined.
    await payFrom(a, usdc, to, 5n);
    expect(await balance(to)).toBe(106n);
  });

  it('refuses a depth that is not a positive integer', async () => {
    await expect(reorgEvm(node.url, { depth: 0 })).rejects.toThrow(/positive integer/);
  });
});

describe('EVM reorg on a node that mines a block a second', () => {
  let node: AnvilNode;
  beforeAll(async () => {
    node = await startAnvil({ blockTime: 1 });
  });
  afterAll(async () => node?.stop());

  it('pauses the interval miner for the reorg only: every height up to the head has its block, and mining goes on', async () => {
    await node.mine(4);
    const r = await reorgEvm(node.url, { depth: 2 });
    expect(r.removed).toHaveLength(2);
    // The miner is back on, at the same interval (seed 244: a block it mined during the reorg once left a hole).
    expect(await node.rpc<number | null>('anvil_getIntervalMining', [])).toBe(1);
    const head = BigInt(await node.rpc<string>('eth_blockNumber', []));
    for (let h = 0n; h <= head; h++)
      expect(await node.rpc('eth_getBlockByNumber', [`0x${h.toString(16)}`, false]), `block ${h}`).not.toBeNull();
    const later = Date.now() + 15_000;
    while (BigInt(await node.rpc<string>('eth_blockNumber', [])) <= head && Date.now() < later)
      await new Promise((ok) => setTimeout(ok, 100));
    expect(BigInt(await node.rpc<string>('eth_blockNumber', []))).toBeGreaterThan(head);
  });
});

describe('Solana faults (LiteSVM endpoint)', () => {
  let rpc: FakeSolanaRpc;
  let conn: Connection;
  const payer = Keypair.generate();
  beforeAll(async () => {
    rpc = await startFakeSolanaRpc({ confirmedDepth: 1, finalizedDepth: 32 });
    conn = new Connection(rpc.url, 'confirmed');
    rpc.validator.airdrop(payer.publicKey.toBase58(), BigInt(10 * LAMPORTS_PER_SOL));
  });
  afterAll(async () => rpc?.close());

  /** A recipient that already holds 1 SOL (so small transfers are rent-exempt); `got` is what it received since. */
  function recipient(): { key: PublicKey; got(): Promise<number> } {
    const key = Keypair.generate().publicKey;
    rpc.validator.airdrop(key.toBase58(), BigInt(LAMPORTS_PER_SOL));
    return { key, got: async () => (await conn.getBalance(key)) - LAMPORTS_PER_SOL };
  }

  async function signedTransfer(to: PublicKey, lamports: number): Promise<Buffer> {
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    const tx = new Transaction({ feePayer: payer.publicKey, recentBlockhash: blockhash }).add(
      SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports }),
    );
    tx.sign(payer);
    return tx.serialize();
  }

  it('an expired blockhash makes the send fail; a transaction signed after the expiry lands', async () => {
    const to = Keypair.generate().publicKey;
    const stale = await signedTransfer(to, 1_000_000);
    const { slot } = await expireSolanaBlockhashes(rpc.url);
    expect(slot).toBeGreaterThan(150);
    await expect(conn.sendRawTransaction(stale)).rejects.toThrow(/BlockhashNotFound|Blockhash not found/i);
    expect(await conn.getBalance(to)).toBe(0);
    const fresh = await signedTransfer(to, 1_000_000);
    const sig = await conn.sendRawTransaction(fresh);
    expect((await conn.getSignatureStatus(sig)).value?.err).toBeNull();
    expect(await conn.getBalance(to)).toBe(1_000_000);
  });

  it('dropNext loses exactly the next N sends (signature answered, never landed); a rebroadcast of a lost one lands', async () => {
    const r = recipient();
    const to = r.key;
    expect(await dropNextSolanaTransactions(rpc.url, { count: 2 })).toEqual({ pending: 2 });
    const first = await signedTransfer(to, 1_000);
    const second = await signedTransfer(to, 2_000);
    const third = await signedTransfer(to, 4_000);
    const s1 = await conn.sendRawTransaction(first);
    const s2 = await conn.sendRawTransaction(second);
    const s3 = await conn.sendRawTransaction(third);
    expect(s1).not.toBe(s2);
    expect((await conn.getSignatureStatus(s1)).value).toBeNull();
    expect((await conn.getSignatureStatus(s2)).value).toBeNull();
    expect((await conn.getSignatureStatus(s3)).value?.err).toBeNull();
    expect(await r.got()).toBe(4_000);
    await conn.sendRawTransaction(first); // the same bytes again, blockhash still valid
    expect(await r.got()).toBe(5_000);
    await expect(dropNextSolanaTransactions(rpc.url, { count: -1 })).rejects.toThrow();
  });

  it('dropping for a window loses what is sent during it, then lands again', async () => {
    const r = recipient();
    const to = r.key;
    const lost = await signedTransfer(to, 3_000);
    const during = dropSolanaTransactionsFor(rpc.url, { forMs: 400 });
    await new Promise((r) => setTimeout(r, 100));
    const sig = await conn.sendRawTransaction(lost);
    await during;
    expect((await conn.getSignatureStatus(sig)).value).toBeNull();
    const sig2 = await conn.sendRawTransaction(await signedTransfer(to, 6_000));
    expect((await conn.getSignatureStatus(sig2)).value?.err).toBeNull();
    expect(await r.got()).toBe(6_000);
  });

  it('a stalled leader whose blockhashes expire lands none of the held transactions; without expiry they land', async () => {
    const r = recipient();
    const to = r.key;
    const tx1 = await signedTransfer(to, 10_000);
    const stall = stallSolanaLeader(rpc.url, { forMs: 300, expire: true });
    await new Promise((r) => setTimeout(r, 100));
    const s1 = await conn.sendRawTransaction(tx1);
    expect((await stall).landed).toEqual([]);
    expect((await conn.getSignatureStatus(s1)).value).toBeNull();
    const tx2 = await signedTransfer(to, 20_000);
    const stall2 = stallSolanaLeader(rpc.url, { forMs: 300 });
    await new Promise((r) => setTimeout(r, 100));
    const s2 = await conn.sendRawTransaction(tx2);
    expect((await stall2).landed).toEqual([s2]);
    expect(await r.got()).toBe(20_000);
  });
});
