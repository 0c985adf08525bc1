import { execFile } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HDNodeWallet, parseEther, parseUnits } from 'ethers';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { TEST_MASTER_KEY } from '../support/api-harness.js';
import { REDIS_URL } from '../support/env.js';
import {
  TEST_MNEMONIC,
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
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { reconcileChain } from '../../src/reconcile/reconcile.js';
import { acknowledgeUnexplained, listUnexplained } from '../../src/ledger/journal/unexplained.js';
import { unbalancedEntries } from '../../src/ledger/journal/balances.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, addressPath } from '../../chains/hd/bip44.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';

// The journal and reconcile on Anvil (docs/journal.md): deposits (partial, overpaid, late) journaled as they are seen,
// a reorg of a seen-but-not-final deposit reversed by new entries, reconcile at zero difference for every address; then
// a transfer made with a deposit address's key outside the service is journaled as unexplained and reconcile names
// the address and the exact base-unit difference.

let tdb: TestDatabase;
let eth: AnvilNode;
let usdc: DeployedToken;
let usdt: DeployedToken;
let adapter: EvmChainAdapter;
let merchant: { id: string; account: number };
const u6 = (s: string) => parseUnits(s, 6);

/** The operator CLI against this test's database and Anvil node. */
function cli(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = {
    ...process.env,
    MASTER_KEY: TEST_MASTER_KEY,
    DATABASE_URL: tdb.url,
    REDIS_URL,
    LOG_LEVEL: 'silent',
    CHAIN_ETHEREUM_TEST_RPC_URL: eth.url,
    CHAIN_ETHEREUM_TEST_CHAIN_ID: '1',
    CHAIN_ETHEREUM_TEST_CONFIRMATIONS: '3',
    CHAIN_ETHEREUM_TEST_USDT_CONTRACT: usdt.address,
    CHAIN_ETHEREUM_TEST_USDT_DECIMALS: '6',
    CHAIN_ETHEREUM_TEST_USDC_CONTRACT: usdc.address,
    CHAIN_ETHEREUM_TEST_USDC_DECIMALS: '6',
  };
  return new Promise((resolve) => {
    execFile('node', ['--import', 'tsx', 'src/cli/index.ts', ...args], { env, timeout: 60_000 }, (error, stdout, stderr) => {
      const e = error as (Error & { code?: number }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : null) : 0, out: stdout, err: stderr });
    });
  });
}

