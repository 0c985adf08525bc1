import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interface, Signature, Transaction, Wallet, keccak256, recoverAddress, sha256 } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { SolanaChainAdapter } from '../../chains/solana/adapter.js';
import {
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  TransactionMessage,
  VersionedMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import { startFakeSolanaRpc, type FakeSolanaRpc } from '../../scripts/devnet/solana-rpc/rpc-server.js';
import { encodeTriggerRawData } from '../../chains/tron/protobuf.js';
import type { EvmTxBody } from '../../chains/evm/token-sender.js';
import { HOT_WALLET_SLOT, type KeyPath, type SigningPreimage, type TxSigner, type UnsignedTransfer } from '../../chains/types.js';
import { createDb } from '../../src/db/database.js';
import { merchantAccountIndex } from '../../src/ledger/merchants/merchants.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { pauseSigner, resumeSigner, signerStatus } from '../../src/operations/signer.js';
import { withIntent, type SigningIntent } from '../../src/signer/intent.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { SignerRefusedError, SignerUnavailableError } from '../../src/domain/signer-errors.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import {
  createBoundSession,
  createMerchant,
  deployTokens,
  fund,
  makeAdapter,
  signer,
  type DeployedToken,
} from '../support/evm-tokens/scenario.js';

// The signer role's server (docs/signer.md) with the real MnemonicSigner, Postgres and an EVM adapter on Anvil: the
// payout engine's own refund transfer, built by the adapter and asked through the real RemoteSigner, is signed; forged
// or wrong requests are each refused with their code and an audit row; the audit refuses UPDATE and DELETE.

let t: TestDatabase;
let node: AnvilNode;
let tokens: DeployedToken[];
let adapter: ReturnType<typeof makeAdapter>;
// TRON: justification reads no node (the transaction is decoded from its raw_data), so no node runs behind it.
const TRON_USDT = `41${'7c'.repeat(20)}`;
const tron = new TronChainAdapter({
  mode: 'test',
  jsonRpcUrl: 'http://127.0.0.1:9/jsonrpc',
  tokens: [{ symbol: 'USDT', address: TRON_USDT, decimals: 6 }],
});
let server: { socketPath: string; close(): Promise<void> };
let shop: { id: string; account: number };
let other: { id: string; account: number };
let hot: { key: KeyPath; address: string };
let otherHot: { key: KeyPath; address: string };
let nonce = 0n;

const socketPath = join(tmpdir(), `sp-signer-${randomBytes(6).toString('hex')}.sock`);
const USDT = () => tokens.find((x) => x.symbol === 'USDT')!;
const USDC = () => tokens.find((x) => x.symbol === 'USDC')!;
const ERC20 = new Interface(['function transfer(address,uint256)', 'function approve(address,uint256)']);
const usdt = (n: number) => BigInt(n) * 1_000_000n;

beforeAll(async () => {
  [t, node] = await Promise.all([createTestDatabase(), startAnvil()]);
  tokens = await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
  ]);
  adapter = makeAdapter(node, tokens);
  shop = await createMerchant(t.db);
  other = await createMerchant(t.db);
  const accountOf = async (id: string) =>
    (await t.db.selectFrom('merchant_hd_accounts').select('account_index').where('merchant_id', '=', id).executeTakeFirstOrThrow())
      .account_index;
  hot = await adapter.deriveHotWallet(signer, await accountOf(shop.id), HOT_WALLET_SLOT.refunds);
  otherHot = await adapter.deriveHotWallet(signer, await accountOf(other.id), HOT_WALLET_SLOT.refunds);
  await node.rpc('anvil_setBalance', [hot.address, `0x${(10n ** 19n).toString(16)}`]);
  await fund(USDT(), hot.address, usdt(1000));
  await fund(USDC(), hot.address, usdt(1000));
  server = await startSignerServer({
    db: t.db,
    signer,
    // The chain id as configured (CHAIN_<NET>_<MODE>_CHAIN_ID): the signer takes no node's word for it.
    adapters: new ChainRegistry([{ adapter, chainId: await node.provider.getNetwork().then((n) => n.chainId) }, tron]),
    socketPath,
    limits: { refundPerHour: '100', refundPerDay: '1000' },
    log: createLogger('silent'),
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await node?.stop();
  await t?.destroy();
});

let seq = 0;
const destination = () => Wallet.createRandom().address.toLowerCase();

/** A refund of `shop` (or `m`) in `status`, paying `amount` USDT base units to a fresh destination. */
async function refund(
  amount: bigint,
  o: { status?: 'pending' | 'processing' | 'completed'; m?: typeof shop; network?: 'ethereum' | 'tron'; to?: string } = {},
) {
  const m = o.m ?? shop;
  const session = await createBoundSession(t.db, adapter, m, { amountMinor: 100_000n, token: 'USDT' });
  const id = `re_signer${seq++}${randomBytes(3).toString('hex')}`;
  const to = o.to ?? destination();
  await t.db
    .insertInto('refunds')
    .values({
      id,
      merchant_id: m.id,
      mode: 'test',
      refund_id: id,
      session_id: session.id,
      order_id: `o-${id}`,
      amount_minor: amount / 10_000n,
      currency: 'USDT',
      metadata: '{}',
      status: o.status ?? 'processing',
      network: o.network ?? 'ethereum',
      token: 'USDT',
      destination_address: to,
      amount_base: amount,
      request_fingerprint: 'x',
      ...(o.status === 'completed'
        ? { transaction_hash: `0x${'ab'.repeat(32)}`, delivered_base: amount, processed_at: new Date(), signed_at: new Date() }
        : {}),
    })
    .execute();
  return { id, to, amount };
}

const intentOf = (refundId: string): SigningIntent => ({ purpose: 'refund_payout', refund_id: refundId });

/** The payout engine's own transfer for a refund: built by the real adapter (gas estimate, fees, chain id). */
async function built(r: { to: string; amount: bigint }, o: { token?: 'USDT' | 'USDC'; feeBumpPercent?: number } = {}) {
  return (await adapter.buildTokenTransfer({
    from: hot,
    to: r.to,
    token: o.token ?? 'USDT',
    amount: r.amount,
    nonce: nonce++,
    ...(o.feeBumpPercent ? { feeBumpPercent: o.feeBumpPercent } : {}),
  })) as UnsignedTransfer<EvmTxBody>;
}

/** Signs through the real client, recording the preimage it sent. */
async function signThroughClient(unsigned: UnsignedTransfer<EvmTxBody>, refundId: string) {
  const seen: SigningPreimage[] = [];
  const remote = withIntent(new RemoteSigner(socketPath) as unknown as TxSigner, intentOf(refundId));
  const recording: TxSigner = {
    publicKey: (k) => remote.publicKey(k),
    signSecp256k1Digest: (k, d, p) => {
      seen.push(p!);
      return remote.signSecp256k1Digest(k, d, p);
    },
    signEd25519: (k, m) => remote.signEd25519(k, m),
  };
  const signed = await adapter.signTransfer(unsigned, recording);
  return { signed, preimage: seen[0]! };
}

/** An unsigned EVM transaction from a built body, with fields changed. */
function txOf(body: EvmTxBody, change: Partial<{ chainId: bigint; to: string; data: string; value: bigint }> = {}): Transaction {
  return Transaction.from({
    type: 2,
    chainId: change.chainId ?? BigInt(body.chainId),
    nonce: Number(body.nonce),
    to: change.to ?? body.to,
    data: change.data ?? body.data,
    value: change.value ?? 0n,
    gasLimit: BigInt(body.gasLimit),
    maxFeePerGas: BigInt(body.maxFeePerGas!),
    maxPriorityFeePerGas: BigInt(body.maxPriorityFeePerGas!),
  });
}

const newRequestId = () => `req_${randomBytes(8).toString('hex')}`;

function signRequest(tx: Transaction, refundId: string, o: { key?: KeyPath; requestId?: string; digest?: string } = {}) {
  return {
    request_id: o.requestId ?? newRequestId(),
    intent: intentOf(refundId),
    key: o.key ?? hot.key,
    payload: {
      curve: 'secp256k1',
      digest: o.digest ?? tx.unsignedHash,
      preimage: { kind: 'evm-transaction', unsignedSerialized: tx.unsignedSerialized },
    },
  };
}

function post(path: string, body: string, method = 'POST'): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      { socketPath, path, method, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: unknown = null;
          try {
            json = JSON.parse(text);
          } catch {
            json = null;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ask = (req: ReturnType<typeof signRequest> | Record<string, unknown>) => post('/v1/sign', JSON.stringify(req));
const auditOf = (requestId: string) => listSignerAudit(t.db, { limit: 10, requestId });

/** A refusal: 403 with the code, and its audit row (refused, same code, the request's digest). */
async function expectRefused(req: ReturnType<typeof signRequest>, code: string) {
  const r = await ask(req);
  expect(r.status, r.text).toBe(403);
  expect(r.json.error.code).toBe(code);
  expect(r.text).not.toMatch(/at .*\.ts:\d+/); // never a stack
  const rows = await auditOf(req.request_id);
  expect(rows[0]).toMatchObject({ outcome: 'refused', code, request_id: req.request_id, purpose: 'refund_payout' });
  return rows[0]!;
}

describe('the signer service', () => {
  it('listens on a 0600 socket, answers healthz and public keys, and refuses to start beside a live signer', async () => {
    expect((await stat(socketPath)).mode & 0o777).toBe(0o600);
    const health = await post('/healthz', '', 'GET');
    expect(health).toMatchObject({ status: 200, json: { status: 'ok', paused: false } });
    const pk = await post('/v1/public-key', JSON.stringify({ key: hot.key }));
    expect(pk.status).toBe(200);
    expect(pk.json.public_key).toBe(`0x${Buffer.from(await signer.publicKey(hot.key)).toString('hex')}`);
    await expect(
      startSignerServer({
        db: t.db,
        signer,
        adapters: new ChainRegistry([{ adapter, chainId: await node.provider.getNetwork().then((n) => n.chainId) }]),
        socketPath,
        limits: { refundPerHour: '1', refundPerDay: '1' },
        log: createLogger('silent'),
      }),
    ).rejects.toThrow(/already listening/);
  });

  it("signs the payout engine's own refund transfer through the real client; the signature recovers to the hot wallet", async () => {
    const r = await refund(usdt(10));
    const unsigned = await built(r);
    const { signed, preimage } = await signThroughClient(unsigned, r.id);
    expect(signed.sender).toBe(hot.address.toLowerCase());
    const tx = Transaction.from(signed.raw);
    expect(tx.from!.toLowerCase()).toBe(hot.address.toLowerCase());
    expect(recoverAddress(tx.unsignedHash, tx.signature!).toLowerCase()).toBe(hot.address.toLowerCase());
    expect(preimage).toEqual({ kind: 'evm-transaction', unsignedSerialized: tx.unsignedSerialized });
    const [row] = await listSignerAudit(t.db, { limit: 1 });
    expect(row).toMatchObject({
      outcome: 'signed',
      code: null,
      purpose: 'refund_payout',
      intent: { purpose: 'refund_payout', refund_id: r.id },
      merchant_id: shop.id,
      network: 'ethereum',
      mode: 'test',
      key_path: `secp256k1:${hot.key.path}`,
      digest: tx.unsignedHash,
      summary: { to: r.to, token: 'USDT', amount_base: String(r.amount) },
      amount_base: r.amount,
    });

    // A fee-bumped replacement of the same refund is signed too (new request id), and counted once by the limits.
    const bumped = await built(r, { feeBumpPercent: 25 });
    const again = await signThroughClient(bumped, r.id);
    expect(Transaction.from(again.signed.raw).from!.toLowerCase()).toBe(hot.address.toLowerCase());
  });

  it('refuses forged and wrong requests, each with its code and its audit row', async () => {
    const r = await refund(usdt(3));
    const body = (await built(r)).body;
    const transferTo = (to: string, amount: bigint) => ERC20.encodeFunctionData('transfer', [to, amount]);

    // wrong recipient: an address of nobody's
    await expectRefused(signRequest(txOf(body, { data: transferTo(destination(), r.amount) }), r.id), 'wrong_recipient');
    // destination not the refund's: another refund's destination
    const b = await refund(usdt(3));
    const row = await expectRefused(signRequest(txOf(body, { data: transferTo(b.to, r.amount) }), r.id), 'wrong_recipient');
    expect(row).toMatchObject({ merchant_id: shop.id, summary: { to: b.to }, amount_base: r.amount });
    // wrong amount
    await expectRefused(signRequest(txOf(body, { data: transferTo(r.to, r.amount + 1n) }), r.id), 'wrong_amount');
    // wrong method: approve instead of transfer
    await expectRefused(signRequest(txOf(body, { data: ERC20.encodeFunctionData('approve', [r.to, r.amount]) }), r.id), 'wrong_method');
    // unknown refund
    await expectRefused(signRequest(txOf(body), 're_nosuchrefund'), 'unknown_object');
    // a completed refund: the replay of a settled payout
    const done = await refund(usdt(3), { status: 'completed' });
    await expectRefused(signRequest(txOf(body, { data: transferTo(done.to, done.amount) }), done.id), 'not_payable');
    // wrong key: another merchant's refunds hot wallet
    await expectRefused(signRequest(txOf(body), r.id, { key: otherHot.key }), 'wrong_key');
    // wrong contract: the USDC contract for a USDT refund
    await expectRefused(signRequest(txOf(body, { to: USDC().address }), r.id), 'wrong_contract');
    // wrong chain id: mainnet's for the Anvil chain
    await expectRefused(signRequest(txOf(body, { chainId: 1n }), r.id), 'wrong_chain');
    // digest not the hash of the preimage: a signature of something else asked with a harmless-looking preimage
    await expectRefused(signRequest(txOf(body), r.id, { digest: keccak256('0x1234') }), 'digest_mismatch');
    // native value riding on the transfer
    await expectRefused(signRequest(txOf(body, { value: 1n }), r.id), 'native_value');
    // a sweep step of no sweep in the ledger (sweep steps: test/integration/signer-sweep-evm.test.ts)
    const sweep = { ...signRequest(txOf(body), r.id), intent: { purpose: 'sweep_step', sweep_id: 'sw_1', step_id: 'st_1' } };
    expect((await ask(sweep)).json.error.code).toBe('unknown_object');
    expect((await auditOf(sweep.request_id))[0]).toMatchObject({
      outcome: 'refused',
      code: 'unknown_object',
      purpose: 'sweep_step',
    });

    // A replayed request id: the first is signed, the same id again is refused (both audited).
    const ok = signRequest(txOf(body), r.id);
    expect((await ask(ok)).status).toBe(200);
    const replay = await ask(ok);
    expect(replay).toMatchObject({ status: 403, json: { error: { code: 'replayed_request' } } });
    expect((await auditOf(ok.request_id)).map((x) => [x.outcome, x.code])).toEqual([
      ['refused', 'replayed_request'],
      ['signed', null],
    ]);
  });

  it('answers malformed input with 403 malformed_request, never a 5xx, and audits it', async () => {
    const before = (await listSignerAudit(t.db, { limit: 1 }))[0]!.id;
    const cases = [
      '{"request_id": "req_12345678", "intent": ',
      'null',
      JSON.stringify({ request_id: 'x', intent: {}, key: {}, payload: {} }),
      JSON.stringify({ key: { curve: 'secp256k1', path: "m/44'/60'/0'/0/0" }, extra: 1 }),
      'x'.repeat(300_000),
    ];
    for (const text of cases) {
      const r = await post('/v1/sign', text);
      expect(r.status, text.slice(0, 60)).toBe(403);
      expect(r.json.error.code).toBe('malformed_request');
    }
    expect((await post('/v1/public-key', '{"key":{"curve":"secp256k1","path":"m/x"}}')).json.error.code).toBe('malformed_request');
    expect((await post('/v1/nothing', '{}')).status).toBe(403);
    const rows = await t.db.selectFrom('signer_audit').select(['code', 'request_id']).where('id', '>', BigInt(before)).execute();
    expect(rows).toHaveLength(cases.length);
    expect(rows.every((x) => x.code === 'malformed_request' && x.request_id === null)).toBe(true);
  });

  it('refuses everything while paused, and signs again once resumed (both audited)', async () => {
    const r = await refund(usdt(1));
    const body = (await built(r)).body;
    expect((await pauseSigner(t.db, 'cli:test', 'incident 42')).paused).toBe(true);
    expect((await post('/healthz', '', 'GET')).json.paused).toBe(true);
    await expectRefused(signRequest(txOf(body), r.id), 'paused');
    await expect(signThroughClient(await built(r), r.id)).rejects.toThrow(SignerRefusedError);
    const resumed = await resumeSigner(t.db, 'cli:test');
    expect(resumed).toMatchObject({ paused: false, was_paused: true, changed_by: 'cli:test' });
    expect(await signerStatus(t.db)).toMatchObject({ paused: false });
    expect((await ask(signRequest(txOf(body), r.id))).status).toBe(200);
    const switches = await t.db
      .selectFrom('signer_audit')
      .select(['outcome', 'reason'])
      .where('outcome', 'in', ['paused', 'resumed'])
      .orderBy('id')
      .execute();
    expect(switches).toEqual([
      { outcome: 'paused', reason: 'by cli:test: incident 42' },
      { outcome: 'resumed', reason: 'by cli:test' },
    ]);
  });

  it('refuses over the hourly limit per merchant and network, counting each refund once', async () => {
    // Signed so far in this file: 10 (twice, bumped), 3 and 1 USDT: 14 counted. Limit 100 an hour.
    const fits = await refund(usdt(86));
    expect((await ask(signRequest(txOf((await built(fits)).body), fits.id))).status).toBe(200);
    const over = await refund(usdt(1));
    const row = await expectRefused(signRequest(txOf((await built(over)).body), over.id), 'over_limit');
    expect(row).toMatchObject({ merchant_id: shop.id, network: 'ethereum', amount_base: usdt(1) });
    // Another merchant's limit is its own.
    const theirs = await refund(usdt(1), { m: other });
    const theirBody = (await built(theirs)).body;
    expect((await ask(signRequest(txOf(theirBody), theirs.id, { key: otherHot.key }))).status).toBe(200);
  });

  it('keeps the audit append-only: UPDATE, DELETE and TRUNCATE are refused', async () => {
    await expect(sql`update signer_audit set code = 'x'`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`delete from signer_audit`.execute(t.db)).rejects.toThrow(/append-only/);
    await expect(sql`truncate signer_audit`.execute(t.db)).rejects.toThrow(/append-only/);
    expect((await listSignerAudit(t.db, { limit: 1 })).length).toBe(1);
  });
});

describe('TRON refund payouts', () => {
  const tronTransfer = (o: { owner: string; to: string; amount: bigint; contract?: string; callValue?: bigint }) => {
    const rawDataHex = encodeTriggerRawData({
      refBlockBytes: 'abcd',
      refBlockHash: '11'.repeat(8),
      expiration: 1_900_000_000_000n,
      timestamp: 1_899_999_940_000n,
      feeLimit: 30_000_000n,
      owner: o.owner,
      contract: o.contract ?? TRON_USDT,
      callValue: o.callValue ?? 0n,
      data: ERC20.encodeFunctionData('transfer', [`0x${o.to.slice(2)}`, o.amount]).slice(2),
    });
    return rawDataHex;
  };
  const tronRequest = (refundId: string, rawDataHex: string, key: KeyPath) => ({
    request_id: newRequestId(),
    intent: intentOf(refundId),
    key,
    payload: { curve: 'secp256k1', digest: sha256(`0x${rawDataHex}`), preimage: { kind: 'tron-transaction', rawDataHex } },
  });

  it('signs the transfer of a TRON refund from its hot wallet, and refuses another recipient, owner, contract or TRX value', async () => {
    const account = (
      await t.db.selectFrom('merchant_hd_accounts').select('account_index').where('merchant_id', '=', shop.id).executeTakeFirstOrThrow()
    ).account_index;
    const tronHot = await tron.deriveHotWallet(signer, account, HOT_WALLET_SLOT.refunds);
    const owner = tron.normalizeAddress(tronHot.address)!;
    const dest = `41${Wallet.createRandom().address.slice(2).toLowerCase()}`;
    const r = await refund(usdt(2), { network: 'tron', to: dest });

    const raw = tronTransfer({ owner, to: dest, amount: r.amount });
    const ok = await ask(tronRequest(r.id, raw, tronHot.key));
    expect(ok.status, ok.text).toBe(200);
    const sig = Signature.from({ r: ok.json.signature.r, s: ok.json.signature.s, yParity: ok.json.signature.y_parity });
    expect(
      `41${recoverAddress(sha256(`0x${raw}`), sig)
        .slice(2)
        .toLowerCase()}`,
    ).toBe(owner);

    const refusedWith = async (rawHex: string, code: string) => {
      const req = tronRequest(r.id, rawHex, tronHot.key);
      expect((await ask(req)).json.error.code).toBe(code);
      expect((await auditOf(req.request_id))[0]).toMatchObject({ outcome: 'refused', code, network: 'tron' });
    };
    await refusedWith(tronTransfer({ owner, to: `41${'22'.repeat(20)}`, amount: r.amount }), 'wrong_recipient');
    await refusedWith(tronTransfer({ owner, to: dest, amount: r.amount * 2n }), 'wrong_amount');
    await refusedWith(tronTransfer({ owner: `41${'33'.repeat(20)}`, to: dest, amount: r.amount }), 'wrong_key');
    await refusedWith(tronTransfer({ owner, to: dest, amount: r.amount, contract: `41${'44'.repeat(20)}` }), 'wrong_contract');
    await refusedWith(tronTransfer({ owner, to: dest, amount: r.amount, callValue: 1n }), 'native_value');
    // An EVM key for a TRON refund is not its hot wallet.
    const evmKey = tronRequest(r.id, raw, hot.key);
    expect((await ask(evmKey)).json.error.code).toBe('wrong_key');
  });
});

describe("the signer's database role (deploy/signer-db-role.sql)", () => {
  it("answers 503 (the payout waits) when the node that reads a token's transfer fee is down, never wrong_amount", async () => {
    // The same chain, configured with a node that does not answer: a transfer of another amount than the refund's
    // needs the token's fee to be judged (a gross-up), which cannot be read now.
    const deadSocket = join(tmpdir(), `sp-signer-dead-${randomBytes(6).toString('hex')}.sock`);
    const dead = await startSignerServer({
      db: t.db,
      signer,
      adapters: new ChainRegistry([
        {
          adapter: makeAdapter(node, tokens, { url: 'http://127.0.0.1:9', timeoutMs: 500 }),
          chainId: await node.provider.getNetwork().then((n) => n.chainId),
        },
      ]),
      socketPath: deadSocket,
      limits: { refundPerHour: '1000', refundPerDay: '1000' },
      log: createLogger('silent'),
    });
    try {
      const r = await refund(usdt(2));
      const unsigned = await built({ to: r.to, amount: r.amount + 1n });
      const remote = withIntent(new RemoteSigner(deadSocket) as unknown as TxSigner, intentOf(r.id));
      const err = await adapter.signTransfer(unsigned, remote).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SignerUnavailableError);
      expect((err as Error).message).toMatch(/HTTP 503/);
      // Nothing refused in the audit for this refund: it is asked again once the node answers.
      const rows = await t.db.selectFrom('signer_audit').select(['outcome', 'intent']).where('outcome', '=', 'refused').execute();
      expect(rows.filter((x) => (x.intent as { refund_id?: string } | null)?.refund_id === r.id)).toEqual([]);
    } finally {
      await dead.close();
    }
  });

  it('signs and audits under its read-only role, which can change nothing else in the ledger', async () => {
    const role = `sp_signer_${randomBytes(4).toString('hex')}`;
    const script = readFileSync('deploy/signer-db-role.sql', 'utf8').replaceAll('stablepay_signer', role);
    await sql.raw(script).execute(t.db);
    const url = new URL(t.url);
    url.username = role;
    url.password = '';
    const readOnly = createDb(url.toString(), 2);
    const roSocket = join(tmpdir(), `sp-signer-ro-${randomBytes(6).toString('hex')}.sock`);
    const ro = await startSignerServer({
      db: readOnly,
      signer,
      adapters: new ChainRegistry([{ adapter, chainId: await node.provider.getNetwork().then((n) => n.chainId) }]),
      socketPath: roSocket,
      limits: { refundPerHour: '1000', refundPerDay: '1000' },
      log: createLogger('silent'),
    });
    try {
      const r = await refund(usdt(3));
      const unsigned = await built(r);
      const remote = withIntent(new RemoteSigner(roSocket) as unknown as TxSigner, intentOf(r.id));
      const signed = await adapter.signTransfer(unsigned, remote);
      expect(signed.sender).toBe(hot.address.toLowerCase());
      const rows = await t.db.selectFrom('signer_audit').select(['outcome', 'intent']).where('outcome', '=', 'signed').execute();
      expect(rows.some((x) => (x.intent as { refund_id?: string } | null)?.refund_id === r.id)).toBe(true);
      // The role reads, and appends to its audit only.
      for (const write of [
        sql`update refunds set status = 'completed' where id = ${r.id}`,
        sql`insert into signer_state (id, paused, changed_at) values (true, false, now())`,
        sql`delete from refunds where id = ${r.id}`,
        sql`update merchants set name = 'x'`,
      ])
        await expect(write.execute(readOnly)).rejects.toThrow(/permission denied/);
    } finally {
      await ro.close();
      await readOnly.destroy();
      await sql.raw(`drop owned by ${role}; drop role ${role}`).execute(t.db);
    }
  });
});

describe('Solana refund payouts (ed25519)', () => {
  const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
  let rpc: FakeSolanaRpc;
  let sol: SolanaChainAdapter;
  let solServer: { socketPath: string; close(): Promise<void> };
  let solHot: { key: KeyPath; address: string };
  let otherSolHot: { key: KeyPath; address: string };
  const solSocket = join(tmpdir(), `sp-signer-sol-${randomBytes(6).toString('hex')}.sock`);

  beforeAll(async () => {
    rpc = await startFakeSolanaRpc();
    sol = new SolanaChainAdapter({ mode: 'test', rpcUrl: rpc.url, tokens: [{ symbol: 'USDC', address: MINT, decimals: 6 }] });
    rpc.validator.createMint({ address: MINT, decimals: 6 });
    solHot = await sol.deriveHotWallet(signer, await merchantAccountIndex(t.db, shop.id, 'test'), HOT_WALLET_SLOT.refunds);
    otherSolHot = await sol.deriveHotWallet(signer, await merchantAccountIndex(t.db, other.id, 'test'), HOT_WALLET_SLOT.refunds);
    for (const w of [solHot, otherSolHot]) {
      rpc.validator.airdrop(w.address, 10n * BigInt(LAMPORTS_PER_SOL));
      rpc.validator.setTokenAccount({ mint: MINT, owner: w.address, amount: 1_000_000_000n });
    }
    solServer = await startSignerServer({
      db: t.db,
      signer,
      adapters: new ChainRegistry([sol]),
      socketPath: solSocket,
      limits: { refundPerHour: '1000', refundPerDay: '1000' },
      log: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await solServer?.close();
    await rpc?.close();
  });

  /** A Solana refund row of `shop` paying `amount` USDC base units to a fresh wallet. */
  async function solRefund(amount: bigint) {
    const r = await refund(amount, { network: 'solana' as never, to: Keypair.generate().publicKey.toBase58() });
    await t.db.updateTable('refunds').set({ token: 'USDC', currency: 'USDC' }).where('id', '=', r.id).execute();
    return r;
  }
  const remoteFor = (refundId: string) => withIntent(new RemoteSigner(solSocket) as unknown as TxSigner, intentOf(refundId));
  async function refusedWith(p: Promise<unknown>, code: string) {
    const err = await p.then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SignerRefusedError);
    expect((err as SignerRefusedError).code).toBe(code);
  }

  it("signs the Solana sender's own refund transfer (creating the destination's token account), and refuses forged ones", async () => {
    const r = await solRefund(2_500_000n);
    const transfer = (o: Partial<{ from: typeof solHot; to: string; amount: bigint }> = {}) =>
      sol.buildTokenTransfer({ from: o.from ?? solHot, to: o.to ?? r.to, token: 'USDC', amount: o.amount ?? r.amount });
    const signed = await sol.signTransfer(await transfer(), remoteFor(r.id));
    expect(signed.sender).toBe(solHot.address);
    const tx = VersionedTransaction.deserialize(Buffer.from(signed.raw, 'base64'));
    // ed25519 is deterministic: the hot wallet's own signature of exactly this message.
    expect(Buffer.from(tx.signatures[0]!)).toEqual(Buffer.from(await signer.signEd25519(solHot.key, tx.message.serialize())));
    const [row] = await listSignerAudit(t.db, { limit: 1 });
    expect(row).toMatchObject({
      outcome: 'signed',
      network: 'solana',
      merchant_id: shop.id,
      summary: { to: r.to, amount_base: '2500000' },
    });

    await refusedWith(
      sol.signTransfer(await transfer({ to: Keypair.generate().publicKey.toBase58() }), remoteFor(r.id)),
      'wrong_recipient',
    );
    await refusedWith(sol.signTransfer(await transfer({ amount: r.amount + 1n }), remoteFor(r.id)), 'wrong_amount');
    await refusedWith(sol.signTransfer(await transfer({ from: otherSolHot }), remoteFor(r.id)), 'wrong_key');
    // The sender's own message with one more instruction: a SOL transfer out of the hot wallet.
    const own = await transfer();
    const message = TransactionMessage.decompile(VersionedMessage.deserialize(Buffer.from(own.body.message, 'base64')));
    message.instructions.push(
      SystemProgram.transfer({ fromPubkey: new PublicKey(solHot.address), toPubkey: Keypair.generate().publicKey, lamports: 1_000_000 }),
    );
    const padded = { ...own, body: { ...own.body, message: Buffer.from(message.compileToV0Message().serialize()).toString('base64') } };
    await refusedWith(sol.signTransfer(padded, remoteFor(r.id)), 'wrong_method');
    const codes = (await listSignerAudit(t.db, { limit: 4 })).map((a) => a.code);
    expect(codes.sort()).toEqual(['wrong_amount', 'wrong_key', 'wrong_method', 'wrong_recipient']);
  });

  it("signs a deposit setup (the deposit owner's token account, paid by the hot wallet) and nothing else under its intent", async () => {
    const session = await createBoundSession(t.db, adapter, shop, { amountMinor: 100_000n, token: 'USDT' });
    const owner = Keypair.generate().publicKey.toBase58();
    const [row] = await t.db
      .insertInto('deposit_setups')
      .values({ session_id: session.id, merchant_id: shop.id, network: 'solana', mode: 'test', token: 'USDC', deposit_address: owner })
      .returning('id')
      .execute();
    const setupId = String(row!.id);
    const remote = withIntent(new RemoteSigner(solSocket) as unknown as TxSigner, { purpose: 'deposit_setup', setup_id: setupId });
    const signed = await sol.signTransfer(await sol.buildDepositSetup(solHot, owner, 'USDC'), remote);
    expect(signed.sender).toBe(solHot.address);
    const [audit] = await listSignerAudit(t.db, { limit: 1 });
    expect(audit).toMatchObject({
      outcome: 'signed',
      purpose: 'deposit_setup',
      merchant_id: shop.id,
      summary: { to: owner, amount_base: '0' },
    });

    // Another owner's account, a token transfer under the setup's intent, another merchant's fee payer: refused.
    await refusedWith(
      sol.signTransfer(await sol.buildDepositSetup(solHot, Keypair.generate().publicKey.toBase58(), 'USDC'), remote),
      'wrong_recipient',
    );
    await refusedWith(
      sol.signTransfer(await sol.buildTokenTransfer({ from: solHot, to: owner, token: 'USDC', amount: 1n }), remote),
      'wrong_method',
    );
    await refusedWith(sol.signTransfer(await sol.buildDepositSetup(otherSolHot, owner, 'USDC'), remote), 'wrong_key');
    // Once the setup is settled, it is not signed again.
    await t.db.updateTable('deposit_setups').set({ status: 'succeeded' }).where('id', '=', row!.id).execute();
    await refusedWith(sol.signTransfer(await sol.buildDepositSetup(solHot, owner, 'USDC'), remote), 'not_payable');
  });
});
