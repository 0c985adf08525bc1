import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, KeyDeriver } from '../../chains/types.js';
import { listAudit } from '../../src/ledger/audit/audit-log.js';
import { createSweep } from '../../src/ledger/treasury/sweeps.js';
import { startConsoleHarness, type ConsoleHarness } from '../support/console-harness.js';

// The console's treasury and sweep routes (operators): destinations with history, sweep policy, plan, run, history,
// one sweep; merchant users refused; bad input changes nothing; every mutation leaves its audit row.

const ADDR = '0x1111111111111111111111111111111111111111';
const stub = {
  network: 'ethereum',
  mode: 'test',
  family: 'evm',
  tokens: [{ symbol: 'USDT', decimals: 6, contract: '0x2222222222222222222222222222222222222222' }],
  normalizeAddress: (t: string) => (/^0x[0-9a-fA-F]{40}$/.test(t) ? t.toLowerCase() : null),
  displayAddress: (a: string) => a,
} as unknown as ChainAdapter;

let h: ConsoleHarness;
let merchantId: string;
let otherId: string;

beforeAll(async () => {
  h = await startConsoleHarness({ chains: new ChainRegistry([{ adapter: stub, explorerTxUrl: 'https://explorer.test/tx/{tx}' }]) });
  merchantId = (await h.merchant('Treasury shop')).merchantId;
  otherId = (await h.merchant('Other shop')).merchantId;
});
afterAll(async () => h?.close());

const audits = (action: string) => listAudit(h.t.db, { action, limit: 10 } as never);

describe('treasury destinations', () => {
  it('sets a destination (audited) and lists it with its change history', async () => {
    const r = await h.call(h.operator, 'POST', '/api/treasury/destinations', {
      merchant_id: merchantId,
      network: 'ethereum',
      mode: 'test',
      address: ADDR,
      hot_float: '25.50',
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ merchant_id: merchantId, treasury_address: ADDR, hot_float: '25.50' });
    const list = await h.call(h.operator, 'GET', `/api/treasury/destinations?merchant_id=${merchantId}`);
    expect(list.status).toBe(200);
    expect(list.json.data).toHaveLength(1);
    expect(list.json.data[0].changes[0]).toMatchObject({ new_treasury_address: ADDR, old_treasury_address: null });
    const a = (await audits('treasury_destination.set')).find((x) => x.merchant_id === merchantId);
    expect(a).toBeDefined();
    expect(a!.after).toMatchObject({ treasury_address: ADDR });
  });

  it('refuses bad input (400) and an invalid address (400) without changing anything', async () => {
    const bad = await h.call(h.operator, 'POST', '/api/treasury/destinations', {
      merchant_id: otherId,
      network: 'dogecoin',
      mode: 'test',
      address: null,
    });
    expect(bad.status).toBe(400);
    const badAddr = await h.call(h.operator, 'POST', '/api/treasury/destinations', {
      merchant_id: otherId,
      network: 'ethereum',
      mode: 'test',
      address: 'nope',
    });
    expect(badAddr.status).toBe(400);
    expect(badAddr.json.error.code).toBe('address_invalid');
    const list = await h.call(h.operator, 'GET', `/api/treasury/destinations?merchant_id=${otherId}`);
    expect(list.json.data).toEqual([]);
  });

  it('refuses merchant users (403) and a mutation without the CSRF token (403)', async () => {
    const u = h.merchantUser(merchantId);
    expect((await h.call(u, 'GET', '/api/treasury/destinations')).status).toBe(403);
    const post = await h.call(u, 'POST', '/api/treasury/destinations', {
      merchant_id: merchantId,
      network: 'ethereum',
      mode: 'test',
      address: null,
    });
    expect(post.status).toBe(403);
    const noCsrf = await h.call(
      h.operator,
      'POST',
      '/api/treasury/destinations',
      { merchant_id: otherId, network: 'ethereum', mode: 'test', address: null },
      { csrf: 'x' },
    );
    expect(noCsrf.status).toBe(403);
    expect((await h.call(h.operator, 'GET', `/api/treasury/destinations?merchant_id=${otherId}`)).json.data).toEqual([]);
  });
});

describe('sweep policy', () => {
  it('answers the default, sets one (audited), refuses bad input', async () => {
    const q = '/api/sweeps/policy?network=ethereum&mode=test&token=USDT';
    const d = await h.call(h.operator, 'GET', q);
    expect(d.json).toMatchObject({ min_amount: '10.00', max_fee_bps: 100, source: 'default' });
    const bad = await h.call(h.operator, 'POST', '/api/sweeps/policy', {
      network: 'ethereum',
      mode: 'test',
      token: 'USDT',
      min_amount: '5',
      max_fee_bps: 20000,
    });
    expect(bad.status).toBe(400);
    expect((await h.call(h.operator, 'GET', q)).json.source).toBe('default');
    const set = await h.call(h.operator, 'POST', '/api/sweeps/policy', {
      network: 'ethereum',
      mode: 'test',
      token: 'USDT',
      min_amount: '5',
      max_fee_bps: 50,
    });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ min_amount: '5.00', max_fee_bps: 50, source: 'configured' });
    const a = await audits('sweep_policy.set');
    expect(a[0]!.before).toMatchObject({ source: 'default' });
    expect(a[0]!.after).toMatchObject({ max_fee_bps: 50 });
    expect((await h.call(h.merchantUser(merchantId), 'GET', q)).status).toBe(403);
  });
});