async function drain(w: NetworkWatcher) {
  for (let i = 0; i < 100; i++) if ((await w.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

beforeAll(async () => {
  [tdb, eth] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 })]);
  [usdc, usdt] = (await deployTokens(eth, [
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  await fund(usdc, walletAt(1, eth.provider).address, u6('1000000'));
  await fund(usdt, walletAt(1, eth.provider).address, u6('1000000'));
  adapter = makeAdapter(eth, [usdc, usdt]);
  merchant = await createMerchant(tdb.db);
});

afterAll(async () => {
  await eth?.stop();
  await tdb?.destroy();
});

describe('journal and reconcile', () => {
  it('journals deposits, reverses a reorged one, reconciles to zero; an outside transfer is unexplained and named', async () => {
    const w = new NetworkWatcher({ db: tdb.db, adapter, pollIntervalMs: 50 });
    await drain(w);
    const payer = walletAt(1, eth.provider);
    const partial = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 1000n, token: 'USDC' });
    const over = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 500n, token: 'USDT' });
    const late = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 300n, token: 'USDC', expiresInSec: 1 });
    await payFrom(payer, usdc, partial.address, u6('4'));
    await payFrom(payer, usdc, partial.address, u6('6'));
    await payFrom(payer, usdt, over.address, u6('7.5'));
    await new Promise((r) => setTimeout(r, 1500));
    await payFrom(payer, usdc, late.address, u6('3'));
    await eth.mine(4);
    await drain(w);
    expect((await sessionRow(tdb.db, partial.id)).status).toBe('paid');
    expect((await sessionRow(tdb.db, over.id)).status).toBe('paid');

    // A deposit seen in a block that a reorg then removes: journaled, then reversed by a new entry (never deleted).
    const reorged = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 200n, token: 'USDC' });
    const snap = await eth.rpc<string>('evm_snapshot');
    const lostTx = await payFrom(payer, usdc, reorged.address, u6('2'));
    await drain(w);
    const seen = await tdb.db.selectFrom('journal_entries').selectAll().where('tx_hash', '=', lostTx.toLowerCase()).execute();
    expect(seen).toHaveLength(1);
    await eth.rpc('evm_revert', [snap]);
    await eth.mine(1); // a shorter replacement branch, still above the final height
    await drain(w);
    const after = await tdb.db.selectFrom('journal_entries').selectAll().where('tx_hash', '=', lostTx.toLowerCase()).execute();
    expect(after).toHaveLength(2);
    const reversal = after.find((e) => e.reverses_id !== null)!;
    expect(reversal.reverses_id).toBe(seen[0]!.id);
    const legs = await tdb.db.selectFrom('journal_legs').selectAll().where('entry_id', 'in', [seen[0]!.id, reversal.id]).execute();
    expect(legs.reduce((a, l) => a + l.amount, 0n)).toBe(0n);
    expect(legs.filter((l) => l.entry_id === reversal.id && l.account.endsWith(reorged.address)).map((l) => l.amount)).toEqual([-u6('2')]);

    await eth.mine(4);
    await drain(w);
    const clean = await reconcileChain(tdb.db, adapter);
    expect(clean.skipped).toBeUndefined();
    // Every address with journal activity (the reorged one nets to zero), every token and the native coin.
    expect(clean.addresses).toBe(4);
    expect(clean.balances).toBe(4 * 3);
    expect(clean.differences).toEqual([]);
    const usdcRow = clean.summary.find((s) => s.merchantId === merchant.id && s.asset === 'USDC')!;
    expect(usdcRow).toMatchObject({ expected: u6('13'), chain: u6('13'), difference: 0n });
    expect(clean.rpcCalls).toBeGreaterThan(0);

    // Someone holding the mnemonic moves 1.25 USDC out of a deposit address (after giving it gas).
    const row = await sessionRow(tdb.db, partial.id);
    const key = HDNodeWallet.fromPhrase(
      TEST_MNEMONIC,
      undefined,
      addressPath(COIN_TYPE_EVM, merchant.account, CHANGE_DEPOSIT, row.address_index),
    ).connect(eth.provider);
    expect(key.address.toLowerCase()).toBe(partial.address);
    await (await payer.sendTransaction({ to: key.address, value: parseEther('0.01') })).wait();
    await payFrom(key as never, usdc, payer.address, u6('1.25'));
    await eth.mine(4);
    await drain(w);
    const unexplained = await listUnexplained(tdb.db, { network: 'ethereum', mode: 'test' });
    expect(unexplained).toHaveLength(1);
    expect(unexplained[0]!.legs).toEqual(
      expect.arrayContaining([{ account: `address:ethereum:test:${partial.address}`, asset: 'ethereum:test:USDC', amount: -u6('1.25') }]),
    );

    const drift = await reconcileChain(tdb.db, adapter);
    const failing = drift.differences.filter((d) => d.failing && d.asset !== 'native');
    expect(failing).toEqual([
      expect.objectContaining({
        address: partial.address,
        asset: 'USDC',
        expected: u6('10'),
        chain: u6('8.75'),
        difference: u6('1.25'),
        unexplained: -u6('1.25'),
      }),
    ]);
    // The gas the outside transfer needed arrived as a plain value transfer: booked as an unexplained native movement
    // (0.01 ETH in, minus the fee the outside transfer burnt), failing like the token difference.
    expect(drift.differences.find((d) => d.asset === 'native')).toMatchObject({ address: partial.address, failing: true });
    const nativeDrift = (await listUnexplained(tdb.db, { network: 'ethereum', mode: 'test' })).filter((u) =>
      u.txHash.startsWith('native-balance:'),
    );
    expect(nativeDrift).toHaveLength(1);
    const stored = await tdb.db.selectFrom('reconcile_differences').selectAll().where('run_id', '=', drift.runId!).execute();
    expect(stored.find((d) => d.asset === 'ethereum:test:USDC')).toMatchObject({ difference_base: u6('1.25') });
    const runs = await tdb.db.selectFrom('reconcile_runs').select(['id', 'differences']).orderBy('id').execute();
    expect(runs.map((r) => r.differences)).toEqual([0, 2]);

    // The CLI says the same: exit 3, the address and the exact base-unit difference on stderr; JSON on stdout.
    const run = await cli(['reconcile', '--network', 'ethereum', '--mode', 'test', '--json']);
    expect(run.code).toBe(3);
    expect(run.err).toContain(`difference: ethereum/test ${partial.address} USDC: ledger - chain = 1250000 base units`);
    const json = JSON.parse(run.out) as {
      ok: boolean;
      chains: Array<{ differences: Array<{ address: string; asset: string; difference: string }> }>;
    };
    expect(json.ok).toBe(false);
    expect(json.chains[0]!.differences).toEqual(
      expect.arrayContaining([expect.objectContaining({ address: partial.address, asset: 'USDC', difference: '1250000' })]),
    );
    const table = await cli(['reconcile']);
    expect(table.code).toBe(3);
    expect(table.out).toMatch(new RegExp(`DIFFERENCE ${partial.address} USDC: ledger 10000000 chain 8750000 difference 1250000`));

    // The operator looks at it and accepts it: the books follow, the token difference is gone.
    expect(await acknowledgeUnexplained(tdb.db, unexplained[0]!.entryId, 'moved by the merchant, ticket 42')).toBe(true);
    expect(await acknowledgeUnexplained(tdb.db, nativeDrift[0]!.entryId, 'gas for it, same ticket')).toBe(true);
    const accepted = await reconcileChain(tdb.db, adapter);
    expect(accepted.differences.filter((d) => d.failing)).toEqual([]);
    const clean2 = await cli(['reconcile', '--network', 'ethereum']);
    expect(clean2.code).toBe(0);
    expect(clean2.out).toContain('reconciled: no difference');
  }, 240_000);

  it('journal legs balance: every entry sums to zero per asset, and the database refuses an unbalanced or changed one', async () => {
    expect(await unbalancedEntries(tdb.db)).toEqual([]);
    const count = await tdb.db
      .selectFrom('journal_legs')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBeGreaterThan(5);
    const e = await sql<{ id: string }>`
      insert into journal_entries (network, mode, tx_hash, leg_key, kind, block_height)
      values ('ethereum', 'test', '0xbad', 'tx', 'deposit', 1) returning id::text`.execute(tdb.db);
    await expect(
      sql`insert into journal_legs (entry_id, account, asset, amount) values (${e.rows[0]!.id}::bigint, 'external', 'ethereum:test:USDC', 5)`.execute(
        tdb.db,
      ),
    ).rejects.toThrow(/unbalanced/);
    await expect(sql`update journal_legs set amount = amount * 2`.execute(tdb.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from journal_entries`.execute(tdb.db)).rejects.toThrow(/append-only/);
  });
});
