import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { Contract, parseUnits } from 'ethers';
import { sql } from 'kysely';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createMerchant, deployTokens, depositsFor, eventsFor, fund, payFrom, sessionRow, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { NetworkWatcher } from '../../src/watcher/network-watcher.js';
import { selectSessionNetwork } from '../../src/ledger/network-selection.js';
import { registerCheckoutSelectRoute } from '../../src/checkout/select-route.js';
import { sendError, toApiError } from '../../src/api/errors.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import type { TokenSymbol } from '../../chains/types.js';
import { ChainRegistry } from '../../chains/registry.js';

// TRON deposit detection through the JSON-RPC path: Anvil stands in for java-tron's Ethereum-compatible endpoint
// (20-byte hex on the wire), the adapter puts TRON address forms on top (canonical 41..., base58 T... in answers).
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
const u6 = (s: string) => parseUnits(s, 6);
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
let lookAlike: DeployedToken;
let adapter: TronChainAdapter;
let watcher: NetworkWatcher;
let merchant: { id: string; account: number };
let seq = 0;

async function drain(w = watcher) {
  for (let i = 0; i < 50; i++) if ((await w.step()).caughtUp) return;
  throw new Error('watcher did not catch up');
}

async function createTronSession(amountMinor: bigint, token: TokenSymbol = 'USDT'): Promise<{ id: string; address: string }> {
  const id = `cs_tron${Date.now().toString(36)}${seq++}`;
  const row = await tdb.db
    .insertInto('payment_sessions')
    .values({
      id, merchant_id: merchant.id, mode: 'test', order_id: `tron-${id}`, amount_minor: amountMinor, currency: token, metadata: JSON.stringify({}),
      target_currency: token, target_amount_minor: amountMinor, hd_account: merchant.account, expires_at: new Date(Date.now() + 1_800_000),
    })
    .returning('address_index')
    .executeTakeFirstOrThrow();
  const address = await adapter.deriveDepositAddress(signer, merchant.account, row.address_index);
  const r = await selectSessionNetwork(tdb.db, id, { network: 'tron', token, address });
  if (r.kind !== 'selected') throw new Error(`select failed: ${r.kind}`);
  return { id, address };
}

