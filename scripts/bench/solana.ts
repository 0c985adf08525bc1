// Solana benchmark on the local fake RPC (LiteSVM), traffic to 127.0.0.1 only, bounded in count and time:
//   npx tsx scripts/bench/solana.ts [sessions=1000] [paymentsPerSecond=100] [refunds=100]
// Prints RPC calls per poll (idle and under load), poll duration, time from finality to the poll that reports the
// payment final (what "paid" waits for), and refunds per second through build/sign/broadcast. Never fails on timing.
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import { startFakeSolanaRpc } from '../devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { solanaAddressAt, solanaHotWalletKeyPath } from '../../chains/solana/keys.js';
import { MAINNET_TOKENS } from '../../chains/tokens/registry.js';
import type { CursorState, WatchSet } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

const SESSIONS = Number(process.argv[2] ?? 1000);
const RATE = Number(process.argv[3] ?? 100);
const REFUNDS = Number(process.argv[4] ?? 100);
const USDC = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const DEADLINE = Date.now() + 240_000;

const rpc = await startFakeSolanaRpc();
const conn = new Connection(rpc.url, 'confirmed');
const v = rpc.validator;
v.createMint({ address: USDC, decimals: 6 });
v.createMint({ address: MAINNET_TOKENS.solana.find((t) => t.symbol === 'USDT')!.address, decimals: 6 });
const adapter = new SolanaChainAdapter({ mode: 'live', rpcUrl: rpc.url, tokens: [...MAINNET_TOKENS.solana] });
const signer = new MnemonicSigner('test test test test test test test test test test test junk');

const owners: string[] = [];
for (let i = 0; i < SESSIONS; i++) owners.push(await adapter.deriveDepositAddress(signer, 1, BigInt(i)));
const set = new Set(owners);
const watch: WatchSet = {
  sync: async () => {},
  has: (a) => set.has(a),
  addresses: () => set.values(),
  get size() {
    return set.size;
  },
};

const feePayer = Keypair.generate();
v.airdrop(feePayer.publicKey.toBase58(), 1_000n * BigInt(LAMPORTS_PER_SOL));
const payers = Array.from({ length: 50 }, () => {
  const kp = Keypair.generate();
  v.setTokenAccount({ mint: USDC, owner: kp.publicKey.toBase58(), amount: 10n ** 12n });
  return kp;
});

let cursor: CursorState = await adapter.initialCursor();
const finalAt = new Map<string, number>(); // signature -> ms when its slot became finalized (set by this script)
const paidAt = new Map<string, number>();
const seen = new Map<string, bigint>();
const slotOpenedAt: { slot: number; ms: number }[] = [];
async function poll() {
  const t0 = performance.now();
  const r = await adapter.pollTransfers(cursor, watch);
  cursor = r.cursor;
  r.committed?.(); // as the watcher does once the poll's result is committed
  // As the watcher does: a reported transfer is paid once the final height reaches its slot.
  for (const t of r.transfers) if (!paidAt.has(t.txHash)) seen.set(t.txHash, t.block.height);
  for (const [sig, height] of seen) {
    if (height <= r.finalHeight) {
      paidAt.set(sig, Date.now());
      seen.delete(sig);
    }
  }
  return { ms: performance.now() - t0, calls: adapter.scanner.lastPollCalls, transfers: r.transfers.length };
}
const sumCalls = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);

// 1. idle polls over SESSIONS open sessions
await poll(); // first poll of a process: also scans every Solana Pay reference
const idle = await poll();
console.log(`sessions=${SESSIONS}  idle poll: ${sumCalls(idle.calls)} RPC calls ${JSON.stringify(idle.calls)} in ${idle.ms.toFixed(1)} ms`);

