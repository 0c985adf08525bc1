// Solana sweep benchmark ('solana-fee-payer', chains/solana/sweep.ts) on the local fake RPC (LiteSVM), traffic to
// 127.0.0.1 only, bounded in count and time:
//   npm run bench:solana-sweep -- [addresses=1000] [concurrency=8]
// Twice (a treasury without an ATA, which the batches create, then one with an ATA): funds `addresses` deposit owners
// with USDC, then times plan -> build, sign, broadcast every batch -> wait finalized -> read every receipt. Prints addresses per transaction, lamports
// of rent returned per address, fees per address, the gas station's net lamports and addresses swept per second.
// Never fails on timing.
import { ACCOUNT_SIZE, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey } from '@solana/web3.js';
import pLimit from 'p-limit';
import { startFakeSolanaRpc } from '../devnet/solana-rpc/rpc-server.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import { solanaDepositKeyPath } from '../../chains/solana/keys.js';
import { OPERATOR_SLOT, type SweepSource, type SweepStepReceipt } from '../../chains/types.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';

const ADDRESSES = Number(process.argv[2] ?? 1000);
const CONCURRENCY = Number(process.argv[3] ?? 8);
const DEADLINE = Date.now() + 300_000;

const rpc = await startFakeSolanaRpc();
const v = rpc.validator;
const conn = new Connection(rpc.url, 'confirmed');
const USDC = Keypair.generate().publicKey.toBase58();
v.createMint({ address: USDC, decimals: 6 });
const adapter = new SolanaChainAdapter({ mode: 'test', rpcUrl: rpc.url, tokens: [{ symbol: 'USDC', address: USDC, decimals: 6 }] });
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
const gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
v.airdrop(gasStation.address, 1_000n * BigInt(LAMPORTS_PER_SOL));
const rent = BigInt(await conn.getMinimumBalanceForRentExemption(ACCOUNT_SIZE));
let nextIndex = 0;
const sum = (xs: bigint[]) => xs.reduce((a, b) => a + b, 0n);

/** `ADDRESSES` fresh deposit owners holding USDC (prepared before any timing: no RPC traffic while timed). */
async function fundDeposits(): Promise<SweepSource[]> {
  const sources: SweepSource[] = [];
  for (let i = 0; i < ADDRESSES; i++, nextIndex++) {
    const key = solanaDepositKeyPath(1, nextIndex);
    const address = await adapter.deriveDepositAddress(signer, 1, BigInt(nextIndex));
    const amount = 1_000_000n + BigInt(i);
    v.setTokenAccount({ mint: USDC, owner: address, amount });
    sources.push({ key, address, amount });
  }
  return sources;
}

/** Sweeps `sources` to a fresh treasury (its ATA created by the batches unless `ataExists`). */
async function run(label: string, sources: SweepSource[], ataExists: boolean): Promise<void> {
  const treasury = Keypair.generate().publicKey.toBase58();
  if (ataExists) v.setTokenAccount({ mint: USDC, owner: treasury, amount: 0n });
  const gasBefore = BigInt(await conn.getBalance(new PublicKey(gasStation.address), 'confirmed'));

  const t0 = performance.now();
  const balances = await adapter.finalTokenBalances(
    'USDC',
    sources.map((s) => s.address),
  );
  const request = {
    token: 'USDC' as const,
    sources: sources.map((s, i) => ({ ...s, amount: balances[i]! })),
    destination: treasury,
    gasStation,
  };
  const plan = await adapter.sweep.plan(request);
  const tPlanned = performance.now();
  const limit = pLimit(CONCURRENCY);
  const receipts: SweepStepReceipt[] = [];
  const hashes: string[] = [];
  let tSent = tPlanned;
  // Group by group: the close steps (group 1) are built once every batch (group 0) landed.
  for (const group of [0, 1]) {
    const steps = plan.steps.filter((s) => s.group === group);
    const sent = await Promise.all(
      steps.map((step) =>
        limit(async () => {
          const unsigned = await adapter.sweep.build(request, step, null, 0);
          if (!unsigned) return null;
          const signed = await adapter.signTransfer(unsigned, signer);
          const res = await adapter.broadcast(signed);
          if (res.status === 'rejected') throw new Error(`${step.purpose} refused: ${res.reason} ${res.detail}`);
          return { step, hash: signed.hash };
        }),
      ),
    );
    if (group === 0) tSent = performance.now();
    let pending = sent.filter((x): x is NonNullable<typeof x> => x !== null);
    hashes.push(...pending.map((x) => x.hash));
    while (pending.length > 0 && Date.now() < DEADLINE) {
      v.advanceSlots(33);
      const still: typeof pending = [];
      for (const x of pending) {
        const o = await adapter.getTransactionOutcome(x.hash);
        if (o.status === 'failed') throw new Error(`${x.step.purpose} ${x.hash} failed: ${o.detail}`);
        if (o.status !== 'succeeded' || !o.final) still.push(x);
        else receipts.push((await adapter.sweep.read(x.hash, request, x.step))!);
      }
      pending = still;
    }
    if (pending.length > 0) console.log(`deadline: ${pending.length} steps of group ${group} not final`);
  }
  const tDone = performance.now();

  const swept = receipts.flatMap((r) => r.swept).filter((x) => x.amount > 0n).length;
  const rentBack = sum(receipts.map((r) => r.nativeMoved));
  const fees = sum(receipts.map((r) => r.fee));
  const rentPaid = sum(receipts.map((r) => r.rentPaid ?? 0n));
  const gasAfter = BigInt(await conn.getBalance(new PublicKey(gasStation.address), 'confirmed'));
  const landed = await Promise.all(
    hashes.slice(0, 2).map((h) => conn.getTransaction(h, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })),
  );
  const treasuryAta = getAssociatedTokenAddressSync(new PublicKey(USDC), new PublicKey(treasury), true);
  const treasuryHolds = (await conn.getAccountInfo(treasuryAta, 'confirmed'))?.data.readBigUInt64LE(64) ?? 0n;
  const per = (x: bigint) => (Number(x) / Math.max(1, swept)).toFixed(0);
  const secs = (tDone - t0) / 1000;
  console.log(`\n${label}`);
  console.log(
    `  addresses=${ADDRESSES} swept=${swept} transactions=${hashes.length} addresses/tx=${(swept / Math.max(1, hashes.length)).toFixed(2)}`,
  );
  console.log(`  compute units consumed by the first batches: ${landed.map((t) => t?.meta?.computeUnitsConsumed).join(', ')}`);
  console.log(`  rent returned: ${rentBack} lamports, ${per(rentBack)} per address (rent-exempt minimum ${rent})`);
  console.log(`  fees: ${fees} lamports, ${per(fees)} per address; destination ATA rent paid: ${rentPaid}`);
  console.log(`  gas station net: ${gasAfter - gasBefore} lamports (rent back - fees - ATA rent = ${rentBack - fees - rentPaid})`);
  console.log(`  treasury holds ${treasuryHolds} base units (expected ${sum(request.sources.map((s) => s.amount))})`);
  console.log(
    `  time: plan ${(tPlanned - t0).toFixed(0)} ms, build+sign+broadcast ${(tSent - tPlanned).toFixed(0)} ms, finality+read ${(tDone - tSent).toFixed(0)} ms: ${(swept / secs).toFixed(0)} addresses/s`,
  );
}

const first = await fundDeposits();
const second = await fundDeposits();
await run('treasury without an ATA (every batch creates it idempotently):', first, false);
await run('treasury with an ATA:', second, true);
await rpc.close();