/** The payer's wallet sends to the deposit address as the node sees it: the 20 bytes behind T.... */
const pay = (token: DeployedToken, depositCanonical: string, amount: bigint) => payFrom(walletAt(1, node.provider), token, tronToEvmHex(depositCanonical), amount);

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 0xcd8690dc })]);
  [usdt, lookAlike] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
  ])) as [DeployedToken, DeployedToken];
  await fund(usdt, walletAt(1, node.provider).address, u6('1000000'));
  await fund(lookAlike, walletAt(1, node.provider).address, u6('1000000'));
  adapter = new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    chainId: 0xcd8690dcn,
    tokens: [{ symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 }],
    confirmation: { kind: 'depth', confirmations: 3 },
  });
  await adapter.verifyTokens();
  merchant = await createMerchant(tdb.db);
  watcher = new NetworkWatcher({ db: tdb.db, adapter, pollIntervalMs: 50 });
  await drain();
});

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('TRON deposits over the Ethereum-compatible JSON-RPC (Anvil), 3 blocks deep', () => {
  it('pays in one transfer once deep enough; addresses are canonical 41... inside, tx ids without 0x', async () => {
    const s = await createTronSession(1250n);
    expect(s.address).toMatch(/^41[0-9a-f]{40}$/);
    const txHash = await pay(usdt, s.address, u6('12.50'));
    await drain();
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'provisional' }]);
    await node.mine(2);
    await drain();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'paid', received_base: u6('12.50') });
    const d = await sql<{ tx_hash: string; to_address: string; from_address: string; token_contract: string }>`
      select tx_hash, to_address, from_address, token_contract from deposits where session_id = ${s.id}`.execute(tdb.db);
    expect(d.rows[0]).toEqual({
      tx_hash: txHash.slice(2).toLowerCase(),
      to_address: s.address,
      from_address: evmHexToTron(walletAt(1, node.provider).address),
      token_contract: evmHexToTron(usdt.address),
    });
    expect((await eventsFor(tdb.db, s.id)).map((e) => e.type)).toEqual(['payment.completed']);
  });

  it('adds up two partial transfers', async () => {
    const s = await createTronSession(1000n);
    await pay(usdt, s.address, u6('4'));
    await node.mine(3);
    await drain();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'open', received_base: u6('4') });
    await pay(usdt, s.address, u6('6'));
    await node.mine(3);
    await drain();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'paid', received_base: u6('10') });
    expect((await depositsFor(tdb.db, s.id)).map((x) => x.disposition)).toEqual(['credited', 'credited']);
  });

  it('never credits a look-alike "USDT" at another contract', async () => {
    const s = await createTronSession(500n);
    await pay(lookAlike, s.address, u6('5'));
    await node.mine(3);
    await drain();
    expect(await depositsFor(tdb.db, s.id)).toEqual([]);
    expect((await sessionRow(tdb.db, s.id)).status).toBe('open');
  });

  it('a reorg below the confirmation depth rolls the provisional deposit back; the session stays unpaid', async () => {
    const s = await createTronSession(2000n);
    const payer = walletAt(1, node.provider);
    const token = new Contract(usdt.address, ['function transfer(address,uint256)'], payer);
    const raw = await payer.signTransaction(await payer.populateTransaction({ to: usdt.address, data: token.interface.encodeFunctionData('transfer', [tronToEvmHex(s.address), u6('20')]) }));
    const snapshot = await node.rpc<string>('evm_snapshot');
    // Automine may answer before the block is sealed: wait for the receipt, or the watcher can read an older head.
    await node.provider.waitForTransaction(await node.rpc<string>('eth_sendRawTransaction', [raw]));
    await drain();
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'provisional' }]);
    await node.rpc('evm_revert', [snapshot]);
    const block = await node.provider.getBlock('latest');
    await node.rpc('evm_setNextBlockTimestamp', [block!.timestamp + 30]);
    await node.mine(2); // a longer branch without the transfer
    await drain();
    expect(await depositsFor(tdb.db, s.id)).toMatchObject([{ status: 'orphaned' }]);
    await node.mine(3);
    await drain();
    expect(await sessionRow(tdb.db, s.id)).toMatchObject({ status: 'open', received_base: 0n });
    expect(await eventsFor(tdb.db, s.id)).toEqual([]);
  });

  it('the hosted page\'s network selection answers base58 addresses', async () => {
    const app = Fastify();
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
      req.rawBody = body as Buffer;
      done(null, undefined);
    });
    app.setErrorHandler((err, req, reply) => sendError(req, reply, toApiError(err), 'https://docs.example'));
    registerCheckoutSelectRoute(app, { db: tdb.db, adapters: new ChainRegistry([adapter]), keys: signer });
    const row = await tdb.db
      .insertInto('payment_sessions')
      .values({ id: 'cs_tronselect1', merchant_id: merchant.id, mode: 'test', order_id: 'tron-sel-1', amount_minor: 1999n, currency: 'USD', metadata: JSON.stringify({}), target_currency: 'USDT', target_amount_minor: 1999n, hd_account: merchant.account, expires_at: new Date(Date.now() + 600_000) })
      .returning('address_index')
      .executeTakeFirstOrThrow();
    const res = await app.inject({ method: 'POST', url: '/checkout/sessions/cs_tronselect1/select', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ network: 'tron', token: 'USDT' }) });
    expect(res.statusCode).toBe(200);
    const canonical = await adapter.deriveDepositAddress(signer, merchant.account, row.address_index);
    expect(res.json()).toMatchObject({
      network: 'tron',
      deposit_address: tronBase58(canonical),
      token_contract: tronBase58(evmHexToTron(usdt.address)),
      amount_due: '19.99',
      amount_due_base: '19990000',
    });
    expect(res.json().deposit_address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect((await sessionRow(tdb.db, 'cs_tronselect1')).deposit_address).toBe(canonical);
    await app.close();
  });

  it('refuses to start on a wrong chain id or wrong decimals', async () => {
    const wrongChain = new TronChainAdapter({ mode: 'test', jsonRpcUrl: node.url, chainId: 0x2b6653dcn, tokens: adapter.tokens, confirmation: { kind: 'finalized' } });
    await expect(wrongChain.verifyTokens()).rejects.toThrow(/chain id 0xcd8690dc, expected 0x2b6653dc/);
    const wrongDecimals = new TronChainAdapter({ mode: 'test', jsonRpcUrl: node.url, tokens: [{ ...adapter.tokens[0]!, decimals: 18 }] });
    await expect(wrongDecimals.verifyTokens()).rejects.toThrow(/decimals\(\) is 6, registry says 18/);
  });
});