// 2. one payment per session at RATE per second, polling every 250 ms meanwhile
const sigs: { sig: string; slot: number }[] = [];
const started = Date.now();
let sent = 0;
const loadPolls: { ms: number; calls: number }[] = [];
let polling = true;
const poller = (async () => {
  while (polling && Date.now() < DEADLINE) {
    const p = await poll();
    loadPolls.push({ ms: p.ms, calls: sumCalls(p.calls) });
    await new Promise((r) => setTimeout(r, 250));
  }
})();
while (sent < SESSIONS && Date.now() < DEADLINE) {
  const due = Math.floor(((Date.now() - started) / 1000) * RATE);
  for (; sent < Math.min(due, SESSIONS); sent++) {
    const payer = payers[sent % payers.length]!;
    const owner = owners[sent]!;
    const mint = new PublicKey(USDC);
    const dest = getAssociatedTokenAddressSync(mint, new PublicKey(owner), true);
    const { blockhash } = v.latestBlockhash('confirmed');
    const tx = new VersionedTransaction(
      new TransactionMessage({
        payerKey: feePayer.publicKey,
        recentBlockhash: blockhash,
        instructions: [
          createAssociatedTokenAccountIdempotentInstruction(feePayer.publicKey, dest, new PublicKey(owner), mint),
          createTransferCheckedInstruction(
            getAssociatedTokenAddressSync(mint, payer.publicKey),
            mint,
            dest,
            payer.publicKey,
            1_000_000n + BigInt(sent),
            6,
          ),
        ],
      }).compileToV0Message(),
    );
    tx.sign([feePayer, payer]);
    const sig = await conn.sendRawTransaction(tx.serialize(), { skipPreflight: true });
    sigs.push({ sig, slot: v.slot('processed') });
    slotOpenedAt.push({ slot: v.slot('processed'), ms: Date.now() });
  }
  await new Promise((r) => setTimeout(r, 10));
}
const sendSeconds = (Date.now() - started) / 1000;
// finality: advance the finalized slot past every payment, note the time, and let the poller report them final
v.advanceSlots(33);
const finalizedMs = Date.now();
// Each payment opened a slot; a payment's slot s is finalized once slot s + finalizedDepth has been opened.
for (const s of sigs) {
  const when = slotOpenedAt.find((o) => o.slot >= s.slot + v.finalizedDepth);
  finalAt.set(s.sig, when?.ms ?? finalizedMs);
}
while (paidAt.size < sigs.length && Date.now() < DEADLINE) await new Promise((r) => setTimeout(r, 50));
polling = false;
await poller;
const lat = sigs
  .map((s) => (paidAt.get(s.sig) ?? NaN) - finalAt.get(s.sig)!)
  .filter(Number.isFinite)
  .sort((a, b) => a - b);
const pct = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]?.toFixed(0) ?? 'n/a';
const avgCalls = loadPolls.reduce((a, p) => a + p.calls, 0) / Math.max(1, loadPolls.length);
const maxPollMs = Math.max(...loadPolls.map((p) => p.ms));
console.log(
  `payments: ${sigs.length} sent in ${sendSeconds.toFixed(1)} s (${(sigs.length / sendSeconds).toFixed(0)}/s); ` +
    `${paidAt.size} reported final; polls under load: ${loadPolls.length}, avg ${avgCalls.toFixed(0)} RPC calls, max ${maxPollMs.toFixed(0)} ms`,
);
console.log(`finalized -> reported final (250 ms poll interval): p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms`);

// 3. refunds: build, sign, broadcast (the persisted bytes), REFUNDS in a row
const hotKey = solanaHotWalletKeyPath(1);
const hot = { key: hotKey, address: await solanaAddressAt(signer, hotKey) };
v.airdrop(hot.address, 100n * BigInt(LAMPORTS_PER_SOL));
v.setTokenAccount({ mint: USDC, owner: hot.address, amount: 10n ** 12n });
const r0 = performance.now();
let refunded = 0;
for (let i = 0; i < REFUNDS && Date.now() < DEADLINE; i++) {
  const to = payers[i % payers.length]!.publicKey.toBase58();
  const unsigned = await adapter.buildTokenTransfer({ from: hot, to, token: 'USDC', amount: 1_000n });
  const signed = await adapter.signTransfer(unsigned, signer);
  const b = await adapter.broadcast(signed);
  if (b.status === 'accepted') refunded++;
}
const refundSeconds = (performance.now() - r0) / 1000;
console.log(
  `refunds: ${refunded} built, signed and broadcast in ${refundSeconds.toFixed(2)} s (${(refunded / refundSeconds).toFixed(0)}/s)`,
);
console.log(`fake RPC served ${[...rpc.calls.values()].reduce((a, b) => a + b, 0)} calls in total`);
await rpc.close();
