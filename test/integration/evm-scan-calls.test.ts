import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnits } from 'ethers';
import type { ConfirmationPolicy } from '../../chains/evm/block-scanner.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startFaultProxy } from '../support/rpc-fault-proxy.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  depositsFor,
  fund,
  makeAdapter,
  payFrom,
  sessionRow,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// Issue 37 ("Block rate"): a watcher reads ranges of blocks, and its RPC calls per poll stay bounded by a constant plus
// the blocks holding a matched transfer, whatever the number of blocks per poll (Arbitrum mines about 4 a second, and
// its `finalized` tag lags thousands of blocks). Before, the scanner read a header for every block above the final
// height: with 400 blocks per poll and a final height 64 (tag) or 100 (depth) blocks back, 60 to 400 calls a poll.
// Then a fake provider (test/support/rpc-fault-proxy.ts) capping eth_getLogs at 50 blocks and at 3 logs: the watcher
// catches up over 1,000 blocks with bounded calls per poll and misses no transfer.

/** Per poll: pin (eth_blockNumber), the range end twice, the finalized tag, the tip, the final height anchor, getLogs. */
const CALLS_PER_POLL = 7;

let t: TestDatabase;
let eth: AnvilNode;
let usdc: DeployedToken;
let merchant: { id: string; account: number };
const payer = () => walletAt(1, eth.provider);
const u6 = (s: string) => parseUnits(s, 6);

beforeAll(async () => {
  [t, eth] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdc] = (await deployTokens(eth, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
  await fund(usdc, payer().address, u6('1000000'));
  merchant = await createMerchant(t.db);
}, 120_000);
afterAll(async () => {
  await eth?.stop();
  await t?.destroy();
});

async function drain(w: NetworkWatcher): Promise<void> {
  for (let i = 0; i < 500; i++) if ((await w.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

const session = (amount: bigint) =>
  createBoundSession(t.db, makeAdapter(eth, [usdc]), merchant, { amountMinor: amount, token: 'USDC', expiresInSec: 7 * 86_400 });

describe('RPC calls per poll at a fast block rate (400 blocks between polls)', () => {
  for (const confirmation of [{ kind: 'finalized' }, { kind: 'depth', confirmations: 100 }] as ConfirmationPolicy[]) {
    it(`${confirmation.kind === 'finalized' ? "Anvil's finalized tag (64 blocks back)" : '100 confirmations'}: a constant plus the matched blocks`, async () => {
      const adapter = makeAdapter(eth, [usdc], { confirmation, maxBlockRange: 1000 });
      await t.db.deleteFrom('chain_cursors').execute();
      const w = new NetworkWatcher({ db: t.db, adapter, pollIntervalMs: 50, startHeight: BigInt(await eth.provider.getBlockNumber()) });
      await drain(w);
      const paid: string[] = [];
      const perPoll: Array<{ calls: number; observed: number }> = [];
      for (let round = 0; round < 3; round++) {
        // 400 blocks, two of them holding a payment to a session.
        const a = await session(100n);
        const b = await session(200n);
        await eth.mine(150);
        await payFrom(payer(), usdc, a.address, u6('1'));
        await eth.mine(100);
        await payFrom(payer(), usdc, b.address, u6('2'));
        await eth.mine(148);
        paid.push(a.id, b.id);
        const before = adapter.rpc.totalCalls;
        const r = await w.step();
        perPoll.push({ calls: adapter.rpc.totalCalls - before, observed: r.observed });
        expect(r.caughtUp).toBe(true);
        expect(r.observed).toBe(2);
      }
      for (const p of perPoll) expect(p.calls).toBeLessThanOrEqual(CALLS_PER_POLL + p.observed);
      // And then final: each payment credited once.
      await eth.mine(confirmation.kind === 'finalized' ? 70 : 110);
      await drain(w);
      for (const id of paid) {
        expect((await sessionRow(t.db, id)).status).toBe('paid');
        expect((await depositsFor(t.db, id)).map((d) => d.status)).toEqual(['confirmed']);
      }
      // Tracking the head with nothing new: at most the pin, the finalized tag and the tip check.
      const idle = adapter.rpc.totalCalls;
      await w.step();
      expect(adapter.rpc.totalCalls - idle).toBeLessThanOrEqual(3);
    }, 120_000);
  }
});

describe('a provider capping eth_getLogs at 50 blocks and 3 logs (fake provider limits)', () => {
  it('catches up over 1,000 blocks splitting refused ranges, bounded calls per poll, no transfer missed', async () => {
    const proxy = await startFaultProxy({ upstream: eth.url, seed: 3, maxLogsRange: 50, maxLogsResults: 3 });
    try {
      const adapter = makeAdapter(eth, [usdc], { url: proxy.url, maxBlockRange: 1000 });
      await t.db.deleteFrom('chain_cursors').execute();
      const start = BigInt(await eth.provider.getBlockNumber());
      const sessions: Array<{ id: string; address: string }> = [];
      // Eight payments spread over 1,000 blocks, and five more in five consecutive blocks (more logs than the cap).
      for (let i = 0; i < 8; i++) {
        const s = await session(100n + BigInt(i));
        await payFrom(payer(), usdc, s.address, u6('1') + BigInt(i) * 10_000n);
        await eth.mine(110);
        sessions.push(s);
      }
      for (let i = 0; i < 5; i++) {
        const s = await session(300n + BigInt(i));
        await payFrom(payer(), usdc, s.address, u6('3') + BigInt(i) * 10_000n);
        sessions.push(s);
      }
      await eth.mine(200);
      const w = new NetworkWatcher({ db: t.db, adapter, pollIntervalMs: 50, startHeight: start });
      await w.step(); // the cursor at the start height
      const perPoll: Array<{ calls: number; refused: number; observed: number }> = [];
      for (let i = 0; i < 200; i++) {
        const calls = adapter.rpc.totalCalls;
        const refused = proxy.counts.range;
        const r = await w.step();
        perPoll.push({ calls: adapter.rpc.totalCalls - calls, refused: proxy.counts.range - refused, observed: r.observed });
        if (r.caughtUp) break;
      }
      expect(proxy.counts.range).toBeGreaterThan(0);
      // Each poll: the constant, its matched blocks, and one getLogs per refusal; refusals per poll are few (the
      // working range halves on each and then stays within the cap), never one per block.
      for (const p of perPoll) {
        expect(p.calls).toBeLessThanOrEqual(CALLS_PER_POLL + p.observed + p.refused);
        expect(p.refused).toBeLessThanOrEqual(Math.ceil(Math.log2(1000)) + 1);
      }
      // Catch-up in about 1,100 / 50 polls, not one per block.
      expect(perPoll.length).toBeLessThan(1_200 / 25);
      for (const s of sessions) {
        const deposits = await depositsFor(t.db, s.id);
        expect(deposits).toHaveLength(1);
        expect((await sessionRow(t.db, s.id)).status).toBe('paid');
      }
    } finally {
      await proxy.close();
    }
  }, 120_000);
});