describe('sweeps', () => {
  it('plan and run answer 409 without the treasury keys, then a plan and a run (audited) with them', async () => {
    expect((await h.call(h.operator, 'GET', '/api/sweeps/plan?network=ethereum&mode=test')).status).toBe(409);
    h.ops.treasury = {
      keys: {} as KeyDeriver,
      signer: null,
      prices: () => {
        throw new Error('no prices');
      },
      engine: { pollMs: 100, stuckAfterMs: 1000, feeBumpPercent: 10 },
    };
    const plan = await h.call(h.operator, 'GET', '/api/sweeps/plan?network=ethereum&mode=test');
    expect(plan.status).toBe(200);
    expect(plan.json).toEqual({ batches: [], skipped: [], operator_wallets: [] });
    const run = await h.call(h.operator, 'POST', '/api/sweeps/run', { network: 'ethereum', mode: 'test' });
    expect(run.status).toBe(202);
    expect(run.json.sweep_ids).toEqual([]);
    expect((await audits('sweep.run'))[0]!.after).toMatchObject({ network: 'ethereum', mode: 'test' });
    const bad = await h.call(h.operator, 'POST', '/api/sweeps/run', { network: 'ethereum' });
    expect(bad.status).toBe(400);
    expect(await audits('sweep.run')).toHaveLength(1);
    expect((await h.call(h.merchantUser(merchantId), 'POST', '/api/sweeps/run', { network: 'ethereum', mode: 'test' })).status).toBe(403);
  });

  it('lists sweeps newest first by keyset pages and shows one with its steps and sources', async () => {
    const ids: string[] = [];
    for (const i of [1, 2, 3]) {
      const s = await createSweep(h.t.db, {
        merchantId,
        network: 'ethereum',
        mode: 'test',
        token: 'USDT',
        method: 'direct',
        destinationKind: 'treasury',
        destination: ADDR,
        request: {},
        sources: [{ address: `0x${String(i).repeat(40)}`, key: { curve: 'secp256k1', path: `m/0/${i}` }, amount: 12_500_000n }],
        steps: [{ group: 0, purpose: 'transfer', from: `0x${String(i).repeat(40)}`, estimatedFee: 1000n, json: {} }],
        estimatedFee: 1000n,
        feeShareBps: 3,
      });
      ids.push(s!.id);
    }
    // The newest sweep's transfer was sent: its row links to the transaction.
    const hash = `0x${'ab'.repeat(32)}`;
    await h.t.db.updateTable('sweep_steps').set({ tx_hash: hash }).where('sweep_id', '=', ids[2]!).execute();
    const p1 = await h.call(h.operator, 'GET', '/api/sweeps?limit=2');
    expect(p1.status).toBe(200);
    expect(p1.json.data).toHaveLength(2);
    expect(p1.json.data[0]).toMatchObject({ planned: '12.50', planned_base: '12500000', status: 'running' });
    // Fees in wei and in ETH.
    expect(p1.json.data[0]).toMatchObject({ estimated_fee: '1000', estimated_fee_native: '0.000000000000001', fee_coin: 'ETH' });
    const byId = new Map(p1.json.data.map((s: { id: string }) => [s.id, s]));
    expect(byId.get(ids[2]!)).toMatchObject({
      transaction_count: 1,
      transactions: [{ purpose: 'transfer', tx_hash: hash, explorer_url: `https://explorer.test/tx/${hash}` }],
    });
    const p2 = await h.call(h.operator, 'GET', `/api/sweeps?limit=2&cursor=${p1.json.next_cursor}`);
    expect(p2.json.data).toHaveLength(1);
    expect(p2.json.data[0]).toMatchObject({ transaction_count: 0, transactions: [] });
    expect(p2.json.next_cursor).toBeNull();
    expect(new Set([...p1.json.data, ...p2.json.data].map((s: { id: string }) => s.id))).toEqual(new Set(ids));
    const one = await h.call(h.operator, 'GET', `/api/sweeps/${ids[0]}`);
    expect(one.status).toBe(200);
    expect(one.json.steps).toHaveLength(1);
    expect(one.json.sources[0]).toMatchObject({ planned_base: '12500000' });
    expect((await h.call(h.operator, 'GET', '/api/sweeps/sw_nope')).status).toBe(404);
    expect((await h.call(h.operator, 'GET', '/api/sweeps?cursor=garbage')).status).toBe(400);
    expect((await h.call(h.merchantUser(merchantId), 'GET', '/api/sweeps')).status).toBe(403);
  });
});
