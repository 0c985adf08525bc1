import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { startFaultProxy, type FaultProxy } from '../support/rpc-fault-proxy.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  depositsFor,
  eventsFor,
  fund,
  payFrom,
  sessionRow,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';
import { EvmChainAdapter } from '../../chains/evm/adapter.js';
import type { RpcCallEvent, RpcFailoverEvent, RpcHealthEvent, RpcObserver } from '../../chains/rpc/observer.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { Backoff } from '../../src/watcher/backoff.js';
import { createLogger } from '../../src/logger.js';

// Two endpoints in front of one Anvil chain: A (first, preferred) goes through a fault proxy that fails, then lags
// 50 blocks, then claims a head it does not have, then answers a forged fork; B is honest. The watcher must credit
// every deposit exactly once through all of it, and the failover must show in the logs and in the observer's calls.

let tdb: TestDatabase;
let eth: AnvilNode;
let usdc: DeployedToken;
let merchant: { id: string; account: number };
const KEY = 'k3yInTheUrl0123456789abcdef';
const u6 = (s: string) => parseUnits(s, 6);

beforeAll(async () => {
  [tdb, eth] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdc] = (await deployTokens(eth, [{ symbol: 'USDC', shape: 'fiat', decimals: 6 }])) as [DeployedToken];
  await fund(usdc, walletAt(1, eth.provider).address, u6('1000000'));
  merchant = await createMerchant(tdb.db);
});

