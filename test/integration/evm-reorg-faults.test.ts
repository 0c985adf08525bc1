import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { Contract, parseUnits, parseEther } from 'ethers';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { startFaultProxy } from '../support/rpc-fault-proxy.js';
import {
  createBoundSession, createMerchant, deployTokens, depositsFor, eventsFor, fund, makeAdapter, payFrom, sessionRow, signer, walletAt,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { Backoff } from '../../src/watcher/backoff.js';
import { registerCheckoutSelectRoute } from '../../src/checkout/select-route.js';
import { sendError, toApiError } from '../../src/api/errors.js';
import { sendTokenTransfer } from '../support/send-token-transfer.js';
import { TransferRejectedError, type SignedTransfer } from '../../chains/types.js';
import { addressPath, CHANGE_HOT_WALLET } from '../../chains/hd/bip44.js';
import { evmAddressFromPublicKey } from '../../chains/evm/address.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';
import { ChainRegistry } from '../../chains/registry.js';

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
    expect((await sessionRow(tdb.db, exact.id))).toMatchObject({ status: 'paid', received_base: parseUnits('12.5', 18), shortfall_base: 0n });
    expect((await sessionRow(tdb.db, dust.id))).toMatchObject({ status: 'paid', shortfall_base: 1n });
  });
});

describe('reorg', () => {
  it('an orphaned paying transfer is rolled back; landing again in the new branch pays once', async () => {
    const w = new NetworkWatcher({ db: tdb.db, adapter, pollIntervalMs: 50 });
    await drain(w);
    const s = await createBoundSession(tdb.db, adapter, merchant, { amountMinor: 2000n, token: 'USDC' });
    const payer = walletAt(1, eth.provider);
    const token = new Contract(usdc.address, ['function transfer(address,uint256) returns (bool)'], payer);
    const req = await payer.populateTransaction({ to: usdc.address, data: token.interface.encodeFunctionData('transfer', [s.address, u6('20')]) });
    const raw = await payer.signTransaction(req);
    const snapshot = await eth.rpc<string>('evm_snapshot');
    // Automine may answer before the block is sealed: wait for the receipt, or the watcher can read an older head.
    await eth.provider.waitForTransaction(await eth.rpc<string>('eth_sendRawTransaction', [raw]));
    await drain(w);
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'provisional' }]);

    await eth.rpc('evm_revert', [snapshot]);
    const block = await eth.provider.getBlock('latest');
    await eth.rpc('evm_setNextBlockTimestamp', [block!.timestamp + 30]);
    await eth.mine(2); // new branch, one block longer, without the transfer
    await drain(w);
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'orphaned' }]);
    await eth.mine(3);
    await drain(w);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');

    await eth.rpc('eth_sendRawTransaction', [raw]).catch(() => undefined);
    await eth.mine(3);
    await drain(w);
    expect((await sessionRow(tdb.db, s.id))).toMatchObject({ status: 'paid', received_base: u6('20') });
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'confirmed', disposition: 'credited' }]);
    expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
  });
});

