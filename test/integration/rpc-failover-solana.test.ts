import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { startFaultProxy, type FaultProxy } from '../support/rpc-fault-proxy.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import type { CursorState, ObservedTransfer, WatchSet } from '../../chains/types.js';
import type { RpcCallEvent, RpcFailoverEvent, RpcHealthEvent, RpcObserver } from '../../chains/rpc/observer.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

// Solana with two endpoints in front of one LiteSVM ledger: A (preferred) fails, then trails by 500 slots, then
// recovers. Every deposit is delivered with one amount per (signature, account index), final only at finalized.
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
let rpc: FakeSolanaRpc;
let conn: Connection;
const payer = Keypair.generate();
const signer = new MnemonicSigner('test test test test test test test test test test test junk');

beforeAll(async () => {
  rpc = await startFakeSolanaRpc();
  conn = new Connection(rpc.url, 'confirmed');
  rpc.validator.createMint({ address: USDC, decimals: 6 });
  rpc.validator.airdrop(payer.publicKey.toBase58(), 100n * BigInt(LAMPORTS_PER_SOL));
});

afterAll(async () => {
  await rpc?.close();
});

class Recorder implements RpcObserver {
  calls: RpcCallEvent[] = [];
  failovers: RpcFailoverEvent[] = [];
  health: RpcHealthEvent[] = [];
  onCall(e: RpcCallEvent) {
    this.calls.push(e);
  }
  onFailover(e: RpcFailoverEvent) {
    this.failovers.push(e);
  }
  onHealth(e: RpcHealthEvent) {
    this.health.push(e);
  }
}

