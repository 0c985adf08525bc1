import { parseUnits } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  fund,
  makeAdapter,
  payFrom,
  sessionRow,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// The watcher's polling (docs/watcher.md "Polling"): between full steps it reads the head, and a new block starts
// the next step at once. The poll interval here is an hour, so a session paid while the test waits can only have
// been credited by a step that a head check started.

let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
  await fund(usdt, walletAt(1, node.provider).address, parseUnits('1000', 6));
}, 120_000);
afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('watcher polling', () => {
  it('a new head starts the next step long before the poll interval: the confirming block is credited', async () => {
    const adapter = makeAdapter(node, [usdt]);
    const merchant = await createMerchant(tdb.db);
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 500n, token: 'USDT' });
    const moved: number[] = [];
    const steps: bigint[] = [];
    const failed: number[] = [];
    const watcher = new NetworkWatcher({
      db: tdb.db,
      adapter,
      pollIntervalMs: 3_600_000,
      headPollMs: 50,
      onHeadMoved: () => moved.push(Date.now()),
      onCommitted: (r) => steps.push(r.poll.processedTip.height),
      onStepFailed: () => failed.push(Date.now()),
    });
    const stop = new AbortController();
    const running = watcher.run(stop.signal);
    try {
      for (const end = Date.now() + 60_000; steps.length === 0 && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
      expect(steps).toHaveLength(1); // the first step runs at once; the next full poll is an hour away
      await payFrom(walletAt(1, node.provider), usdt, s.address, parseUnits('5', 6));
      await node.mine(3); // three confirmations
      for (const end = Date.now() + 60_000; (await sessionRow(tdb.db, s.id)).status !== 'paid' && Date.now() < end; ) {
        await new Promise((r) => setTimeout(r, 50));
      }
      expect((await sessionRow(tdb.db, s.id)).status).toBe('paid');
      expect(moved.length).toBeGreaterThan(0);
      // Every step after the first was started by a head check (or retried a failed step: none on a local node).
      expect(steps.length).toBeLessThanOrEqual(moved.length + 1 + failed.length);
    } finally {
      stop.abort();
      await running;
    }
  });

  it("tells the adapter a poll was committed only after its commit: a failed commit's poll is never marked learned", async () => {
    const adapter = makeAdapter(node, [usdt]);
    const merchant = await createMerchant(tdb.db);
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 500n, token: 'USDT' });
    // Each poll's result gets a `committed` that records which poll it was; the first commit fails (as when the
    // database goes down between the poll and its commit).
    const marked: number[] = [];
    let polls = 0;
    const tracked = Object.create(adapter) as typeof adapter;
    tracked.pollTransfers = async (cursor, watch) => {
      const r = await adapter.pollTransfers(cursor, watch);
      const n = ++polls;
      // Armed: the next transaction, the one committing this poll, fails.
      if (armed) [armed, failCommit] = [false, true];
      return { ...r, committed: () => marked.push(n) };
    };
    let armed = false;
    let failCommit = false;
    const db = new Proxy(tdb.db, {
      get(target, prop, receiver) {
        if (prop === 'transaction' && failCommit) {
          failCommit = false;
          return () => ({ execute: async () => Promise.reject(new Error('commit failed (test)')) });
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const watcher = new NetworkWatcher({ db, adapter: tracked, pollIntervalMs: 3_600_000 });
    await watcher.step(); // the cursor stored, the first poll committed
    expect(marked).toEqual([1]);
    await payFrom(walletAt(1, node.provider), usdt, s.address, parseUnits('5', 6));
    await node.mine(3);
    armed = true;
    await expect(watcher.step()).rejects.toThrow('commit failed (test)');
    expect(polls).toBe(2);
    expect(marked).toEqual([1]);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
    await watcher.step();
    expect(marked).toEqual([1, 3]);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('paid');
  });
});
