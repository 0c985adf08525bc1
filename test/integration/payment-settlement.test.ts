import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  depositsFor,
  eventsFor,
  fund,
  makeAdapter,
  payFrom,
  sessionRow,
  signer,
  walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { selectSessionNetwork } from '../../src/ledger/payments/network-selection.js';
import { computeLiveStatus } from '../../src/checkout/live-status.js';
import { validateEventEnvelope } from '../../src/domain/events/catalog.js';
import { serializeSession } from '../../src/api/serializers/session.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';

// Issue 13, items 13 and 19, on Anvil with the real watchers: one node carries an "ethereum" chain (6-decimal
// Tether-style USDT with a switchable fee, FiatToken-style USDC) and a "bsc" chain (18-decimal USDT and USDC).
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
let usdc: DeployedToken;
let bscUsdt: DeployedToken;
let bscUsdc: DeployedToken;
let eth: EvmChainAdapter;
let bsc: EvmChainAdapter;
let chains: ChainRegistry;
let ethWatcher: NetworkWatcher;
let bscWatcher: NetworkWatcher;
let merchant: { id: string; account: number };
const u6 = (s: string) => parseUnits(s, 6);
const u18 = (s: string) => parseUnits(s, 18);
const payer = () => walletAt(1, node.provider);
type EventObject = Record<string, string>;

async function drain() {
  for (const w of [ethWatcher, bscWatcher]) {
    let done = false;
    for (let i = 0; i < 50 && !done; i++) done = (await w.step()).caughtUp;
    if (!done) throw new Error('watcher did not catch up');
  }
}

/** Mines past the confirmation depth (3) and lets both watchers apply it. */
async function confirm() {
  await node.mine(3);
  await drain();
}

const setFee = async (bps: bigint, maxFee: bigint) =>
  (usdt.contract.getFunction('setParams') as (a: bigint, b: bigint) => Promise<{ wait(): Promise<unknown> }>)(bps, maxFee).then((t) =>
    t.wait(),
  );

/** What the hosted page asks the payer to send now (its own computation, src/checkout/live-status.ts). */
async function pageAsks(id: string, decimals: number): Promise<bigint> {
  const row = await sessionRow(tdb.db, id);
  const live = computeLiveStatus(row, [], { decimals, tipHeight: null, requiredConfirmations: null }, { returnPath: '' });
  return BigInt(live.remaining_base!);
}

