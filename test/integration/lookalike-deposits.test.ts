import { Wallet } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { liveStatusOf } from '../../src/checkout/page-data.js';
import type { ChainAdapter } from '../../chains/types.js';
import { UNSUPPORTED_TOKEN_NOTICE } from '../../src/domain/unmatched-reasons.js';
import { listUnmatchedDeposits } from '../../src/ledger/payments/deposits.js';
import { findSessionReceived } from '../../src/ledger/payments/session-payments.js';
import { refundable } from '../../src/ledger/refunds/refund-sources.js';
import { paymentDetail } from '../../src/operations/payments-detail.js';
import { listStranded } from '../../src/operations/stranded.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { NetworkWatcher, type WatcherLogger } from '../../src/watcher/network-watcher.js';
import { anvilPayer, type AnvilPayer } from '../support/adapter-conformance/anvil-payer.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  eventsFor,
  fund,
  sessionRow,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// Issue 37: a bridged look-alike (USDbC, USDC.e) paid to a deposit address is recorded as an unmatched deposit of an
// unsupported token, visible to the operator, never credited. Real Anvil and PostgreSQL; the look-alike is a FiatToken
// that calls itself "USDC" on chain, at another address, configured by CHAIN_ETHEREUM_TEST_LOOKALIKE_CONTRACTS and
// named USDC.e there. The adapter and watcher are the service's own (settings -> createChainAdapter -> NetworkWatcher).

let tdb: TestDatabase;
let node: AnvilNode;
let payer: AnvilPayer;
let usdc: DeployedToken;
let lookAlike: DeployedToken;
let adapter: ChainAdapter;
let chains: ChainRegistry;
let watcher: NetworkWatcher;
let merchant: { id: string; account: number };
const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
let unsupportedConfirmed = 0;

const log: WatcherLogger = {
  info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
  warn: (obj, msg) => lines.push({ level: 'warn', obj, msg }),
  error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
};