describe('Solana RPC failover', () => {
  it('fails over on errors and on a lagging endpoint, comes back after probation; every deposit delivered once', async () => {
    const a: FaultProxy = await startFaultProxy({ upstream: rpc.url, seed: 5, hangMs: 500 });
    const seen = new Recorder();
    const lines: string[] = [];
    const log = {
      info: (o: object, m: string) => void lines.push(JSON.stringify({ ...o, msg: m })),
      warn: (o: object, m: string) => void lines.push(JSON.stringify({ ...o, msg: m })),
    };
    const adapter = new SolanaChainAdapter({
      mode: 'live',
      rpcUrl: a.url,
      rpcUrls: [rpc.url],
      tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
      rpcConcurrency: 4,
      rpcObserver: seen,
      rpcLog: log,
    });
    const [labelA, labelB] = adapter.endpoints.pool.endpoints.map((e) => e.label) as [string, string];
    const delivered = new Map<string, ObservedTransfer>();
    let cursor: CursorState = await adapter.initialCursor();
    let final = 0n;
    const owners: string[] = [];
    const watch: WatchSet = {
      sync: async () => {},
      has: (x) => owners.includes(x),
      addresses: () => owners.values(),
      get size() {
        return owners.length;
      },
    };
    let seq = 0n;

    const poll = async () => {
      for (let i = 0; i < 20; i++) {
        try {
          const r = await adapter.pollTransfers(cursor, watch);
          for (const t of r.transfers) {
            const key = `${t.txHash}:${t.logIndex}`;
            const prev = delivered.get(key);
            if (prev) expect(prev.amount).toBe(t.amount);
            delivered.set(key, t);
          }
          cursor = r.cursor;
          final = r.finalHeight;
          return;
        } catch {
          await new Promise((r) => setTimeout(r, 50)); // the watcher's backoff
        }
      }
      throw new Error('no poll succeeded');
    };
    const pay = async (amount: bigint) => {
      const owner = await adapter.deriveDepositAddress(signer, 9, seq++);
      owners.push(owner);
      const from = Keypair.generate();
      rpc.validator.setTokenAccount({ mint: USDC, owner: from.publicKey.toBase58(), amount });
      const m = new PublicKey(USDC);
      const dest = getAssociatedTokenAddressSync(m, new PublicKey(owner), true);
      const { blockhash } = await conn.getLatestBlockhash('confirmed');
      const tx = new VersionedTransaction(
        new TransactionMessage({
          payerKey: payer.publicKey,
          recentBlockhash: blockhash,
          instructions: [
            createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, new PublicKey(owner), m),
            createTransferCheckedInstruction(getAssociatedTokenAddressSync(m, from.publicKey), m, dest, from.publicKey, amount, 6),
          ],
        }).compileToV0Message(),
      );
      tx.sign([payer, from]);
      await conn.sendRawTransaction(tx.serialize());
      rpc.validator.advanceSlots(1);
      return owner;
    };
    const sumTo = (owner: string, finalOnly: boolean) =>
      [...delivered.values()].filter((t) => t.to === owner && (!finalOnly || t.block.height <= final)).reduce((s, t) => s + t.amount, 0n);

    try {
      const o1 = await pay(1_000_000n);
      await poll();
      expect(sumTo(o1, false)).toBe(1_000_000n);
      expect(seen.calls.some((c) => c.endpoint === labelA && c.method === 'getSignaturesForAddress')).toBe(true);

      // A fails: 5xx, JSON-RPC internal errors, hangs.
      a.setFaults({ http5xxRate: 0.4, errorRate: 0.3, timeoutRate: 0.2 });
      const o2 = await pay(2_000_000n);
      for (let i = 0; i < 3; i++) await poll();
      expect(sumTo(o2, false)).toBe(2_000_000n);
      expect(seen.failovers.some((f) => f.from === labelA && f.to === labelB)).toBe(true);

      // A answers again, 500 slots behind: lagging, out of rotation; polls are pinned to B.
      a.setFaults({ http5xxRate: 0, errorRate: 0, timeoutRate: 0, headLag: 500 });
      await new Promise((r) => setTimeout(r, 1100)); // past A's first cool-down
      for (let i = 0; i < 5; i++) await poll();
      expect(seen.health.some((h) => h.endpoint === labelA && h.state === 'lagging' && h.lag !== null && h.lag >= 500n)).toBe(true);
      const o3 = await pay(3_000_000n);
      const bListsBefore = seen.calls.filter((c) => c.endpoint === labelB && c.method === 'getSignaturesForAddress').length;
      await poll();
      expect(sumTo(o3, false)).toBe(3_000_000n);
      expect(seen.calls.filter((c) => c.endpoint === labelB && c.method === 'getSignaturesForAddress').length).toBeGreaterThan(
        bListsBefore,
      );

      // A honest again: after probation it serves again.
      a.setFaults({ headLag: 0 });
      const back = seen.failovers.length;
      for (let i = 0; i < 10 && !seen.failovers.slice(back).some((f) => f.to === labelA); i++) {
        await poll();
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(seen.failovers.slice(back).some((f) => f.to === labelA)).toBe(true);

      rpc.validator.advanceSlots(40);
      await poll();
      for (const [o, amount] of [
        [o1, 1_000_000n],
        [o2, 2_000_000n],
        [o3, 3_000_000n],
      ] as const)
        expect(sumTo(o, true)).toBe(amount);
      expect(delivered.size).toBe(3);
      expect(lines.some((l) => l.includes('rpc failover'))).toBe(true);
      expect(lines.some((l) => l.includes('cooling down') && l.includes(labelA))).toBe(true);
    } finally {
      await a.close();
    }
  }, 120_000);

  async function payTo(owner: string, amount: bigint) {
    const from = Keypair.generate();
    rpc.validator.setTokenAccount({ mint: USDC, owner: from.publicKey.toBase58(), amount });
    const m = new PublicKey(USDC);
    const dest = getAssociatedTokenAddressSync(m, new PublicKey(owner), true);
    const { blockhash } = await conn.getLatestBlockhash('confirmed');
    const tx = new VersionedTransaction(
      new TransactionMessage({
        payerKey: payer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createAssociatedTokenAccountIdempotentInstruction(payer.publicKey, dest, new PublicKey(owner), m),
          createTransferCheckedInstruction(getAssociatedTokenAddressSync(m, from.publicKey), m, dest, from.publicKey, amount, 6),
        ],
      }).compileToV0Message(),
    );
    tx.sign([payer, from]);
    await conn.sendRawTransaction(tx.serialize());
    rpc.validator.advanceSlots(1);
  }
  const watchOf = (owner: string): WatchSet => ({
    sync: async () => {},
    has: (x) => x === owner,
    addresses: () => [owner].values(),
    size: 1,
  });
  const adapterOf = (url: string, finalityQuorum = 1) =>
    new SolanaChainAdapter({
      mode: 'live',
      rpcUrl: url,
      rpcUrls: [rpc.url],
      tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }],
      finalityQuorum,
    });
  async function pollOk(adapter: SolanaChainAdapter, cursor: CursorState, watch: WatchSet) {
    for (let i = 0; ; i++) {
      try {
        return await adapter.pollTransfers(cursor, watch);
      } catch (e) {
        if (i >= 5) throw e;
      }
    }
  }

  it('an endpoint inventing slots ahead of the chain is faulted: it can neither start nor move the cursor past a deposit', async () => {
    const a: FaultProxy = await startFaultProxy({ upstream: rpc.url, headAhead: 1000 });
    try {
      const adapter = adapterOf(a.url);
      const owner = await adapter.deriveDepositAddress(signer, 11, 0n);
      let cursor: CursorState | null = null;
      for (let i = 0; i < 5 && !cursor; i++) cursor = await adapter.initialCursor().catch(() => null);
      const real = await conn.getSlot('confirmed');
      expect(Number((cursor as { scannedThrough: string }).scannedThrough)).toBeLessThanOrEqual(real);
      await payTo(owner, 7_000_000n);
      const r = await pollOk(adapter, cursor!, watchOf(owner));
      expect(r.transfers.map((t) => t.amount)).toEqual([7_000_000n]);
      expect(Number((r.cursor as { scannedThrough: string }).scannedThrough)).toBeLessThan(real + 100);
      expect(adapter.endpoints.pool.endpoints[0]!.lastFault).toMatch(/Block not available/);
    } finally {
      await a.close();
    }
  }, 60_000);

  it('RPC_QUORUM=2: an endpoint calling slots final too early cannot make a deposit final early', async () => {
    const a: FaultProxy = await startFaultProxy({ upstream: rpc.url, finalAhead: 1000 });
    try {
      const quorum = adapterOf(a.url, 2);
      const single = adapterOf(a.url, 1);
      const owner = await quorum.deriveDepositAddress(signer, 10, 0n);
      const start = await conn.getSlot('confirmed');
      const { encodeSolanaCursor } = await import('../../chains/solana/deposit-scanner.js');
      await payTo(owner, 5_000_000n);
      const q = await pollOk(quorum, encodeSolanaCursor(BigInt(start)), watchOf(owner));
      const s1 = await pollOk(single, encodeSolanaCursor(BigInt(start)), watchOf(owner));
      expect(q.transfers.map((t) => t.amount)).toEqual([5_000_000n]);
      expect(s1.transfers.map((t) => t.amount)).toEqual([5_000_000n]);
      // The liar alone calls the transfer final at once; the quorum holds it to the honest endpoint's finalized slot.
      expect(s1.finalHeight).toBeGreaterThanOrEqual(s1.transfers[0]!.block.height);
      expect(q.finalHeight).toBeLessThan(q.transfers[0]!.block.height);
      rpc.validator.advanceSlots(40);
      const later = await pollOk(quorum, q.cursor, watchOf(owner));
      expect(later.finalHeight).toBeGreaterThanOrEqual(q.transfers[0]!.block.height);
    } finally {
      await a.close();
    }
  }, 60_000);

  it('raw JSON-RPC calls outside the Connection (payout sendTransaction) fail over too; a request error is no endpoint fault', async () => {
    const a: FaultProxy = await startFaultProxy({ upstream: rpc.url, http5xxRate: 1 });
    try {
      const adapter = adapterOf(a.url);
      const { solanaRpcCall, SolanaRpcError } = await import('../../chains/solana/json-rpc.js');
      const slot = await solanaRpcCall<number>('ignored', 'getSlot', [], undefined, adapter.endpoints.fetch);
      expect(slot).toBeGreaterThan(0);
      expect(adapter.endpoints.pool.endpoints[0]!.lastFault).toMatch(/HTTP 503/);
      // A malformed transaction is the request's fault: its JSON-RPC error reaches the sender as such, A untouched.
      a.setFaults({ http5xxRate: 0 });
      await new Promise((r) => setTimeout(r, 1100));
      const faultsBefore = adapter.endpoints.pool.endpoints[0]!.faults;
      await expect(
        solanaRpcCall('ignored', 'sendTransaction', ['AAAA', { encoding: 'base64' }], undefined, adapter.endpoints.fetch),
      ).rejects.toBeInstanceOf(SolanaRpcError);
      expect(adapter.endpoints.pool.endpoints.map((e) => e.faults)).toEqual([faultsBefore, 0]);
    } finally {
      await a.close();
    }
  }, 60_000);
});