afterAll(async () => {
  await eth?.stop();
  await tdb?.destroy();
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

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 45_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for: ${what}`);
}

describe('RPC failover over two endpoints of one chain', () => {
  let a: FaultProxy;
  let b: FaultProxy;
  const lines: string[] = [];
  const seen = new Recorder();
  let adapter: EvmChainAdapter;
  const sessions: Array<{ id: string; address: string }> = [];

  async function payAndWait(n: number, label: string) {
    const batch: Array<{ id: string; address: string }> = [];
    for (let i = 0; i < n; i++) {
      const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 100n + BigInt(sessions.length), token: 'USDC' });
      batch.push(s);
      sessions.push(s);
      await payFrom(walletAt(1, eth.provider), usdc, s.address, u6('1') + BigInt(sessions.length) * 10_000n);
      await eth.mine(1);
    }
    await eth.mine(4);
    await until(`${label}: ${n} sessions paid`, async () => {
      const rows = await tdb.db
        .selectFrom('payment_sessions')
        .select('status')
        .where(
          'id',
          'in',
          batch.map((s) => s.id),
        )
        .execute();
      return rows.every((r) => r.status === 'paid');
    });
  }

  it('fails over on errors, on a 50-block lag, on heads without blocks and on forged hashes; each deposit credited once', async () => {
    a = await startFaultProxy({ upstream: eth.url, seed: 3, hangMs: 600 });
    b = await startFaultProxy({ upstream: eth.url });
    const urlA = `${a.url}/v2/${KEY}`;
    const log = createLogger('info', {}, (l) => void lines.push(l));
    adapter = new EvmChainAdapter({
      network: 'ethereum',
      mode: 'test',
      rpcUrl: urlA,
      rpcUrls: [b.url],
      rpcTimeoutMs: 400,
      tokens: [{ symbol: 'USDC', address: usdc.address, decimals: 6 }],
      confirmation: { kind: 'depth', confirmations: 3 },
      maxBlockRange: 40,
      rpcObserver: seen,
      rpcLog: log,
    });
    const labelA = adapter.rpc.pool.endpoints[0]!.label;
    const labelB = adapter.rpc.pool.endpoints[1]!.label;
    expect(labelA).not.toContain(KEY);
    const w = new NetworkWatcher({
      db: tdb.db,
      adapter,
      pollIntervalMs: 40,
      backoff: new Backoff(10, 150, 5),
      startHeight: BigInt(await eth.provider.getBlockNumber()),
      log,
    });
    const stop = new AbortController();
    const running = w.run(stop.signal);
    try {
      // 0. Both healthy: A, first in the list, serves.
      await payAndWait(2, 'healthy');
      expect(seen.calls.filter((c) => c.endpoint === labelA && c.method === 'eth_getLogs' && c.ok).length).toBeGreaterThan(0);
      expect(seen.calls.some((c) => c.endpoint === labelB && c.method === 'eth_getLogs')).toBe(false);

      // 1. A fails: errors, 5xx, 429 and hangs. B takes over.
      a.setFaults({ errorRate: 0.3, http5xxRate: 0.3, http429Rate: 0.2, timeoutRate: 0.2 });
      await payAndWait(3, 'A failing');
      expect(seen.failovers.some((f) => f.from === labelA && f.to === labelB)).toBe(true);
      expect(seen.calls.some((c) => c.endpoint === labelA && !c.ok && c.fault !== null)).toBe(true);
      expect(seen.calls.filter((c) => c.endpoint === labelB && c.method === 'eth_getLogs' && c.ok).length).toBeGreaterThan(0);

      // 2. A answers again but 50 blocks behind: out of rotation as lagging, never read for logs above its head.
      a.setFaults({ errorRate: 0, http5xxRate: 0, http429Rate: 0, timeoutRate: 0, headLag: 50 });
      await eth.mine(60);
      await until('A seen lagging', () =>
        seen.health.some((h) => h.endpoint === labelA && h.state === 'lagging' && h.lag !== null && h.lag >= 50n),
      );
      await payAndWait(3, 'A lagging');

      // 3a. A claims a head 200 blocks ahead, without the blocks: the first poll pinned to it finds blocks missing
      //     below its own head and faults it; on probation, a claim that far ahead of B never brings it back.
      a.setFaults({ headLag: 0, headAhead: 200 });
      await until('A faulted for a missing block', () => lines.some((l) => l.includes('cooling down') && /not found|OutOfRange/.test(l)));
      const mark = seen.health.length;
      await payAndWait(2, 'A ahead');
      expect(seen.health.slice(mark).some((h) => h.endpoint === labelA && h.state === 'healthy')).toBe(false);
      expect(seen.health.slice(mark).some((h) => h.endpoint === labelB && h.state !== 'healthy')).toBe(false);

      // 3b. A answers a forged fork (every hash rewritten): a reorg signal B contradicts, so A is faulted, nothing rolled back.
      a.setFaults({ headAhead: 0, forgeHashes: true });
      const faultsBefore = lines.filter((l) => l.includes('contradicts')).length;
      await until('A back in rotation and caught lying', () => lines.filter((l) => l.includes('contradicts')).length > faultsBefore);
      await payAndWait(2, 'A forging');

      // 4. A honest again: after its probation it is preferred again.
      a.setFaults({ forgeHashes: false });
      const back = seen.failovers.length;
      await until('failover back to A', () => seen.failovers.slice(back).some((f) => f.to === labelA));
      await payAndWait(1, 'A recovered');
    } finally {
      stop.abort();
      await running;
      await Promise.all([a.close(), b.close()]);
    }

    // Exactly once: one confirmed, credited deposit per session, one completion event, no orphan, nothing else.
    for (const s of sessions) {
      expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'confirmed', disposition: 'credited' }]);
      expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
      expect((await sessionRow(tdb.db, s.id)).status).toBe('paid');
    }
    const all = await tdb.db.selectFrom('deposits').select(['status']).where('network', '=', 'ethereum').execute();
    expect(all).toHaveLength(sessions.length);
    expect(a.counts.rewritten).toBeGreaterThan(0);

    // The logs name the endpoint and the reason, and never the key in A's URL.
    const text = lines.join('');
    expect(text).not.toContain(KEY);
    const failovers = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'rpc failover');
    expect(failovers.some((l) => l.from === labelA && l.to === labelB && typeof l.reason === 'string')).toBe(true);
    const failures = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'rpc endpoint failed; cooling down');
    expect(failures.some((l) => l.endpoint === labelA && /timeout|HTTP 5|429|internal error/.test(String(l.reason)))).toBe(true);
    expect(failures.some((l) => l.endpoint === labelA && /not found|OutOfRange/.test(String(l.reason)))).toBe(true);
    expect(failures.some((l) => l.endpoint === labelA && /contradicts/.test(String(l.reason)))).toBe(true);
    expect(failures.every((l) => l.endpoint === labelA)).toBe(true);
  }, 180_000);

  it('RPC_QUORUM=2: a block is final only where both endpoints agree; a lagging one holds finality back, a forging one stops it', async () => {
    const a2 = await startFaultProxy({ upstream: eth.url, headLag: 50 });
    const b2 = await startFaultProxy({ upstream: eth.url });
    const quorum = new EvmChainAdapter({
      network: 'ethereum',
      mode: 'test',
      rpcUrl: a2.url,
      rpcUrls: [b2.url],
      rpcTimeoutMs: 1000,
      tokens: [{ symbol: 'USDC', address: usdc.address, decimals: 6 }],
      confirmation: { kind: 'depth', confirmations: 3 },
      finalityQuorum: 2,
    });
    const w = new NetworkWatcher({ db: tdb.db, adapter: quorum, pollIntervalMs: 40, backoff: new Backoff(10, 150, 5) });
    const stop = new AbortController();
    const running = w.run(stop.signal);
    const status = async (id: string) => (await sessionRow(tdb.db, id)).status;
    try {
      // A trails by 50 blocks: B alone would confirm after 3 blocks; with the quorum, only once A's final covers it.
      const s1 = await createBoundSession(tdb.db, quorum, merchant, { amountMinor: 500n, token: 'USDC' });
      await payFrom(walletAt(1, eth.provider), usdc, s1.address, u6('5'));
      await eth.mine(10);
      await until('deposit seen', async () => (await depositsFor(tdb.db, s1.id)).length === 1);
      await new Promise((r) => setTimeout(r, 500));
      expect(await status(s1.id)).toBe('open');
      expect(await depositsFor(tdb.db, s1.id)).toMatchObject([{ status: 'provisional' }]);
      await eth.mine(50);
      await until('paid once A agrees', async () => (await status(s1.id)) === 'paid');

      // A forges every hash: no quorum, nothing confirmed, until A is honest again.
      a2.setFaults({ headLag: 0, forgeHashes: true });
      const s2 = await createBoundSession(tdb.db, quorum, merchant, { amountMinor: 600n, token: 'USDC' });
      await payFrom(walletAt(1, eth.provider), usdc, s2.address, u6('6'));
      await eth.mine(10);
      await new Promise((r) => setTimeout(r, 1500));
      expect(await status(s2.id)).toBe('open');
      a2.setFaults({ forgeHashes: false });
      await until('paid once A is honest', async () => (await status(s2.id)) === 'paid');

      for (const s of [s1, s2]) {
        expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'confirmed', disposition: 'credited' }]);
        expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
      }
    } finally {
      stop.abort();
      await running;
      await Promise.all([a2.close(), b2.close()]);
    }
  }, 120_000);
});