async function settlement(id: string) {
  const r = await sql<{ due_base: bigint; received_base: bigint; overpaid_base: bigint; shortfall_base: bigint }>`
    select due_base, received_base, overpaid_base, shortfall_base from session_settlements where session_id = ${id}`.execute(tdb.db);
  return r.rows[0];
}

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdt, usdc, bscUsdt, bscUsdc] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'fiat', decimals: 18 },
    { symbol: 'USDC', shape: 'fiat', decimals: 18 },
  ])) as [DeployedToken, DeployedToken, DeployedToken, DeployedToken];
  for (const [tok, amount] of [
    [usdt, u6('1000000')],
    [usdc, u6('1000000')],
    [bscUsdt, u18('1000000')],
    [bscUsdc, u18('1000000')],
  ] as const) {
    await fund(tok, payer().address, amount);
  }
  eth = makeAdapter(node, [usdt, usdc]);
  bsc = makeAdapter(node, [bscUsdt, bscUsdc], { network: 'bsc' });
  await eth.verifyTokens();
  await bsc.verifyTokens();
  merchant = await createMerchant(tdb.db);
  chains = new ChainRegistry([eth, bsc]);
  ethWatcher = new NetworkWatcher({ db: tdb.db, adapter: eth, pollIntervalMs: 50 });
  bscWatcher = new NetworkWatcher({ db: tdb.db, adapter: bsc, pollIntervalMs: 50 });
  await drain();
});

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('sub-unit dust (item 19)', () => {
  it('a payer who sends exactly what the page asks through a Tether fee finishes: paid, shortfall recorded', async () => {
    await setFee(10n, u6('1')); // 0.1 %, at most 1 USDT
    try {
      const s = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 10000n, token: 'USDT' });
      expect(await pageAsks(s.id, 6)).toBe(u6('100'));
      await payFrom(payer(), usdt, s.address, u6('100'));
      await confirm();
      expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'open', received_base: u6('99.9') });
      const asked = await pageAsks(s.id, 6);
      expect(asked).toBe(u6('0.1'));
      await payFrom(payer(), usdt, s.address, asked); // the fee takes 0.0001 of it: 0.0001 would remain
      await confirm();
      const row = await sessionRow(tdb.db, s.id);
      expect(row).toMatchObject({ status: 'paid', received_base: u6('99.9999'), shortfall_base: 100n });
      expect(await settlement(s.id)).toMatchObject({
        due_base: u6('100'),
        received_base: u6('99.9999'),
        overpaid_base: 0n,
        shortfall_base: 100n,
      });
      const live = computeLiveStatus(row, [], { decimals: 6, tipHeight: null, requiredConfirmations: null }, { returnPath: '' });
      expect(live).toMatchObject({ state: 'paid', shortfall: '0.0001', shortfall_base: '100' });
      expect(serializeSession(row, { checkoutBaseUrl: 'http://x/pay', tokenDecimals: chains.tokenDecimals })).toMatchObject({
        payment_status: 'paid',
        shortfall: '0.0001',
        shortfall_base: '100',
      });
      const events = await eventsFor(tdb.db, s.id);
      expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    } finally {
      await setFee(0n, 0n);
    }
  });

  it('18-decimal BSC token: a remainder below 0.01 settles, exactly 0.01 does not', async () => {
    const short = await createBoundSession(tdb.db, bsc, merchant, { amountMinor: 1000n, token: 'USDC' });
    const oneMinor = await createBoundSession(tdb.db, bsc, merchant, { amountMinor: 1000n, token: 'USDC' });
    await payFrom(payer(), bscUsdc, short.address, u18('10') - 10n ** 16n + 1n); // short by 0.01 minus one wei
    await payFrom(payer(), bscUsdc, oneMinor.address, u18('9.99'));
    await confirm();
    const shortRow = await sessionRow(tdb.db, short.id);
    expect(shortRow).toMatchObject({ status: 'paid', shortfall_base: 10n ** 16n - 1n });
    expect(serializeSession(shortRow, { checkoutBaseUrl: 'http://x/pay', tokenDecimals: chains.tokenDecimals })).toMatchObject({
      shortfall: '0.009999999999999999',
      shortfall_base: '9999999999999999',
    });
    expect(await settlement(short.id)).toMatchObject({ shortfall_base: 10n ** 16n - 1n, overpaid_base: 0n });
    expect(await sessionRow(tdb.db, oneMinor.id)).toMatchObject({ status: 'open', received_base: u18('9.99'), shortfall_base: null });
    expect(await pageAsks(oneMinor.id, 18)).toBe(u18('0.01'));
  });

  it('6-decimal token paid in full or over: shortfall 0, overpayment recorded as before', async () => {
    const s = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 500n, token: 'USDC' });
    await payFrom(payer(), usdc, s.address, u6('5.000001'));
    await confirm();
    const row = await sessionRow(tdb.db, s.id);
    expect(row).toMatchObject({ status: 'paid', shortfall_base: 0n });
    expect(serializeSession(row, { checkoutBaseUrl: 'http://x/pay', tokenDecimals: chains.tokenDecimals })).not.toHaveProperty(
      'shortfall_base',
    );
    expect(await settlement(s.id)).toMatchObject({ overpaid_base: 1n, shortfall_base: 0n });
  });
});

describe('underpayment tolerance per merchant (item 19)', () => {
  it('50 bps: 99.50 of 100.00 is paid with its shortfall; one base unit less stays open; other merchants keep 0', async () => {
    const tolerant = await createMerchant(tdb.db);
    await sql`update merchants set underpayment_tolerance_bps = 50 where id = ${tolerant.id}`.execute(tdb.db);
    const atLimit = await createBoundSession(tdb.db, eth, tolerant, { amountMinor: 10000n, token: 'USDC' });
    const below = await createBoundSession(tdb.db, eth, tolerant, { amountMinor: 10000n, token: 'USDC' });
    const strict = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 10000n, token: 'USDC' });
    const bscAtLimit = await createBoundSession(tdb.db, bsc, tolerant, { amountMinor: 10000n, token: 'USDT' });
    await payFrom(payer(), usdc, atLimit.address, u6('99.5'));
    await payFrom(payer(), usdc, below.address, u6('99.5') - 1n);
    await payFrom(payer(), usdc, strict.address, u6('99.5'));
    await payFrom(payer(), bscUsdt, bscAtLimit.address, u18('99.5'));
    await confirm();
    expect(await sessionRow(tdb.db, atLimit.id)).toMatchObject({ status: 'paid', shortfall_base: u6('0.5') });
    expect(await settlement(atLimit.id)).toMatchObject({ due_base: u6('100'), received_base: u6('99.5'), shortfall_base: u6('0.5') });
    expect(await sessionRow(tdb.db, below.id)).toMatchObject({ status: 'open', received_base: u6('99.5') - 1n });
    expect(await sessionRow(tdb.db, strict.id)).toMatchObject({ status: 'open' });
    expect(await sessionRow(tdb.db, bscAtLimit.id)).toMatchObject({ status: 'paid', shortfall_base: u18('0.5') });
    // A partial that brings the short session within tolerance completes it.
    await payFrom(payer(), usdc, below.address, 1n);
    await confirm();
    expect(await sessionRow(tdb.db, below.id)).toMatchObject({ status: 'paid', shortfall_base: u6('0.5') });
    expect((await eventsFor(tdb.db, below.id)).map((e) => e.type)).toEqual(['payment.completed']);
  });
});

