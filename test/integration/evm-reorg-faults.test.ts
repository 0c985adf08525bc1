import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { parseUnits } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { startFaultProxy } from '../support/rpc-fault-proxy.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
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
import { Backoff } from '../../src/watcher/backoff.js';
import { registerCheckoutSelectRoute } from '../../src/checkout/select-route.js';
import { sendError, toApiError } from '../../src/api/errors.js';
import { TransferRejectedError } from '../../chains/types.js';
import { addressPath, CHANGE_HOT_WALLET } from '../../chains/hd/bip44.js';
import { evmAddressFromPublicKey } from '../../chains/evm/address.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { ChainRegistry } from '../../chains/chain-registry.js';

let tdb: TestDatabase;
let eth: AnvilNode;
let bsc: AnvilNode;
let usdc: DeployedToken;
let usdt: DeployedToken;
let bscUsdt: DeployedToken;
let adapter: EvmChainAdapter;
let bscAdapter: EvmChainAdapter;
let merchant: { id: string; account: number };
const u6 = (s: string) => parseUnits(s, 6);

async function drain(w: NetworkWatcher) {
  for (let i = 0; i < 100; i++) if ((await w.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

beforeAll(async () => {
  [tdb, eth, bsc] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 1 }), startAnvil({ chainId: 56 })]);
  [usdc, usdt] = (await deployTokens(eth, [
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  [bscUsdt] = (await deployTokens(bsc, [{ symbol: 'USDT', shape: 'fiat', decimals: 18 }])) as [DeployedToken];
  await fund(usdc, walletAt(1, eth.provider).address, u6('1000000'));
  await fund(usdt, walletAt(1, eth.provider).address, u6('1000000'));
  await fund(bscUsdt, walletAt(1, bsc.provider).address, parseUnits('1000000', 18));
  adapter = makeAdapter(eth, [usdc, usdt]);
  bscAdapter = makeAdapter(bsc, [bscUsdt], { network: 'bsc' });
  merchant = await createMerchant(tdb.db);
});

afterAll(async () => {
  await Promise.all([eth?.stop(), bsc?.stop()]);
  await tdb?.destroy();
});

describe('BSC-style 18-decimal token', () => {
  it('pays 12.50 USDT as 12.5e18 base units; 0.01 short stays open, a wei short settles as dust', async () => {
    await bscAdapter.verifyTokens();
    const w = new NetworkWatcher({ db: tdb.db, adapter: bscAdapter, pollIntervalMs: 50 });
    await drain(w);
    const short = await createBoundSession(tdb.db, bscAdapter, merchant, { amountMinor: 1250n, token: 'USDT' });
    const exact = await createBoundSession(tdb.db, bscAdapter, merchant, { amountMinor: 1250n, token: 'USDT' });
    const dust = await createBoundSession(tdb.db, bscAdapter, merchant, { amountMinor: 1250n, token: 'USDT' });
    const payer = walletAt(1, bsc.provider);
    await payFrom(payer, bscUsdt, short.address, parseUnits('12.49', 18));
    await payFrom(payer, bscUsdt, exact.address, parseUnits('12.5', 18));
    await payFrom(payer, bscUsdt, dust.address, parseUnits('12.5', 18) - 1n);
    await bsc.mine(3);
    await drain(w);
    expect((await sessionRow(tdb.db, short.id)).status).toBe('open');
    expect(await sessionRow(tdb.db, exact.id)).toMatchObject({ status: 'paid', received_base: parseUnits('12.5', 18), shortfall_base: 0n });
    expect(await sessionRow(tdb.db, dust.id)).toMatchObject({ status: 'paid', shortfall_base: 1n });
  });
});

describe('RPC faults', () => {
  it('errors, hangs, 429s, 5xx and range-too-large answers: no deposit missed, each paid once', async () => {
    const proxy = await startFaultProxy({
      upstream: eth.url,
      seed: 7,
      errorRate: 0.08,
      timeoutRate: 0.04,
      http429Rate: 0.08,
      http5xxRate: 0.08,
      maxLogsRange: 4,
      hangMs: 1500,
    });
    const faulty = makeAdapter(eth, [usdc, usdt], { url: proxy.url, timeoutMs: 400, maxBlockRange: 64 });
    // the watcher starts behind: the sessions are paid over ~15 blocks before it runs
    const sessions = [];
    for (let i = 0; i < 12; i++)
      sessions.push(await createBoundSession(tdb.db, faulty, merchant, { amountMinor: 100n + BigInt(i), token: i % 2 ? 'USDT' : 'USDC' }));
    const w = new NetworkWatcher({
      db: tdb.db,
      adapter: faulty,
      pollIntervalMs: 30,
      backoff: new Backoff(10, 200, 5),
      startHeight: BigInt(await eth.provider.getBlockNumber()),
    });
    const payer = walletAt(1, eth.provider);
    for (const [i, s] of sessions.entries()) {
      await payFrom(payer, i % 2 ? usdt : usdc, s.address, u6('1') + BigInt(i) * 10_000n);
      await eth.mine(1);
    }
    await eth.mine(3);
    const stop = new AbortController();
    const running = w.run(stop.signal);
    const deadline = Date.now() + 60_000;
    let paid = 0;
    while (Date.now() < deadline) {
      const rows = await tdb.db
        .selectFrom('payment_sessions')
        .select('status')
        .where(
          'id',
          'in',
          sessions.map((s) => s.id),
        )
        .execute();
      paid = rows.filter((r) => r.status === 'paid').length;
      if (paid === sessions.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    stop.abort();
    await running;
    await proxy.close();
    expect(paid).toBe(sessions.length);
    for (const s of sessions) expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
    expect(proxy.counts.range).toBeGreaterThan(0);
    expect(proxy.counts.error + proxy.counts.http429 + proxy.counts.http5xx + proxy.counts.timeout).toBeGreaterThan(0);
  });
});

describe('network selection endpoint', () => {
  it('returns the derived deposit address and the exact amount due; respects pins; 404 for unknown sessions', async () => {
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
      req.rawBody = body as Buffer;
      done(null, undefined);
    });
    app.setErrorHandler((err, req, reply) => sendError(req, reply, toApiError(err), 'https://docs.example'));
    registerCheckoutSelectRoute(app, { db: tdb.db, adapters: new ChainRegistry([adapter, bscAdapter]), keys: signer });
    const row = await tdb.db
      .insertInto('payment_sessions')
      .values({
        id: 'cs_selecttest1',
        merchant_id: merchant.id,
        mode: 'test',
        order_id: 'sel-1',
        amount_minor: 1999n,
        currency: 'USD',
        metadata: JSON.stringify({ network: 'bsc' }),
        target_currency: 'USDT',
        target_amount_minor: 1999n,
        hd_account: merchant.account,
        expires_at: new Date(Date.now() + 600_000),
      })
      .returning('address_index')
      .executeTakeFirstOrThrow();
    const post = (id: string, body: unknown) =>
      app.inject({
        method: 'POST',
        url: `/checkout/sessions/${id}/select`,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const pinned = await post('cs_selecttest1', { network: 'ethereum', token: 'USDT' });
    expect(pinned.statusCode).toBe(400);
    expect(pinned.json().error.code).toBe('parameter_invalid');
    const ok = await post('cs_selecttest1', { network: 'bsc', token: 'USDT' });
    expect(ok.statusCode).toBe(200);
    const expected = await bscAdapter.deriveDepositAddress(signer, merchant.account, row.address_index);
    expect(ok.json()).toMatchObject({
      network: 'bsc',
      token: 'USDT',
      deposit_address: bscAdapter.displayAddress(expected),
      amount_due: '19.99',
      amount_due_base: (1999n * 10n ** 16n).toString(),
      token_decimals: 18,
    });
    expect(await sessionRow(tdb.db, 'cs_selecttest1')).toMatchObject({ network: 'bsc', token: 'USDT', deposit_address: expected });
    expect((await post('cs_nosuchsession', { network: 'bsc', token: 'USDT' })).statusCode).toBe(404);
    expect((await post('cs_selecttest1', { network: 'bsc', token: 'USDT', extra: 1 })).json().error.code).toBe('parameter_unknown');
    expect((await post('cs_selecttest1', { network: 'tron', token: 'USDT' })).statusCode).toBe(400);
    await app.close();
  });
});

describe('sending side (refund payouts)', () => {
  const hotKey = () => ({ curve: 'secp256k1' as const, path: addressPath(60, merchant.account, CHANGE_HOT_WALLET, 0) });

  it('refuses before signing a destination the token blacklists (USDC-style)', async () => {
    const hot = evmAddressFromPublicKey(await signer.publicKey(hotKey()));
    await fund(usdc, hot, u6('50'));
    const blocked = walletAt(6, eth.provider).address;
    await (await (usdc.contract.getFunction('blacklist') as (a: string) => Promise<{ wait(): Promise<unknown> }>)(blocked)).wait();
    const nonce = BigInt(await eth.provider.getTransactionCount(hot));
    const req = { from: { key: hotKey(), address: hot }, to: blocked, token: 'USDC' as const, amount: u6('1'), nonce };
    await eth.rpc('anvil_setBalance', [hot, `0x${(10n ** 18n).toString(16)}`]);
    const err = await adapter.buildTokenTransfer(req).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransferRejectedError);
    expect((err as TransferRejectedError).reason).toBe('simulation_reverted');
  });
});