async function drain() {
  for (let i = 0; i < 50; i++) if ((await watcher.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

async function depositRows(sessionId: string | null, to?: string) {
  let q = tdb.db.selectFrom('deposits').selectAll();
  q = sessionId === null ? q.where('to_address', '=', to!) : q.where('session_id', '=', sessionId);
  return q.orderBy('block_number').orderBy('log_index').execute();
}

async function journalEntries(txHash: string): Promise<number> {
  const r = await sql<{ n: string }>`select count(*)::text as n from journal_entries where tx_hash = ${txHash}`.execute(tdb.db);
  return Number(r.rows[0]!.n);
}

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  const [usdt, u, alike] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ])) as [DeployedToken, DeployedToken, DeployedToken];
  usdc = u;
  lookAlike = alike;
  payer = anvilPayer(node);
  for (const t of [usdc, lookAlike]) await fund(t, payer.address, 10n ** 12n);
  const env = {
    CHAIN_ETHEREUM_TEST_RPC_URL: node.url,
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '3',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: usdt.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_USDC_CONTRACT: usdc.address,
    CHAIN_ETHEREUM_TEST_USDC_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_LOOKALIKE_CONTRACTS: `USDC.e:${lookAlike.address}:6`,
  };
  const settings = loadChainSettings(env, 'ethereum', 'test')!;
  adapter = createChainAdapter(settings, env);
  chains = new ChainRegistry([adapter]);
  merchant = await createMerchant(tdb.db);
  watcher = new NetworkWatcher({
    db: tdb.db,
    adapter,
    pollIntervalMs: 50,
    log,
    onCommitted: (r) => {
      unsupportedConfirmed += r.unsupportedConfirmed ?? 0;
    },
  });
  await drain();
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('a look-alike token paid to a deposit address (issue 37)', () => {
  let sessionId: string;
  let address: string;
  let alikeTx: string;

  it('is seen as a provisional unsupported_token deposit, not money on its way, and a reorg orphans it', async () => {
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 500n, token: 'USDC' });
    sessionId = s.id;
    address = s.address;
    const journalBefore = await sql<{ n: string }>`select count(*)::text as n from journal_entries`.execute(tdb.db);

    const t = await payer.reorg(lookAlike, address, 5_000_000n);
    alikeTx = t.txHash;
    await drain();
    expect(await depositRows(sessionId)).toMatchObject([
      {
        tx_hash: alikeTx,
        token: 'USDC.e',
        token_contract: lookAlike.address,
        amount_base: 5_000_000n,
        status: 'provisional',
        disposition: null,
        unmatched_reason: 'unsupported_token',
        session_id: sessionId,
      },
    ]);
    // Not money: journaled nowhere, and the hosted page shows nothing on its way (no confirmations counted).
    expect(await journalEntries(alikeTx)).toBe(0);
    const page = await liveStatusOf({ db: tdb.db, adapters: chains }, await sessionRow(tdb.db, sessionId), { returnPath: '/r' });
    expect(page).toMatchObject({ state: 'waiting', pending: '0.00', remaining: '5.00', confirmations: null });
    const seen = lines.find((l) => l.msg.startsWith('unsupported token deposit seen'));
    expect(seen?.level).toBe('warn');
    expect(seen?.obj).toMatchObject({
      network: 'ethereum',
      mode: 'test',
      session_id: sessionId,
      tx_hash: alikeTx,
      token: 'USDC.e',
      token_contract: lookAlike.address,
      amount_base: '5000000',
    });

    await t.forget();
    await drain();
    expect(await depositRows(sessionId)).toMatchObject([{ tx_hash: alikeTx, status: 'orphaned', unmatched_reason: 'unsupported_token' }]);

    // Landing again revives it, still unsupported; final, it is unmatched and the session received nothing.
    await t.replay();
    await drain();
    await node.mine(3);
    await drain();
    expect(await depositRows(sessionId)).toMatchObject([
      { tx_hash: alikeTx, status: 'confirmed', disposition: 'unmatched', unmatched_reason: 'unsupported_token', token: 'USDC.e' },
    ]);
    expect(await sessionRow(tdb.db, sessionId)).toMatchObject({ status: 'open', received_base: 0n });
    expect(await eventsFor(tdb.db, sessionId)).toEqual([]); // no payment.completed, no payment.failed
    expect(await journalEntries(alikeTx)).toBe(0);
    const journalAfter = await sql<{ n: string }>`select count(*)::text as n from journal_entries`.execute(tdb.db);
    expect(journalAfter.rows[0]!.n).toBe(journalBefore.rows[0]!.n);
    expect(unsupportedConfirmed).toBe(1);
    expect(lines.some((l) => l.msg.startsWith('unsupported token deposit confirmed') && l.obj.tx_hash === alikeTx)).toBe(true);
  });

  it('is shown to the operator (CLI list, stranded money, payment detail) and kept from the API and refunds', async () => {
    const cli = (await listUnmatchedDeposits(tdb.db, { mode: 'test' })).find((d) => d.txHash === alikeTx);
    expect(cli).toMatchObject({
      token: 'USDC.e',
      tokenContract: lookAlike.address,
      amountBase: 5_000_000n,
      sessionId,
      reason: 'unsupported_token',
      notice: UNSUPPORTED_TOKEN_NOTICE,
    });

    const stranded = await listStranded({ db: tdb.db, chains }, { kind: 'deposit', limit: 50 });
    const row = stranded.data.find((d) => d.tx_hash === alikeTx)!;
    expect(row).toMatchObject({ token: 'USDC.e', received: '5.00', refundable: null, reason: 'unsupported_token', session_id: sessionId });
    expect(row.notice).toBe(`${UNSUPPORTED_TOKEN_NOTICE} (a look-alike configured in CHAIN_ETHEREUM_TEST_LOOKALIKE_CONTRACTS)`);

    const detail = await paymentDetail({ db: tdb.db, chains }, (await sessionRow(tdb.db, sessionId)) as never);
    expect(detail.deposits).toMatchObject([
      {
        tx_hash: alikeTx,
        token: 'USDC.e',
        amount: '5.00',
        status: 'confirmed',
        unsupported: { note: 'a look-alike configured in CHAIN_ETHEREUM_TEST_LOOKALIKE_CONTRACTS' },
      },
    ]);
    expect(detail.timeline.find((e) => e.kind === 'deposit_confirmed')?.detail).toContain('USDC.e (unsupported token, never credited)');

    // The API's payments[] (USDT | USDC only) leaves it out; the ledger refuses to refund it.
    expect((await findSessionReceived(tdb.db, sessionId))?.payments).toEqual([]);
    const deposit = (await depositRows(sessionId))[0]!;
    await expect(refundable(tdb.db, chains.tokenDecimals, { sessionId: null, depositId: deposit.id })).rejects.toThrow(
      /look-alike of the token, are not credited and cannot be refunded/,
    );
  });

  it('then the real token pays the session as usual, and payment.completed lists only the real transfer', async () => {
    const tx = await payer.pay(usdc, [{ to: address, amount: 5_000_000n }]);
    await drain();
    await node.mine(3);
    await drain();
    expect(await sessionRow(tdb.db, sessionId)).toMatchObject({ status: 'paid', received_base: 5_000_000n });
    const events = await eventsFor(tdb.db, sessionId);
    expect(events.map((e) => e.type)).toEqual(['payment.completed']);
    const payments = (events[0]!.payload as { data: { object: { payments: Array<{ transaction_hash: string; token: string }> } } }).data
      .object.payments;
    expect(payments.map((p) => [p.transaction_hash, p.token])).toEqual([[tx, 'USDC']]);
    expect((await findSessionReceived(tdb.db, sessionId))?.payments.map((p) => p.token)).toEqual(['USDC']);
    expect(await journalEntries(tx)).toBe(1);
  });

  it('paid to an address that is not ours, records nothing', async () => {
    const stranger = Wallet.createRandom().address.toLowerCase();
    await payer.pay(lookAlike, [{ to: stranger, amount: 7n }]);
    await node.mine(4);
    await drain();
    expect(await depositRows(null, stranger)).toEqual([]);
  });
});
