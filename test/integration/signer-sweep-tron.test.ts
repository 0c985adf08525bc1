import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Contract, Interface, getBytes, sha256 } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { TronChainAdapter } from '../../chains/tron/adapter.js';
import { evmHexToTron, tronBase58, tronToEvmHex } from '../../chains/tron/address.js';
import { encodeTriggerRawData } from '../../chains/tron/protobuf.js';
import { encodeSystemRawData, type SystemContractName } from '../../chains/tron/system-contracts.js';
import { HOT_WALLET_SLOT, OPERATOR_SLOT, type KeyPath, type SweepRequest, type Wallet } from '../../chains/types.js';
import { merchantAccountIndex } from '../../src/ledger/merchants/merchants.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { createLogger } from '../../src/logger.js';
import { SignerRefusedError } from '../../src/domain/signer-errors.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import { MAX_FUND_SUN } from '../../src/signer-service/justify-sweep-tron.js';
import { depositWallet } from '../../src/treasury/wallets.js';
import { startFakeJavaTron, type FakeJavaTron } from '../../scripts/devnet/fake-java-tron/server.js';
import { TRX } from '../../scripts/devnet/fake-java-tron/chain.js';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { createMerchant, deployTokens, fund, signer, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { driveThroughSigner, persistSweep, stepSigner } from '../support/signer-sweep.js';

// TRON sweep steps through the signer role (docs/signer.md, "Sweep steps"): a sweep planned by the real methods
// (tron-energy-delegation, tron-trx-topup) against the fake java-tron on Anvil, persisted as the ledger's sweep, each
// step built by the method and signed through a RemoteSigner under its step's intent: every genuine step is signed
// and lands, tokens reach the merchant's hot wallet. Forged steps under the same intents are refused, each audited:
// tokens to a stranger or over the planned amount, TRX or energy to an address that is not the sweep's, BANDWIDTH or
// a locked delegation, the wrong sender, a contract that is not the step's.

const ERC20 = new Interface(['function transfer(address,uint256)']);
const u6 = (n: number) => BigInt(Math.round(n * 1e6));

let t: TestDatabase;
let node: AnvilNode;
let fake: FakeJavaTron;
let usdt: DeployedToken;
let adapter: TronChainAdapter;
let server: { socketPath: string; close(): Promise<void> };
let shop: { id: string; account: number };
let gasStation: Wallet;
let resources: Wallet;
let hot: Wallet;
let nextIndex = 0;
const socketPath = join(tmpdir(), `sp-signer-tsw-${randomBytes(6).toString('hex')}.sock`);
const tick = () => node.mine(1);

beforeAll(async () => {
  [t, node] = await Promise.all([createTestDatabase(), startAnvil({ chainId: 0x2b6653dc })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  fake = await startFakeJavaTron(node, { solidifyDepth: 1 });
  adapter = new TronChainAdapter({
    mode: 'test',
    jsonRpcUrl: node.url,
    fullHost: fake.url,
    tokens: [{ symbol: 'USDT', address: tronBase58(evmHexToTron(usdt.address)), decimals: 6 }],
    confirmation: { kind: 'depth', confirmations: 2 },
  });
  gasStation = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.gasStation);
  resources = await adapter.deriveOperatorWallet(signer, OPERATOR_SLOT.resources);
  fake.chain.setTrx(gasStation.address, 10_000n * TRX);
  fake.chain.setTrx(resources.address, 200_000n * TRX);
  await stake(resources, 100_000n * TRX);
  const m = await createMerchant(t.db);
  shop = { id: m.id, account: await merchantAccountIndex(t.db, m.id, 'test') };
  hot = await adapter.deriveHotWallet(signer, shop.account, HOT_WALLET_SLOT.refunds);
  server = await startSignerServer({
    db: t.db,
    signer,
    adapters: new ChainRegistry([adapter]),
    socketPath,
    limits: { refundPerHour: '1000', refundPerDay: '1000' },
    log: createLogger('silent'),
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await fake?.close();
  await node?.stop();
  await t?.destroy();
});

/** Stake 2.0 for ENERGY on the resources account, as an operator does (signed with the seed, not via the signer). */
async function stake(wallet: Wallet, sun: bigint): Promise<void> {
  const post = async (path: string, body: unknown) =>
    (await (await fetch(`${fake.url}/${path}`, { method: 'POST', body: JSON.stringify(body) })).json()) as Record<string, unknown>;
  const tx = (await post('wallet/freezebalancev2', { owner_address: wallet.address, frozen_balance: Number(sun), resource: 'ENERGY' })) as {
    txID: string;
  };
  const sig = await signer.signSecp256k1Digest(wallet.key, getBytes(`0x${tx.txID}`));
  const r = await post('wallet/broadcasttransaction', {
    ...tx,
    signature: [`${sig.r.slice(2)}${sig.s.slice(2)}${(27 + sig.yParity).toString(16)}`],
  });
  expect(r.result).toBe(true);
}

/** A deposit address of the merchant holding `amount` USDT, with its key as the treasury derives it. */
async function deposit(amount: bigint): Promise<Wallet & { amount: bigint }> {
  const index = BigInt(++nextIndex);
  const address = adapter.normalizeAddress(await adapter.deriveDepositAddress(signer, shop.account, index))!;
  const w = await depositWallet(adapter, signer, shop.account, index, address);
  if ('error' in w) throw new Error(w.error);
  await fund(usdt, tronToEvmHex(address), amount);
  return { ...w, amount };
}

async function tokenBalance(address: string): Promise<bigint> {
  const c = new Contract(usdt.address, ['function balanceOf(address) view returns (uint256)'], node.provider);
  return (c.getFunction('balanceOf') as (a: string) => Promise<bigint>)(tronToEvmHex(address));
}

const header = { refBlockBytes: 'abcd', refBlockHash: '11'.repeat(8), expiration: 1_900_000_000_000n, timestamp: 1_899_999_940_000n };
const system = (
  name: SystemContractName,
  o: { owner: string; to: string; amount: bigint; resource?: 'ENERGY' | 'BANDWIDTH'; lock?: boolean },
) =>
  encodeSystemRawData({
    ...header,
    name,
    owner: o.owner,
    to: o.to,
    amount: o.amount,
    resource: o.resource ?? 'ENERGY',
    lock: o.lock ?? false,
  });
const trigger = (owner: string, to: string, amount: bigint) =>
  encodeTriggerRawData({
    ...header,
    feeLimit: 30_000_000n,
    owner,
    contract: adapter.tokens[0]!.address,
    callValue: 0n,
    data: ERC20.encodeFunctionData('transfer', [tronToEvmHex(to), amount]).slice(2),
  });

describe('TRON sweep steps through the signer', () => {
  it('energy delegation: forged steps refused with their audit rows; the real steps signed, tokens at the hot wallet', async () => {
    const fresh = await deposit(u6(12.5));
    const request: SweepRequest = {
      token: 'USDT',
      sources: [{ key: fresh.key, address: fresh.address, amount: fresh.amount }],
      destination: hot.address,
      gasStation,
      resources,
    };
    const method = adapter.sweepMethods().find((m) => m.method === 'tron-energy-delegation')!;
    const plan = await method.plan(request);
    expect(plan.steps.map((s) => s.purpose)).toEqual(['activate', 'delegate', 'transfer', 'undelegate']);
    const sweep = await persistSweep(t.db, { merchantId: shop.id, network: 'tron', method: method.method, request, plan });
    const stepId = (purpose: string) => sweep.steps.find((s) => s.purpose === purpose)!.id;

    const refusedWith = async (purpose: string, rawDataHex: string, key: KeyPath, code: string) => {
      const remote = stepSigner(socketPath, sweep.id, stepId(purpose));
      const err = await remote.signSecp256k1Digest(key, getBytes(sha256(`0x${rawDataHex}`)), { kind: 'tron-transaction', rawDataHex }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err, `${purpose} → ${code}`).toBeInstanceOf(SignerRefusedError);
      expect((err as SignerRefusedError).code, purpose).toBe(code);
      const [row] = await listSignerAudit(t.db, { limit: 1 });
      expect(row).toMatchObject({ outcome: 'refused', code, purpose: 'sweep_step', merchant_id: shop.id, network: 'tron' });
      return row!;
    };
    const gas = adapter.normalizeAddress(gasStation.address)!;
    const res = adapter.normalizeAddress(resources.address)!;
    const stranger = `41${'5a'.repeat(20)}`;
    const other = await deposit(1n); // the merchant's own deposit address, but not in this sweep

    // transfer: to a stranger, over the planned amount, by a deposit key that is not the sweep's, TRX instead of tokens.
    const row = await refusedWith('transfer', trigger(fresh.address, stranger, fresh.amount), fresh.key, 'wrong_recipient');
    expect(row.summary).toMatchObject({ to: stranger, amount_base: String(fresh.amount) });
    await refusedWith('transfer', trigger(fresh.address, hot.address, fresh.amount + 1n), fresh.key, 'wrong_amount');
    await refusedWith('transfer', trigger(other.address, hot.address, 1n), other.key, 'wrong_key');
    await refusedWith(
      'transfer',
      system('TransferContract', { owner: fresh.address, to: hot.address, amount: 1n }),
      fresh.key,
      'wrong_method',
    );
    // activate: TRX to an address that is not the sweep's, more than the activation, from the resources account.
    await refusedWith(
      'activate',
      system('TransferContract', { owner: gas, to: other.address, amount: 1n }),
      gasStation.key,
      'wrong_recipient',
    );
    await refusedWith(
      'activate',
      system('TransferContract', { owner: gas, to: fresh.address, amount: 2n }),
      gasStation.key,
      'wrong_amount',
    );
    await refusedWith('activate', system('TransferContract', { owner: res, to: fresh.address, amount: 1n }), resources.key, 'wrong_key');
    // delegate: energy to an address not in the sweep, BANDWIDTH, a locked delegation, an undelegation under it.
    const lend = { owner: res, to: fresh.address, amount: 1_000n * TRX };
    await refusedWith('delegate', system('DelegateResourceContract', { ...lend, to: stranger }), resources.key, 'wrong_recipient');
    await refusedWith('delegate', system('DelegateResourceContract', { ...lend, resource: 'BANDWIDTH' }), resources.key, 'wrong_method');
    await refusedWith('delegate', system('DelegateResourceContract', { ...lend, lock: true }), resources.key, 'wrong_method');
    await refusedWith('delegate', system('UnDelegateResourceContract', lend), resources.key, 'wrong_method');
    await refusedWith('delegate', system('DelegateResourceContract', { ...lend, owner: gas }), gasStation.key, 'wrong_key');
    await refusedWith('undelegate', system('UnDelegateResourceContract', { ...lend, to: other.address }), resources.key, 'wrong_recipient');

    // The methods' own steps, through the signer: all signed, all landed.
    const driven = await driveThroughSigner({ adapter, method, request, plan, sweepId: sweep.id, steps: sweep.steps }, socketPath, tick);
    expect(driven.map((d) => [d.purpose, d.outcome?.status])).toEqual([
      ['activate', 'succeeded'],
      ['delegate', 'succeeded'],
      ['transfer', 'succeeded'],
      ['undelegate', 'succeeded'],
    ]);
    expect(await tokenBalance(hot.address)).toBe(fresh.amount);
    const signed = await t.db
      .selectFrom('signer_audit')
      .select(['intent', 'summary', 'amount_base', 'key_path'])
      .where('outcome', '=', 'signed')
      .where('purpose', '=', 'sweep_step')
      .execute();
    const byStep = (p: string) => signed.filter((s) => (s.intent as { step_id: string }).step_id === stepId(p));
    expect(byStep('transfer')).toEqual([
      {
        intent: { purpose: 'sweep_step', sweep_id: sweep.id, step_id: stepId('transfer') },
        summary: {
          to: adapter.normalizeAddress(hot.address),
          token: 'USDT',
          contract: adapter.tokens[0]!.address,
          amount_base: String(fresh.amount),
        },
        amount_base: fresh.amount,
        key_path: `secp256k1:${fresh.key.path}`,
      },
    ]);
    expect(byStep('activate')[0]).toMatchObject({ summary: { to: fresh.address, token: 'TRX', amount_base: '1' }, amount_base: 0n });
    expect(byStep('delegate')[0]).toMatchObject({ key_path: `secp256k1:${resources.key.path}`, summary: { to: fresh.address } });
    expect(byStep('undelegate')).toHaveLength(1);
  }, 120_000);

  it('TRX top-up: a fund over its bound or to a stranger is refused; the real fund and transfer are signed', async () => {
    const d = await deposit(u6(7));
    fake.chain.setTrx(d.address, 0n); // an existing account without TRX: the top-up funds its transfer's energy
    const request: SweepRequest = {
      token: 'USDT',
      sources: [{ key: d.key, address: d.address, amount: d.amount }],
      destination: hot.address,
      gasStation,
    };
    const method = adapter.sweepMethods().find((m) => m.method === 'tron-trx-topup')!;
    const plan = await method.plan(request);
    expect(plan.steps.map((s) => s.purpose)).toEqual(['fund', 'transfer']);
    const sweep = await persistSweep(t.db, { merchantId: shop.id, network: 'tron', method: method.method, request, plan });
    const fundId = sweep.steps.find((s) => s.purpose === 'fund')!.id;
    const gas = adapter.normalizeAddress(gasStation.address)!;
    const ask = async (rawDataHex: string) =>
      stepSigner(socketPath, sweep.id, fundId)
        .signSecp256k1Digest(gasStation.key, getBytes(sha256(`0x${rawDataHex}`)), { kind: 'tron-transaction', rawDataHex })
        .then(
          () => 'signed',
          (e: unknown) => (e as SignerRefusedError).code,
        );
    const planned = plan.steps[0]!.value;
    expect(planned).toBeLessThan(MAX_FUND_SUN);
    expect(await ask(system('TransferContract', { owner: gas, to: d.address, amount: planned + 1n }))).toBe('wrong_amount');
    expect(await ask(system('TransferContract', { owner: gas, to: `41${'6b'.repeat(20)}`, amount: planned }))).toBe('wrong_recipient');
    // A delegation under a top-up sweep: the method has no such step.
    const del = system('DelegateResourceContract', { owner: adapter.normalizeAddress(resources.address)!, to: d.address, amount: TRX });
    expect(await ask(del)).toBe('wrong_method');
    const rows = await listSignerAudit(t.db, { limit: 3 });
    expect(rows.map((r) => [r.outcome, r.code, r.network])).toEqual([
      ['refused', 'wrong_method', 'tron'],
      ['refused', 'wrong_recipient', 'tron'],
      ['refused', 'wrong_amount', 'tron'],
    ]);

    const driven = await driveThroughSigner({ adapter, method, request, plan, sweepId: sweep.id, steps: sweep.steps }, socketPath, tick);
    expect(driven.map((x) => [x.purpose, x.outcome?.status])).toEqual([
      ['fund', 'succeeded'],
      ['transfer', 'succeeded'],
    ]);
    expect(await tokenBalance(d.address)).toBe(0n);
  }, 120_000);
});
