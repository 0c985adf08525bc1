import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter } from '../../chains/types.js';
import { listAudit } from '../../src/ledger/audit/audit-log.js';
import { addressAccount, EXTERNAL_ACCOUNT, journalAsset } from '../../src/ledger/journal/accounts.js';
import { recordMovement } from '../../src/ledger/journal/entries.js';
import { storeReconcileRun } from '../../src/ledger/journal/reconcile-runs.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's books (operators): reconcile runs with their differences, starting a run, unexplained entries and
// their acknowledgement (audited), an account's legs by keyset pages; merchant users refused.

const stub = { network: 'ethereum', mode: 'test', family: 'evm', tokens: [] } as unknown as ChainAdapter;
const ADDR = '0xabababababababababababababababababababab';
let h: ConsoleHarness;
let merchantId: string;
const entryIds: string[] = [];

beforeAll(async () => {
  h = await startConsoleHarness({ chains: new ChainRegistry([stub]) });
  merchantId = (await h.merchant('Books shop')).merchantId;
  for (const height of [100n, 101n]) {
    await storeReconcileRun(h.t.db, {
      chain: { network: 'ethereum', mode: 'test' },
      height,
      addresses: 3,
      balances: 6,
      rpcCalls: 4,
      durationMs: 12,
      startedAt: new Date(),
      differences:
        height === 101n
          ? [
              {
                account: addressAccount('ethereum', 'test', ADDR),
                asset: journalAsset('ethereum', 'test', 'USDT'),
                merchantId,
                journal: 5n,
                chain: 7n,
                difference: -2n,
                unexplained: 0n,
              },
            ]
          : [],
    });
  }
  for (const i of [1, 2, 3]) {
    const id = await h.t.db.transaction().execute((trx) =>
      recordMovement(trx, {
        network: 'ethereum',
        mode: 'test',
        txHash: `0x${String(i).repeat(64)}`,
        legKey: 'log:0',
        kind: 'unexplained',
        blockHeight: BigInt(200 + i),
        legs: [
          { account: EXTERNAL_ACCOUNT, asset: journalAsset('ethereum', 'test', 'USDT'), amount: -1_000_000n * BigInt(i) },
          {
            account: addressAccount('ethereum', 'test', ADDR),
            asset: journalAsset('ethereum', 'test', 'USDT'),
            amount: 1_000_000n * BigInt(i),
          },
        ],
      }),
    );
    entryIds.push(String(id));
  }
});
afterAll(async () => h?.close());

describe('reconcile', () => {
  it('lists runs newest first with differences to the base unit, by keyset pages', async () => {
    const p1 = await h.call(h.operator, 'GET', '/api/reconcile/runs?limit=1');
    expect(p1.status).toBe(200);
    expect(p1.json.data[0]).toMatchObject({ height: '101', differences: 1 });
    expect(p1.json.data[0].difference_rows[0]).toMatchObject({
      difference_base: '-2',
      journal_base: '5',
      chain_base: '7',
      merchant_id: merchantId,
    });
    const p2 = await h.call(h.operator, 'GET', `/api/reconcile/runs?limit=1&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data[0]).toMatchObject({ height: '100', differences: 0 });
    expect(p2.json.next_cursor).toBeNull();
    expect((await h.call(h.operator, 'GET', '/api/reconcile/runs?limit=500')).status).toBe(400);
    expect((await h.call(h.merchantUser(merchantId), 'GET', '/api/reconcile/runs')).status).toBe(403);
  });

  it('starts a run in the background (202, audited); a mode with no chain is 409; bad input 400', async () => {
    expect((await h.call(h.operator, 'POST', '/api/reconcile/run', { mode: 'sometimes' })).status).toBe(400);
    expect((await h.call(h.operator, 'POST', '/api/reconcile/run', { mode: 'live' })).status).toBe(409);
    expect(await listAudit(h.t.db, { action: 'reconcile.run', limit: 5 })).toHaveLength(0);
    const r = await h.call(h.operator, 'POST', '/api/reconcile/run', { network: 'ethereum', mode: 'test' });
    expect(r.status).toBe(202);
    expect(r.json.chains).toEqual([{ network: 'ethereum', mode: 'test' }]);
    const a = await listAudit(h.t.db, { action: 'reconcile.run', limit: 5 });
    expect(a[0]).toMatchObject({ object_id: r.json.job_id });
    expect((await h.call(h.merchantUser(merchantId), 'POST', '/api/reconcile/run', { mode: 'test' })).status).toBe(403);
  });
});

describe('journal', () => {
  it('lists unexplained entries and acknowledges one (audited); unknown ids 404, bad input 400', async () => {
    const list = await h.call(h.operator, 'GET', '/api/journal/unexplained');
    expect(list.status).toBe(200);
    expect(list.json.data.map((e: { entry_id: string }) => e.entry_id)).toEqual([...entryIds].reverse());
    expect(list.json.data[0].legs).toContainEqual({ account: EXTERNAL_ACCOUNT, asset: 'ethereum:test:USDT', amount: '-3000000' });
    const id = entryIds[0]!;
    expect((await h.call(h.operator, 'POST', `/api/journal/unexplained/${id}/acknowledge`, { note: '' })).status).toBe(400);
    expect((await h.call(h.merchantUser(merchantId), 'POST', `/api/journal/unexplained/${id}/acknowledge`, { note: 'x' })).status).toBe(
      403,
    );
    expect((await h.call(h.operator, 'GET', '/api/journal/unexplained')).json.data).toHaveLength(3);
    const ack = await h.call(h.operator, 'POST', `/api/journal/unexplained/${id}/acknowledge`, { note: 'test top-up by ops' });
    expect(ack.status).toBe(200);
    expect(ack.json).toEqual({ acknowledged: id });
    expect((await h.call(h.operator, 'GET', '/api/journal/unexplained')).json.data).toHaveLength(2);
    expect((await h.call(h.operator, 'GET', '/api/journal/unexplained?all=true')).json.data).toHaveLength(3);
    expect((await h.call(h.operator, 'POST', `/api/journal/unexplained/${id}/acknowledge`, { note: 'again' })).status).toBe(404);
    const a = await listAudit(h.t.db, { action: 'journal_entry.acknowledge', limit: 5 });
    expect(a).toHaveLength(1);
    expect(a[0]).toMatchObject({ object_id: id });
  });

  it("pages an account's legs newest first", async () => {
    const account = encodeURIComponent(addressAccount('ethereum', 'test', ADDR));
    const p1 = await h.call(h.operator, 'GET', `/api/journal/accounts/${account}?limit=2`);
    expect(p1.status).toBe(200);
    expect(p1.json.data.map((l: { amount: string }) => l.amount)).toEqual(['3000000', '2000000']);
    const p2 = await h.call(h.operator, 'GET', `/api/journal/accounts/${account}?limit=2&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data.map((l: { amount: string }) => l.amount)).toEqual(['1000000']);
    expect(p2.json.next_cursor).toBeNull();
    expect((await h.call(h.merchantUser(merchantId), 'GET', `/api/journal/accounts/${account}`)).status).toBe(403);
  });
});
