import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { Contract, parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { deployBatcher } from '../support/evm-tokens/deploy.js';
import {
  createBoundSession, createMerchant, deployTokens, depositsFor, eventsFor, fund, makeAdapter, payFrom, sessionRow, walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { expireSession, type ExpiryDeps } from '../../src/ledger/sessions.js';
import { ChainRegistry } from '../../chains/registry.js';
import { hasProvisionalDepositsBefore, listUnmatchedDeposits } from '../../src/ledger/deposits.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';

// Ethereum stand-in (Anvil, 3 confirmations): detection, partials, overpayment, expiry, late payment, token shapes.
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken; // Tether-style, 6 decimals
let usdc: DeployedToken; // FiatToken-style, 6 decimals
let fake: DeployedToken; // look-alike "USDT" at another address
let adapter: EvmChainAdapter;
let watcher: NetworkWatcher;
let merchant: { id: string; account: number };
const u6 = (s: string) => parseUnits(s, 6);

async function drain() {
  for (let i = 0; i < 50; i++) if ((await watcher.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdt, usdc, fake] = await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ]) as [DeployedToken, DeployedToken, DeployedToken];
  const payer = walletAt(1, node.provider);
  await fund(usdt, payer.address, u6('1000000'));
  await fund(usdc, payer.address, u6('1000000'));
  await fund(fake, payer.address, u6('1000000'));
  adapter = makeAdapter(node, [usdt, usdc]);
  await adapter.verifyTokens();
  merchant = await createMerchant(tdb.db);
  watcher = new NetworkWatcher({ db: tdb.db, adapter, pollIntervalMs: 50 });
  await drain();
});

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('EVM deposits on Anvil (ethereum, 3 confirmations)', () => {
  it('pays in one transfer, only once the confirmation depth is reached', async () => {
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 1250n, token: 'USDC' });
    await payFrom(walletAt(1, node.provider), usdc, s.address, u6('12.50'));
    await drain();
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
    expect((await depositsFor(tdb.db, s.id))[0]!.status).toBe('provisional');
    await node.mine(1);
    await drain();
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open'); // 2 confirmations
    await node.mine(1);
    await drain();
    const row = await sessionRow(tdb.db, s.id);
    expect(row.status).toBe('paid');
    expect(row.received_base).toBe(u6('12.50'));
    const events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    expect((events[0]!.payload as { data: { object: Record<string, string> } }).data.object).toMatchObject({ amount: '12.50', currency: 'USDC', status: 'completed', session_id: s.id });
    await node.mine(5);
    await drain();
    expect((await eventsFor(tdb.db, s.id))).toHaveLength(1);
  });

  it('adds up two partial transfers; overpayment is paid with the excess recorded', async () => {
    const a = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 1000n, token: 'USDT' });
    const b = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 1000n, token: 'USDT' });
    const payer = walletAt(1, node.provider);
    await payFrom(payer, usdt, a.address, u6('4'));
    await node.mine(3);
    await drain();
    expect((await sessionRow(tdb.db, a.id))).toMatchObject({ status: 'open', received_base: u6('4') });
    await payFrom(payer, usdt, a.address, u6('6'));
    await payFrom(payer, usdt, b.address, u6('10.000001'));
    await node.mine(3);
    await drain();
    expect((await sessionRow(tdb.db, a.id))).toMatchObject({ status: 'paid', received_base: u6('10') });
    expect((await sessionRow(tdb.db, b.id))).toMatchObject({ status: 'paid', received_base: u6('10.000001') });
    const st = await sql<{ overpaid_base: bigint }>`select overpaid_base from session_settlements where session_id = ${b.id}`.execute(tdb.db);
    expect(st.rows[0]!.overpaid_base).toBe(1n);
    expect((await depositsFor(tdb.db, a.id)).map((d) => d.disposition)).toEqual(['credited', 'credited']);
  });

  it('a Tether fee emits a second Transfer to the owner: only the net amount reaches the address and counts', async () => {
    await (usdt.contract.getFunction('setParams') as (a: bigint, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(10n, u6('1')).then((t) => t.wait());
    try {
      const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 10000n, token: 'USDT' });
      await payFrom(walletAt(1, node.provider), usdt, s.address, u6('100'));
      await node.mine(3);
      await drain();
      const row = await sessionRow(tdb.db, s.id);
      expect(row.received_base).toBe(u6('99.9'));
      expect(row.status).toBe('open');
    } finally {
      await (usdt.contract.getFunction('setParams') as (a: bigint, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(0n, 0n).then((t) => t.wait());
    }
  });

  it('never credits a look-alike token or a transfer to an address that is no session\'s', async () => {
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 500n, token: 'USDT' });
    const payer = walletAt(1, node.provider);
    await payFrom(payer, fake, s.address, u6('5'));
    await payFrom(payer, usdt, walletAt(7, node.provider).address, u6('5'));
    await node.mine(3);
    await drain();
    expect(await depositsFor(tdb.db, s.id)).toEqual([]);
    const all = await sql<{ n: bigint }>`select count(*)::bigint as n from deposits where to_address = ${walletAt(7, node.provider).address.toLowerCase()}`.execute(tdb.db);
    expect(all.rows[0]!.n).toBe(0n);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
  });

  it('two transfers to two sessions in one transaction both count (distinct log indexes)', async () => {
    const batcher = await deployBatcher(walletAt(0, node.provider));
    const payer = walletAt(1, node.provider);
    const s1 = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 300n, token: 'USDC' });
    const s2 = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 700n, token: 'USDC' });
    const approve = new Contract(usdc.address, ['function approve(address,uint256) returns (bool)'], payer);
    await (await (approve.getFunction('approve') as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(await batcher.getAddress(), u6('10'))).wait();
    const pay = batcher.connect(payer) as Contract;
    await (await (pay.getFunction('pay') as (t: string, a: string[], b: bigint[]) => Promise<{ wait(): Promise<unknown> }>)(usdc.address, [s1.address, s2.address], [u6('3'), u6('7')])).wait();
    await node.mine(3);
    await drain();
    expect((await sessionRow(tdb.db, s1.id)).status).toBe('paid');
    expect((await sessionRow(tdb.db, s2.id)).status).toBe('paid');
  });

  it('underpaid then expired: payment.expired with the amount received; expiry waits for provisional deposits', async () => {
    const expiry: ExpiryDeps = { tokenDecimals: new ChainRegistry([adapter]).tokenDecimals, mayStillBePaid: (trx, s) => hasProvisionalDepositsBefore(trx, s.id, s.expires_at) };
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 2000n, token: 'USDC', expiresInSec: 4 });
    await payFrom(walletAt(1, node.provider), usdc, s.address, u6('5'));
    await drain();
    await new Promise((r) => setTimeout(r, 4200));
    // provisional deposit in a block before expires_at: expiry must wait
    expect(await expireSession(tdb.db, s.id, expiry)).toBe('deferred');
    await new Promise((r) => setTimeout(r, 1200)); // block timestamps are whole seconds: the next ones are past expires_at
    await node.mine(3);
    await drain();
    expect(await expireSession(tdb.db, s.id, expiry)).toBe('expired');
    const events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.expired']);
    expect((events[0]!.payload as { data: { object: Record<string, string> } }).data.object).toMatchObject({ amount: '5.00', currency: 'USDC' });
  });

  it('a transfer after expiry becomes an unmatched deposit listed for the operator', async () => {
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 100n, token: 'USDT' });
    await sql`update payment_sessions set expires_at = now() - interval '10 seconds' where id = ${s.id}`.execute(tdb.db);
    await payFrom(walletAt(1, node.provider), usdt, s.address, u6('1'));
    await node.mine(3);
    await drain();
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'confirmed', disposition: 'unmatched', unmatched_reason: 'late' }]);
    const list = await listUnmatchedDeposits(tdb.db, { mode: 'test' });
    expect(list.some((d) => d.sessionId === s.id && d.amountBase === u6('1'))).toBe(true);
  });

  it('refuses to start when on-chain decimals differ from the registry', async () => {
    const wrong = makeAdapter(node, [{ ...usdc, decimals: 18 }]);
    await expect(wrong.verifyTokens()).rejects.toThrow(/decimals\(\) is 6, registry says 18/);
  });
});