describe('payment.failed (item 13)', () => {
  it('the other stablecoin sent to an open session: payment.failed for that transfer, session still payable', async () => {
    const s = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 700n, token: 'USDT' });
    await payFrom(payer(), usdc, s.address, u6('7'));
    await confirm();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'open', received_base: 0n });
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([
      { status: 'confirmed', disposition: 'unmatched', unmatched_reason: 'not_selected' },
    ]);
    let events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.failed']);
    expect(validateEventEnvelope(events[0]!.payload)).toEqual([]);
    expect((events[0]!.payload as { data: { object: EventObject } }).data.object).toEqual({
      amount: '7.00',
      status: 'failed',
      currency: 'USDC',
      exchange_rate: '1',
      order_id: expect.any(String),
      session_id: s.id,
      source: 'api',
    });
    await node.mine(5);
    await drain();
    expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.failed']); // once per transfer
    await payFrom(payer(), usdt, s.address, u6('7'));
    await confirm();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'paid', received_base: u6('7') });
    events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.failed', 'payment.completed']);
  });

  it('a transfer on the network the payer left: payment.failed; two such transfers, two events', async () => {
    const s = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 300n, token: 'USDT' });
    const bscAddress = await bsc.deriveDepositAddress(signer, merchant.account, (await sessionRow(tdb.db, s.id)).address_index);
    const moved = await selectSessionNetwork(tdb.db, s.id, { network: 'bsc', token: 'USDT', address: bscAddress });
    expect(moved.kind).toBe('selected');
    await payFrom(payer(), usdt, s.address, u6('1')); // the Ethereum address shown before the switch
    await payFrom(payer(), usdt, s.address, u6('2'));
    await confirm();
    const events = await eventsFor(tdb.db, s.id);
    expect(events.map((e) => e.type)).toEqual(['payment.failed', 'payment.failed']);
    expect(events.map((e) => (e.payload as { data: { object: EventObject } }).data.object.amount)).toEqual(['1.00', '2.00']);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
    await payFrom(payer(), bscUsdt, bscAddress, u18('3'));
    await confirm();
    expect((await sessionRow(tdb.db, s.id)).status).toBe('paid');
  });

  it('no payment.failed once the session is paid, canceled, for a transfer after expires_at, or for a zero-value one', async () => {
    const zero = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 100n, token: 'USDT' });
    await payFrom(payer(), usdc, zero.address, 0n);
    const paid = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 100n, token: 'USDT' });
    const canceled = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 100n, token: 'USDT' });
    const late = await createBoundSession(tdb.db, eth, merchant, { amountMinor: 100n, token: 'USDT' });
    await payFrom(payer(), usdt, paid.address, u6('1'));
    await confirm();
    await sql`update payment_sessions set status = 'canceled', canceled_at = now() where id = ${canceled.id}`.execute(tdb.db);
    await sql`update payment_sessions set expires_at = now() - interval '10 seconds' where id = ${late.id}`.execute(tdb.db);
    for (const s of [paid, canceled, late]) await payFrom(payer(), usdc, s.address, u6('1'));
    await confirm();
    expect((await eventsFor(tdb.db, paid.id)).map((e) => e.type)).toEqual(['payment.completed']);
    expect(await eventsFor(tdb.db, canceled.id)).toEqual([]);
    expect(await eventsFor(tdb.db, late.id)).toEqual([]);
    expect(await eventsFor(tdb.db, zero.id)).toEqual([]);
    for (const s of [paid, canceled, late, zero]) {
      expect((await depositsFor(tdb.db, s.id)).filter((d) => d.unmatched_reason === 'not_selected')).toHaveLength(1);
    }
  });
});
