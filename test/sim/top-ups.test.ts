import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { Wallet } from 'ethers';
import { evmHexToTron } from '../../chains/tron/address.js';
import type { ChainAdapter } from '../../chains/types.js';
import { listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import type { SimOtherChain } from '../../scripts/sim/env/chain.js';
import { startSimSolana } from '../../scripts/sim/env/solana.js';
import { startSimTron } from '../../scripts/sim/env/tron.js';
import { acknowledgeRunnerTopUps, RunnerTopUps } from '../../scripts/sim/top-ups.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

// The simulator's drain waits for the runner's token top-ups of hot wallets to be journaled as unexplained and
// acknowledges exactly those (scripts/sim/top-ups.ts). On Solana and TRON the ids the runner kept never matched the
// journal's (TRON: the 0x spelling listed as well, never journaled; Solana: lowercased base58), so every seed with
// them failed its drain. Here the service's own watcher journals a top-up made by the simulator's chain, and the
// runner's ids must name exactly those entries: the drain's wait ends, and nothing else is acknowledged.

let t: TestDatabase;
const chains: SimOtherChain[] = [];
const note = 'test: hot wallet funded by the runner';

beforeAll(async () => {
  t = await createTestDatabase();
  chains.push(await startSimSolana(11), await startSimTron(12));
}, 180_000);
afterAll(async () => {
  for (const c of chains) await c.stop().catch(() => {});
  await t?.destroy();
});

async function watchedTopUp(c: SimOtherChain): Promise<{ adapter: ChainAdapter; address: string; txIds: string[]; topUps: RunnerTopUps }> {
  const start = await c.startBlockEnv();
  const env = { ...c.env, ...start };
  const adapter = createChainAdapter(loadChainSettings(env, c.network, 'test')!, env);
  const raw = c.network === 'solana' ? Keypair.generate().publicKey.toBase58() : evmHexToTron(Wallet.createRandom().address);
  const address = adapter.normalizeAddress(raw)!;
  await registerWallets(t.db, [{ network: c.network, mode: 'test', address, merchantId: null, role: 'refunds' }]);
  const { txIds } = await c.fundHotWallet(address, 3n);
  const topUps = new RunnerTopUps();
  topUps.add(c.network, txIds);
  // Nothing journaled yet: the drain would wait for both.
  expect(await acknowledgeRunnerTopUps(t.db, topUps, note)).toHaveLength(2);
  const watcher = new NetworkWatcher({ db: t.db, adapter, pollIntervalMs: 300, startHeight: BigInt(Object.values(start)[0]!) });
  const deadline = Date.now() + 90_000;
  let left = await acknowledgeRunnerTopUps(t.db, topUps, note);
  while (left.length > 0 && Date.now() < deadline) {
    await watcher.step();
    left = await acknowledgeRunnerTopUps(t.db, topUps, note);
    if (left.length > 0) await new Promise((r) => setTimeout(r, 300));
  }
  expect(left).toEqual([]);
  return { adapter, address, txIds, topUps };
}

describe("the runner's top-ups as the watcher journals them", () => {
  it('Solana: the journal names each top-up by its base58 signature, case kept; exactly those are acknowledged', async () => {
    const sol = chains[0]!;
    const { txIds } = await watchedTopUp(sol);
    const entries = (await listUnexplained(t.db, { network: 'solana', all: true })).filter((u) => txIds.includes(u.txHash));
    expect(entries.map((u) => u.txHash).sort()).toEqual([...txIds].sort());
    expect(entries.every((u) => u.acknowledged)).toBe(true);
    // Base58 is case-sensitive: a lowercased signature is another id, never matched to the journaled one.
    expect(txIds.some((id) => id !== id.toLowerCase())).toBe(true);
    const lowered = new RunnerTopUps();
    lowered.add('solana', [txIds[0]!.toLowerCase()]);
    expect(await acknowledgeRunnerTopUps(t.db, lowered, note)).toEqual([{ network: 'solana', txId: txIds[0]!.toLowerCase() }]);
  }, 180_000);

  it('TRON: the journal names each top-up by its txID (bare hex); the 0x spelling is not a top-up of its own', async () => {
    const tron = chains[1]!;
    const { txIds } = await watchedTopUp(tron);
    for (const id of txIds) expect(id).toMatch(/^[0-9a-f]{64}$/);
    const entries = (await listUnexplained(t.db, { network: 'tron', all: true })).filter((u) => txIds.includes(u.txHash));
    expect(entries.map((u) => u.txHash).sort()).toEqual([...txIds].sort());
    expect(entries.every((u) => u.acknowledged)).toBe(true);
    // Nothing left unacknowledged on either network: no entry but the top-ups was journaled.
    expect(await listUnexplained(t.db, {})).toEqual([]);
    const prefixed = new RunnerTopUps();
    prefixed.add('tron', [`0x${txIds[0]}`]);
    expect(await acknowledgeRunnerTopUps(t.db, prefixed, note)).toHaveLength(1);
    // Same id on another network: no match either.
    const elsewhere = new RunnerTopUps();
    elsewhere.add('ethereum', txIds);
    expect(await acknowledgeRunnerTopUps(t.db, elsewhere, note)).toHaveLength(2);
  }, 180_000);
});
