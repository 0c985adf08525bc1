import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { Contract, parseUnits } from 'ethers';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployBatcher } from '../support/evm-tokens/deploy.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  fund,
  makeAdapter,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// Real watcher processes (src/watcher/start.ts) killed with SIGKILL at seeded random moments while 200 sessions are
// paid; and a standby taking over the advisory lock when the active watcher dies.
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
const children = new Set<ChildProcess>();

function childEnv(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: tdb.url,
    CHAIN_ETHEREUM_TEST_RPC_URL: node.url,
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '2',
    CHAIN_ETHEREUM_TEST_POLL_INTERVAL_MS: '100',
    CHAIN_ETHEREUM_TEST_MAX_BLOCK_RANGE: '5',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: usdt.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    WATCHER_STANDBY_RETRY_MS: '200',
  };
}

function spawnWatcher(): { child: ChildProcess; lines: string[]; waitFor(text: string, ms: number): Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/evm-tokens/watcher-child.ts'], {
    env: childEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  const lines: string[] = [];
  child.stdout!.on('data', (d) => lines.push(...String(d).split('\n').filter(Boolean)));
  child.stderr!.on('data', (d) => lines.push(`stderr: ${String(d)}`));
  return {
    child,
    lines,
    waitFor: async (text, ms) => {
      const end = Date.now() + ms;
      while (!lines.some((l) => l.includes(text))) {
        if (Date.now() > end) throw new Error(`timeout waiting for "${text}": ${lines.join(' | ')}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

function mulberry32(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
});

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await node?.stop();
  await tdb?.destroy();
});

describe('watcher processes', () => {
  it('a standby takes over within seconds when the active watcher dies', async () => {
    // Start-ups get a loaded machine's time (a process start took over 20 s under load 40 in CI, 2026-11-24); the
    // takeover after the kill is what is timed.
    const a = spawnWatcher();
    await a.waitFor('watcher active', 120_000);
    const b = spawnWatcher();
    await b.waitFor('watcher standby', 120_000);
    const killedAt = Date.now();
    a.child.kill('SIGKILL');
    await b.waitFor('watcher active', 10_000);
    expect(Date.now() - killedAt).toBeLessThan(5_000);
    b.child.kill('SIGKILL');
  }, 300_000);

  it('restarts at random moments while 200 sessions are paid: every session paid exactly once', async () => {
    const rand = mulberry32(42);
    const adapter = makeAdapter(node, [usdt]);
    const merchant = await createMerchant(tdb.db);
    const sessions = [];
    for (let i = 0; i < 200; i++)
      sessions.push(await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 100n + BigInt(i), token: 'USDT' }));
    const payer = walletAt(2, node.provider);
    await fund(usdt, payer.address, parseUnits('100000', 6));
    const batcher = await deployBatcher(walletAt(0, node.provider));
    const approve = new Contract(usdt.address, ['function approve(address,uint256)'], payer);
    await (
      await (approve.getFunction('approve') as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(
        await batcher.getAddress(),
        parseUnits('100000', 6),
      )
    ).wait();
    const pay = batcher.connect(payer) as Contract;

    let current = spawnWatcher();
    let standby = spawnWatcher();
    let kills = 0;
    const payments = (async () => {
      for (let i = 0; i < 200; i += 10) {
        const group = sessions.slice(i, i + 10);
        await (
          await (pay.getFunction('pay') as (t: string, a: string[], b: bigint[]) => Promise<{ wait(): Promise<unknown> }>)(
            usdt.address,
            group.map((s) => s.address),
            group.map((_, j) => (100n + BigInt(i + j)) * 10_000n),
          )
        ).wait();
        await node.mine(1 + Math.floor(rand() * 2));
        await new Promise((r) => setTimeout(r, 50 + rand() * 200));
      }
      await node.mine(3);
    })();
    const deadline = Date.now() + 120_000;
    let paid = 0;
    let paymentsDone = false;
    void payments.then(() => (paymentsDone = true));
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 300 + rand() * 1500));
      const r = await sql<{
        n: bigint;
      }>`select count(*)::bigint as n from payment_sessions where merchant_id = ${merchant.id} and status = 'paid'`.execute(tdb.db);
      paid = Number(r.rows[0]!.n);
      if (paid === 200 && paymentsDone) break;
      if (kills < 8) {
        // SIGKILL one of the two at random (often the active one), start a replacement
        const victim = rand() < 0.7 ? current : standby;
        victim.child.kill('SIGKILL');
        kills++;
        const fresh = spawnWatcher();
        if (victim === current) current = standby;
        standby = fresh;
      }
      if (paymentsDone) await node.mine(1);
    }
    await payments;
    for (const c of children) c.kill('SIGKILL');
    expect(kills).toBeGreaterThan(3);
    expect(paid).toBe(200);
    const events = await sql<{ aggregate_id: string; n: bigint }>`
      select aggregate_id, count(*)::bigint as n from outbox_events where merchant_id = ${merchant.id} and type = 'payment.completed' group by aggregate_id`.execute(
      tdb.db,
    );
    expect(events.rows).toHaveLength(200);
    expect(events.rows.every((e) => e.n === 1n)).toBe(true);
    const deposits = await sql<{
      n: bigint;
    }>`select count(*)::bigint as n from deposits d join payment_sessions s on s.id = d.session_id where s.merchant_id = ${merchant.id} and d.disposition = 'credited'`.execute(
      tdb.db,
    );
    expect(deposits.rows[0]!.n).toBe(200n);
  }, 180_000);
});