describe('RPC faults', () => {
  it('errors, hangs, 429s, 5xx and range-too-large answers: no deposit missed, each paid once', async () => {
    const proxy = await startFaultProxy({ upstream: eth.url, seed: 7, errorRate: 0.08, timeoutRate: 0.04, http429Rate: 0.08, http5xxRate: 0.08, maxLogsRange: 4, hangMs: 1500 });
    const faulty = makeAdapter(eth, [usdc, usdt], { url: proxy.url, timeoutMs: 400, maxBlockRange: 64 });
    // the watcher starts behind: the sessions are paid over ~15 blocks before it runs
    const sessions = [];
    for (let i = 0; i < 12; i++) sessions.push(await createBoundSession(tdb.db, faulty, merchant, { amountMinor: 100n + BigInt(i), token: i % 2 ? 'USDT' : 'USDC' }));
    const w = new NetworkWatcher({ db: tdb.db, adapter: faulty, pollIntervalMs: 30, backoff: new Backoff(10, 200, 5), startHeight: BigInt(await eth.provider.getBlockNumber()) });
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
      const rows = await tdb.db.selectFrom('payment_sessions').select('status').where('id', 'in', sessions.map((s) => s.id)).execute();
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
      .values({ id: 'cs_selecttest1', merchant_id: merchant.id, mode: 'test', order_id: 'sel-1', amount_minor: 1999n, currency: 'USD', metadata: JSON.stringify({ network: 'bsc' }), target_currency: 'USDT', target_amount_minor: 1999n, hd_account: merchant.account, expires_at: new Date(Date.now() + 600_000) })
      .returning('address_index')
      .executeTakeFirstOrThrow();
    const post = (id: string, body: unknown) => app.inject({ method: 'POST', url: `/checkout/sessions/${id}/select`, headers: { 'content-type': 'application/json' }, payload: JSON.stringify(body) });
    const pinned = await post('cs_selecttest1', { network: 'ethereum', token: 'USDT' });
    expect(pinned.statusCode).toBe(400);
    expect(pinned.json().error.code).toBe('parameter_invalid');
    const ok = await post('cs_selecttest1', { network: 'bsc', token: 'USDT' });
    expect(ok.statusCode).toBe(200);
    const expected = await bscAdapter.deriveDepositAddress(signer, merchant.account, row.address_index);
    expect(ok.json()).toMatchObject({ network: 'bsc', token: 'USDT', deposit_address: bscAdapter.displayAddress(expected), amount_due: '19.99', amount_due_base: (1999n * 10n ** 16n).toString(), token_decimals: 18 });
    expect((await sessionRow(tdb.db, 'cs_selecttest1'))).toMatchObject({ network: 'bsc', token: 'USDT', deposit_address: expected });
    expect((await post('cs_nosuchsession', { network: 'bsc', token: 'USDT' })).statusCode).toBe(404);
    expect((await post('cs_selecttest1', { network: 'bsc', token: 'USDT', extra: 1 })).json().error.code).toBe('parameter_unknown');
    expect((await post('cs_selecttest1', { network: 'tron', token: 'USDT' })).statusCode).toBe(400);
    await app.close();
  });
});

describe('sending side (refund payouts)', () => {
  const hotKey = () => ({ curve: 'secp256k1' as const, path: addressPath(60, merchant.account, CHANGE_HOT_WALLET, 0) });
  it('build, sign, persist, broadcast a Tether-style transfer; outcome by hash; re-broadcast is idempotent', async () => {
    const hot = evmAddressFromPublicKey(await signer.publicKey(hotKey()));
    await eth.rpc('anvil_setBalance', [hot, `0x${parseEther('1').toString(16)}`]);
    await fund(usdt, hot, u6('50'));
    const dest = walletAt(5, eth.provider).address;
    const persisted: SignedTransfer[] = [];
    const nonce = BigInt(await eth.provider.getTransactionCount(hot));
    const { signed, broadcast } = await sendTokenTransfer(adapter, signer, { from: { key: hotKey(), address: hot }, to: dest, token: 'USDT', amount: u6('12'), nonce }, async (s) => {
      persisted.push(s);
    });
    expect(persisted).toEqual([signed]);
    expect(broadcast.status).toBe('accepted');
    expect((await adapter.broadcast(signed)).status).toBe('already_known');
    await eth.mine(3);
    const outcome = await adapter.getTransactionOutcome(signed.hash);
    expect(outcome).toMatchObject({ status: 'succeeded', final: true });
    const bal = new Contract(usdt.address, ['function balanceOf(address) view returns (uint256)'], eth.provider);
    expect(await (bal.getFunction('balanceOf') as (a: string) => Promise<bigint>)(dest)).toBe(u6('12'));
    expect(await adapter.getTransactionOutcome(`0x${'ab'.repeat(32)}`)).toEqual({ status: 'unknown' });
  });

  it('refuses before signing: blacklisted destination (USDC-style) and a hot wallet without gas', async () => {
    const hot = evmAddressFromPublicKey(await signer.publicKey(hotKey()));
    await fund(usdc, hot, u6('50'));
    const blocked = walletAt(6, eth.provider).address;
    await (await (usdc.contract.getFunction('blacklist') as (a: string) => Promise<{ wait(): Promise<unknown> }>)(blocked)).wait();
    const nonce = BigInt(await eth.provider.getTransactionCount(hot));
    const req = { from: { key: hotKey(), address: hot }, to: blocked, token: 'USDC' as const, amount: u6('1'), nonce };
    await expect(adapter.buildTokenTransfer(req)).rejects.toMatchObject({ reason: 'simulation_reverted' });
    await eth.rpc('anvil_setBalance', [hot, '0x0']);
    const err = await adapter.buildTokenTransfer({ ...req, to: walletAt(5, eth.provider).address }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransferRejectedError);
    expect((err as TransferRejectedError).reason).toBe('insufficient_gas');
  });
});
