import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createMerchant, deployTokens, sessionRow, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { registerCheckoutSelectRoute } from '../../src/checkout/select-route.js';
import { sendError, toApiError } from '../../src/api/errors.js';
import { MnemonicSigner } from '../../src/signer/mnemonic-signer.js';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58 } from '../../chains/tron/address.js';
import { describeAdapterConformance } from '../support/adapter-conformance/scenarios.js';
import { tronFixture } from '../support/adapter-conformance/tron.js';

// The shared adapter scenarios (test/support/adapter-conformance) against the TRON adapter, at the end of this file:
// Anvil as java-tron's JSON-RPC for detection, the fake java-tron wallet API for payouts. Before them, what only TRON
// has: address forms at the edges (canonical 41... inside, base58 T... in answers) and the node's chain id.
const signer = new MnemonicSigner('test test test test test test test test test test test junk');
let tdb: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
let adapter: TronChainAdapter;
let merchant: { id: string; account: number };

beforeAll(async () => {
  [tdb, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 0xcd8690dc })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  adapter = new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    chainId: 0xcd8690dcn,
    tokens: [{ symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 }],
    confirmation: { kind: 'depth', confirmations: 3 },
  });
  await adapter.verifyTokens();
  merchant = await createMerchant(tdb.db);
});

afterAll(async () => {
  await node?.stop();
  await tdb?.destroy();
});

describe('TRON deposits over the Ethereum-compatible JSON-RPC (Anvil), 3 blocks deep', () => {
  it("the hosted page's network selection answers base58 addresses", async () => {
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
      .values({
        id: 'cs_tronselect1',
        merchant_id: merchant.id,
        mode: 'test',
        order_id: 'tron-sel-1',
        amount_minor: 1999n,
        currency: 'USD',
        metadata: JSON.stringify({}),
        target_currency: 'USDT',
        target_amount_minor: 1999n,
        hd_account: merchant.account,
        expires_at: new Date(Date.now() + 600_000),
      })
      .returning('address_index')
      .executeTakeFirstOrThrow();
    const res = await app.inject({
      method: 'POST',
      url: '/checkout/sessions/cs_tronselect1/select',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ network: 'tron', token: 'USDT' }),
    });
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

  it('refuses to start on a wrong chain id', async () => {
    const wrongChain = new TronChainAdapter({
      mode: 'test',
      jsonRpcUrl: node.url,
      chainId: 0x2b6653dcn,
      tokens: adapter.tokens,
      confirmation: { kind: 'finalized' },
    });
    await expect(wrongChain.verifyTokens()).rejects.toThrow(/chain id 0xcd8690dc, expected 0x2b6653dc/);
  });
});

describeAdapterConformance('TRON (Anvil as java-tron JSON-RPC, fake wallet API; 3 blocks deep)', tronFixture);
