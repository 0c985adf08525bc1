import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Interface, Transaction, Wallet as EthersWallet, concat, hashAuthorization } from 'ethers';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainRegistry } from '../../chains/chain-registry.js';
import { SWEEP_DELEGATE_SALT, encodeSweepCall, sweepDelegateAddress, sweepDelegateInitCode } from '../../chains/evm/sweep-7702.js';
import { CHANGE_DEPOSIT, COIN_TYPE_EVM, addressPath } from '../../chains/hd/bip44.js';
import {
  HOT_WALLET_SLOT,
  OPERATOR_ACCOUNT,
  OPERATOR_SLOT,
  type KeyPath,
  type SweepMethod,
  type SweepSource,
  type Wallet,
} from '../../chains/types.js';
import { listSignerAudit } from '../../src/ledger/signer/signer-audit.js';
import { setTreasuryDestination } from '../../src/ledger/treasury/destinations.js';
import { listSweeps, sweepSteps, type SweepRow } from '../../src/ledger/treasury/sweeps.js';
import { createLogger } from '../../src/logger.js';
import { RemoteSigner } from '../../src/signer/remote-signer.js';
import { startSignerServer } from '../../src/signer-service/server.js';
import type { PlannedBatch } from '../../src/treasury/planner.js';
import { createSweeps, driveSweeps } from '../../src/treasury/runner.js';
import type { SweepEngineDeps } from '../../src/treasury/step-kind.js';
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

// Sweep steps through the signer role (docs/signer.md, "Sweep steps"), on Anvil (prague) with Postgres: the treasury's
// runner drives a 7702 sweep and a gas top-up sweep through the outbound engine with a RemoteSigner (the process holds
// no key) against a real signer server, and both land; forged sweep requests are each refused with their code and
// their audit row; sweeps to a recently changed treasury are limited, sweeps to the refunds hot wallet are not.

let t: TestDatabase;
let node: AnvilNode;
let usdt: DeployedToken;
let adapter: ReturnType<typeof makeAdapter>;
let registry: ChainRegistry;
let chainId: bigint;
let server: { socketPath: string; close(): Promise<void> };
let gasStation: Wallet;
let engine: SweepEngineDeps;

const socketPath = join(tmpdir(), `sp-signer-sweep-${randomBytes(6).toString('hex')}.sock`);
const USDT = (n: number) => BigInt(n) * 1_000_000n;
const ERC20 = new Interface([
  'function transfer(address,uint256)',
  'function approve(address,uint256)',
  'function balanceOf(address) view returns (uint256)',
]);
const attacker = EthersWallet.createRandom().address.toLowerCase();

beforeAll(async () => {
  [t, node] = await Promise.all([createTestDatabase(), startAnvil({ extraArgs: ['--hardfork', 'prague'] })]);
  [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  adapter = makeAdapter(node, [usdt], { confirmation: { kind: 'depth', confirmations: 1 } });
  chainId = await node.provider.getNetwork().then((n) => n.chainId);
  registry = new ChainRegistry([{ adapter, chainId }]);
  gasStation = await adapter.deriveHotWallet(signer, OPERATOR_ACCOUNT, OPERATOR_SLOT.gasStation);
  await node.rpc('anvil_setBalance', [gasStation.address, `0x${(10n ** 20n).toString(16)}`]);
  server = await startSignerServer({
    db: t.db,
    signer,
    adapters: registry,
    socketPath,
    // Sweeps to a treasury changed in the last 24 hours: at most 50 USDT an hour, 80 a day per merchant and network.
    limits: { refundPerHour: '100', refundPerDay: '1000', sweepPerHour: '50', sweepPerDay: '80', sweepRecentHours: 24 },
    log: createLogger('silent'),
  });
  // The workers' side: the treasury's runner and the outbound engine, with no key, asking the signer for everything.
  engine = { db: t.db, adapters: registry, signer: new RemoteSigner(socketPath), pollMs: 20, stuckAfterMs: 120_000, feeBumpPercent: 25 };
}, 60_000);

afterAll(async () => {
  await server?.close();
  await node?.stop();
  await t?.destroy();
});

type Merchant = { id: string; account: number };
/** A merchant with its real HD account (the one the signer reads in merchant_hd_accounts). */
async function newMerchant(): Promise<Merchant> {
  const m = await createMerchant(t.db);
  const row = await t.db
    .selectFrom('merchant_hd_accounts')
    .select('account_index')
    .where('merchant_id', '=', m.id)
    .executeTakeFirstOrThrow();
  return { id: m.id, account: row.account_index };
}
const hotOf = (m: Merchant) => adapter.deriveHotWallet(signer, m.account, HOT_WALLET_SLOT.refunds);
const balanceOf = async (who: string) =>
  BigInt(await node.rpc<string>('eth_call', [{ to: usdt.address, data: ERC20.encodeFunctionData('balanceOf', [who]) }, 'latest']));

/** Deposit addresses of `m` holding `amounts` USDT, as sweep sources (the deposit key the planner derives). */
async function deposits(m: Merchant, amounts: bigint[]): Promise<SweepSource[]> {
  const out: SweepSource[] = [];
  for (const amount of amounts) {
    const s = await createBoundSession(t.db, adapter, m, { amountMinor: 100n, token: 'USDT' });
    const row = await t.db.selectFrom('payment_sessions').select('address_index').where('id', '=', s.id).executeTakeFirstOrThrow();
    const key: KeyPath = { curve: 'secp256k1', path: addressPath(COIN_TYPE_EVM, m.account, CHANGE_DEPOSIT, row.address_index) };
    await fund(usdt, s.address, amount);
    out.push({ key, address: s.address.toLowerCase(), amount });
  }
  return out;
}

/** A sweep of `sources` to `destination`, planned by the chain's method and persisted as the runner does. */
async function newSweep(
  m: Merchant,
  method: SweepMethod,
  sources: SweepSource[],
  o: { destination: string; kind: 'hot_wallet' | 'treasury'; destinations: string[] },
): Promise<SweepRow> {
  const impl = adapter.sweepMethods().find((x) => x.method === method)!;
  const request = { token: 'USDT' as const, sources, destination: o.destination, destinations: o.destinations, gasStation };
  const plan = await impl.plan(request);
  expect(plan.skipped).toEqual([]);
  const batch = {
    merchantId: m.id,
    network: 'ethereum',
    mode: 'test',
    token: 'USDT',
    destinationKind: o.kind,
    request,
    plan,
    amountBase: sources.reduce((x, s) => x + s.amount, 0n),
    estimatedCost: plan.estimatedCost,
    estimatedCostInToken: 0n,
    feeShareBps: 0,
  } as unknown as PlannedBatch;
  const [sweep] = await createSweeps(t.db, [batch]);
  return sweep!;
}

async function setTreasury(m: Merchant, address: string, o: { daysAgo?: number } = {}) {
  await setTreasuryDestination(t.db, { merchantId: m.id, network: 'ethereum', mode: 'test', treasuryAddress: address, actor: 'test' });
  if (o.daysAgo) {
    const at = new Date(Date.now() - o.daysAgo * 86_400_000);
    await sql`update treasury_destination_changes set changed_at = ${at} where merchant_id = ${m.id}`.execute(t.db);
    await sql`update treasury_destinations set updated_at = ${at} where merchant_id = ${m.id}`.execute(t.db);
  }
}

const drive = () => driveSweeps(engine, { timeoutMs: 30_000, tick: () => node.mine() });

describe('sweeps through the signer role (EVM)', () => {
  it('drives an EIP-7702 sweep (authorizations, delegate deployment, sponsored batch) with no key in the worker', async () => {
    const shop = await newMerchant();
    const hot = await hotOf(shop);
    const sources = await deposits(shop, [USDT(30), USDT(20)]);
    const sweep = await newSweep(shop, 'evm-7702-batch', sources, {
      destination: hot.address,
      kind: 'hot_wallet',
      destinations: [hot.address],
    });
    expect((await sweepSteps(t.db, sweep.id)).map((s) => s.purpose)).toEqual(['deploy', 'batch']);
    expect(await drive()).toBe(0);
    const [done] = await listSweeps(t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ status: 'completed', swept_base: USDT(50) });
    expect(await balanceOf(hot.address)).toBe(USDT(50));
    for (const s of sources) expect(await balanceOf(s.address)).toBe(0n);

    // Every signature was asked of the signer and audited: two authorizations, the deployment, the batch.
    const rows = (await listSignerAudit(t.db, { limit: 50 })).filter((r) => (r.intent as { sweep_id?: string })?.sweep_id === sweep.id);
    expect(rows.every((r) => r.outcome === 'signed')).toBe(true);
    const byKey = rows.map((r) => r.key_path).sort();
    expect(byKey).toEqual([...sources.map((s) => `secp256k1:${s.key.path}`), ...Array(2).fill(`secp256k1:${gasStation.key.path}`)].sort());
    const batchRow = rows.find((r) => r.amount_base === USDT(50))!;
    expect(batchRow).toMatchObject({ merchant_id: shop.id, summary: { to: hot.address.toLowerCase(), token: 'USDT' } });
    expect((batchRow.summary as { limited?: boolean }).limited).toBeUndefined(); // to the refunds hot wallet: not limited
  }, 40_000);

  it('drives a gas top-up sweep (fund, transfer, reclaim) to a treasury set two days ago', async () => {
    const shop = await newMerchant();
    const hot = await hotOf(shop);
    const treasury = EthersWallet.createRandom().address.toLowerCase();
    await setTreasury(shop, treasury, { daysAgo: 2 });
    const sources = await deposits(shop, [USDT(60)]); // over the recent-destination limit: this treasury is not recent
    const sweep = await newSweep(shop, 'evm-gas-topup', sources, {
      destination: treasury,
      kind: 'treasury',
      destinations: [hot.address, treasury],
    });
    expect(await drive()).toBe(0);
    const [done] = await listSweeps(t.db, { merchantId: shop.id, limit: 1 });
    expect(done).toMatchObject({ status: 'completed', swept_base: USDT(60) });
    expect(await balanceOf(treasury)).toBe(USDT(60));
    const rows = (await listSignerAudit(t.db, { limit: 50 })).filter((r) => (r.intent as { sweep_id?: string })?.sweep_id === sweep.id);
    expect(rows.length).toBeGreaterThanOrEqual(2); // fund and transfer (the reclaim when worth it)
    expect(rows.every((r) => r.outcome === 'signed')).toBe(true);
    expect(rows.find((r) => r.amount_base === USDT(60))).toMatchObject({
      key_path: `secp256k1:${sources[0]!.key.path}`,
      summary: { to: treasury },
    });
  }, 40_000);
});

// ---- forged requests --------------------------------------------------------------------------------------------

const newRequestId = () => `req_${randomBytes(8).toString('hex')}`;
type SignReq = { request_id: string; intent: Record<string, string>; key: KeyPath; payload: Record<string, unknown> };

function txRequest(
  intent: Record<string, string>,
  key: KeyPath,
  tx: Partial<{ to: string; data: string; value: bigint; chainId: bigint; type: number }>,
): SignReq {
  const unsigned = Transaction.from({
    type: tx.type ?? 2,
    chainId: tx.chainId ?? chainId,
    nonce: 0,
    to: tx.to ?? null,
    data: tx.data ?? '0x',
    value: tx.value ?? 0n,
    gasLimit: 500_000n,
    maxFeePerGas: 10n ** 10n,
    maxPriorityFeePerGas: 10n ** 9n,
  });
  return {
    request_id: newRequestId(),
    intent,
    key,
    payload: {
      curve: 'secp256k1',
      digest: unsigned.unsignedHash,
      preimage: { kind: 'evm-transaction', unsignedSerialized: unsigned.unsignedSerialized },
    },
  };
}

function authRequest(intent: Record<string, string>, key: KeyPath, a: { address: string; chainId?: bigint; nonce?: bigint }): SignReq {
  const auth = { address: a.address, chainId: a.chainId ?? chainId, nonce: a.nonce ?? 0n };
  return {
    request_id: newRequestId(),
    intent,
    key,
    payload: {
      curve: 'secp256k1',
      digest: hashAuth(auth),
      preimage: { kind: 'evm-authorization', chainId: auth.chainId.toString(), address: auth.address, nonce: auth.nonce.toString() },
    },
  };
}

const hashAuth = (a: { address: string; chainId: bigint; nonce: bigint }) => hashAuthorization(a).toLowerCase();

function ask(body: SignReq): Promise<{ status: number; json: { error?: { code: string } }; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        socketPath,
        path: '/v1/sign',
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text), text });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function expectRefused(req: SignReq, code: string) {
  const r = await ask(req);
  expect(r.status, r.text).toBe(403);
  expect(r.json.error?.code, r.text).toBe(code);
  const [row] = await listSignerAudit(t.db, { limit: 1, requestId: req.request_id });
  expect(row).toMatchObject({ outcome: 'refused', code, purpose: 'sweep_step', request_id: req.request_id });
  return row!;
}

async function expectSigned(req: SignReq) {
  const r = await ask(req);
  expect(r.status, r.text).toBe(200);
  const [row] = await listSignerAudit(t.db, { limit: 1, requestId: req.request_id });
  expect(row).toMatchObject({ outcome: 'signed', purpose: 'sweep_step' });
  return row!;
}

describe('forged sweep requests', () => {
  let shop: Merchant;
  let hot: Wallet;
  let treasury: string;
  let sweep7702: SweepRow;
  let sources: SweepSource[];
  let stranger: SweepSource; // a deposit address of the same merchant, not in the sweep
  let batchStep: { id: string };
  let deployStep: { id: string };
  let delegate: string;
  const intentOf = (sweepId: string, stepId: string) => ({ purpose: 'sweep_step', sweep_id: sweepId, step_id: stepId });

  beforeAll(async () => {
    shop = await newMerchant();
    hot = await hotOf(shop);
    treasury = EthersWallet.createRandom().address.toLowerCase();
    await setTreasury(shop, treasury); // changed now: sweeps to it are limited
    sources = await deposits(shop, [USDT(40), USDT(35)]);
    [stranger] = (await deposits(shop, [USDT(5)])) as [SweepSource];
    const destinations = [hot.address, treasury];
    sweep7702 = await newSweep(shop, 'evm-7702-batch', sources, { destination: hot.address, kind: 'hot_wallet', destinations });
    const steps = await sweepSteps(t.db, sweep7702.id);
    deployStep = steps.find((s) => s.purpose === 'deploy')!;
    batchStep = steps.find((s) => s.purpose === 'batch')!;
    delegate = sweepDelegateAddress(gasStation.address.toLowerCase(), destinations);
  }, 30_000);

  it('signs an authorization to the merchant delegate, and refuses another delegate, another chain, a key not in the sweep', async () => {
    const intent = intentOf(sweep7702.id, batchStep.id);
    const ok = await expectSigned(authRequest(intent, sources[0]!.key, { address: delegate }));
    expect(ok).toMatchObject({ merchant_id: shop.id, amount_base: 0n, summary: { to: delegate } });
    // The delegate of an attacker's destination (bound to our gas station): authorization to another delegate.
    const rogue = sweepDelegateAddress(gasStation.address.toLowerCase(), [attacker]);
    await expectRefused(authRequest(intent, sources[0]!.key, { address: rogue }), 'wrong_contract');
    await expectRefused(authRequest(intent, sources[0]!.key, { address: delegate, chainId: 0n }), 'wrong_chain');
    // The key of a deposit address of the same merchant that is not a source of this sweep.
    await expectRefused(authRequest(intent, stranger.key, { address: delegate }), 'wrong_key');
    // A deposit key of another merchant's account (a forged sweep_sources row would name it): its path does not derive.
    const foreign = { curve: 'secp256k1' as const, path: addressPath(COIN_TYPE_EVM, shop.account + 100, CHANGE_DEPOSIT, 0) };
    await expectRefused(authRequest(intent, foreign, { address: delegate }), 'wrong_key');
    // A forged sweep_sources row naming another merchant's deposit address and key: the key does not derive under
    // this merchant's account, so it is not a source the signer accepts.
    const other = await newMerchant();
    const [theirs] = (await deposits(other, [USDT(2)])) as [SweepSource];
    await t.db
      .insertInto('sweep_sources')
      .values({
        sweep_id: sweep7702.id,
        network: 'ethereum',
        mode: 'test',
        token: 'USDT',
        address: theirs.address,
        key: JSON.stringify(theirs.key),
        planned_base: USDT(2),
      })
      .execute();
    await expectRefused(authRequest(intent, theirs.key, { address: delegate }), 'wrong_key');
    // The gas station's key asked to sign an authorization.
    await expectRefused(authRequest(intent, gasStation.key, { address: delegate }), 'wrong_key');
  });

  it("refuses a batch to a destination that is not the merchant's, over the plan, from a stranger, or calling something else", async () => {
    const intent = intentOf(sweep7702.id, batchStep.id);
    const addrs = sources.map((s) => s.address);
    const call = (to: string, amounts: bigint[], from = addrs) => encodeSweepCall(usdt.address, to, from, amounts);
    // A batch to the refunds hot wallet is never limited: 75 USDT, over the recent-treasury limit, is signed.
    const ok = await expectSigned(txRequest(intent, gasStation.key, { to: delegate, data: call(hot.address, [USDT(40), USDT(35)]) }));
    expect(ok).toMatchObject({ amount_base: USDT(75), summary: { to: hot.address.toLowerCase() } });
    // Destination not an allowed one.
    const bad = await expectRefused(
      txRequest(intent, gasStation.key, { to: delegate, data: call(attacker, [USDT(40), USDT(35)]) }),
      'wrong_recipient',
    );
    expect(bad).toMatchObject({ merchant_id: shop.id, summary: { to: attacker } });
    // More than the ledger planned from a source.
    await expectRefused(txRequest(intent, gasStation.key, { to: delegate, data: call(hot.address, [USDT(41), USDT(35)]) }), 'wrong_amount');
    // A source that is not in the sweep.
    await expectRefused(
      txRequest(intent, gasStation.key, { to: delegate, data: call(hot.address, [USDT(40), USDT(5)], [addrs[0]!, stranger.address]) }),
      'wrong_key',
    );
    // Unknown contract: the same call to another delegate, and the token itself.
    const rogue = sweepDelegateAddress(gasStation.address.toLowerCase(), [attacker]);
    await expectRefused(txRequest(intent, gasStation.key, { to: rogue, data: call(hot.address, [USDT(40), USDT(35)]) }), 'wrong_contract');
    // Unknown method: approve on the delegate; and native value riding on the batch.
    await expectRefused(
      txRequest(intent, gasStation.key, { to: delegate, data: ERC20.encodeFunctionData('approve', [attacker, 1n]) }),
      'wrong_method',
    );
    await expectRefused(
      txRequest(intent, gasStation.key, { to: delegate, data: call(hot.address, [USDT(40), USDT(35)]), value: 1n }),
      'native_value',
    );
    // Signed by a deposit key instead of the gas station.
    await expectRefused(txRequest(intent, sources[0]!.key, { to: delegate, data: call(hot.address, [USDT(40), USDT(35)]) }), 'wrong_key');
  });

  it('signs the deployment of the merchant delegate only, through the CREATE2 deployer', async () => {
    const intent = intentOf(sweep7702.id, deployStep.id);
    const deployer = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
    const data = (destinations: string[]) =>
      concat([SWEEP_DELEGATE_SALT, sweepDelegateInitCode(gasStation.address.toLowerCase(), destinations)]);
    await expectSigned(txRequest(intent, gasStation.key, { to: deployer, data: data([hot.address, treasury]) }));
    await expectRefused(txRequest(intent, gasStation.key, { to: deployer, data: data([attacker]) }), 'wrong_method');
    await expectRefused(txRequest(intent, gasStation.key, { data: data([hot.address, treasury]) }), 'wrong_contract');
  });

  it('refuses a step of another sweep, a settled step, a finished sweep, an unknown sweep', async () => {
    const other = await newMerchant();
    const otherSweep = await newSweep(other, 'evm-gas-topup', await deposits(other, [USDT(3)]), {
      destination: (await hotOf(other)).address,
      kind: 'hot_wallet',
      destinations: [(await hotOf(other)).address],
    });
    const otherStep = (await sweepSteps(t.db, otherSweep.id))[0]!;
    const tx = { to: delegate, data: encodeSweepCall(usdt.address, hot.address, [sources[0]!.address], [USDT(1)]) };
    // The step id of another sweep, under this sweep's id.
    await expectRefused(txRequest(intentOf(sweep7702.id, otherStep.id), gasStation.key, tx), 'unknown_object');
    await expectRefused(txRequest(intentOf('swp_nosuchsweep', batchStep.id), gasStation.key, tx), 'unknown_object');
    // A settled step (skipped, succeeded or failed) is not signed again.
    await t.db.updateTable('sweep_steps').set({ status: 'skipped', settled_at: new Date() }).where('id', '=', otherStep.id).execute();
    await expectRefused(txRequest(intentOf(otherSweep.id, otherStep.id), gasStation.key, { to: otherStep.from_address }), 'not_payable');
    // A sweep that is not running.
    await t.db.updateTable('sweeps').set({ status: 'failed', finished_at: new Date() }).where('id', '=', otherSweep.id).execute();
    const next = (await sweepSteps(t.db, otherSweep.id))[1]!;
    await expectRefused(txRequest(intentOf(otherSweep.id, next.id), gasStation.key, { to: next.from_address }), 'not_payable');
  });

  it('limits top-up sweeps to a treasury changed recently, and refuses forged top-up steps', async () => {
    const srcs = await deposits(shop, [USDT(45), USDT(30)]);
    const sweep = await newSweep(shop, 'evm-gas-topup', srcs, {
      destination: treasury,
      kind: 'treasury',
      destinations: [hot.address, treasury],
    });
    const steps = await sweepSteps(t.db, sweep.id);
    const of = (purpose: string, i: number) => steps.filter((s) => s.purpose === purpose)[i]!;
    const transfer = (stepIndex: number, key: KeyPath, to: string, amount: bigint) =>
      txRequest(intentOf(sweep.id, of('transfer', stepIndex).id), key, {
        to: usdt.address,
        data: ERC20.encodeFunctionData('transfer', [to, amount]),
      });
    const [a, b] = [srcs.find((s) => s.amount === USDT(45))!, srcs.find((s) => s.amount === USDT(30))!];
    const stepOf = (s: SweepSource) =>
      steps.filter((x) => x.purpose === 'transfer').findIndex((x) => (x.step as { sources: string[] }).sources[0] === s.address);

    // 45 USDT to the new treasury: within 50 an hour; signed, and marked as counted by the limits.
    const first = await expectSigned(transfer(stepOf(a), a.key, treasury, USDT(45)));
    expect(first).toMatchObject({ amount_base: USDT(45), summary: { to: treasury, limited: true } });
    // A fee-bumped replacement of the same step is the same money: counted once.
    await expectSigned(transfer(stepOf(a), a.key, treasury, USDT(45)));
    // 30 more in the same hour: 75 > 50.
    const over = await expectRefused(transfer(stepOf(b), b.key, treasury, USDT(30)), 'over_limit');
    expect(over.reason).toMatch(/recently changed treasury/);
    // The same 30 to the refunds hot wallet: not limited.
    await expectSigned(transfer(stepOf(b), b.key, hot.address, USDT(30)));
    // Forged transfers: another recipient, more than planned, the key of a deposit address not in the sweep.
    await expectRefused(transfer(stepOf(b), b.key, attacker, USDT(30)), 'wrong_recipient');
    await expectRefused(transfer(stepOf(b), b.key, hot.address, USDT(31)), 'wrong_amount');
    await expectRefused(transfer(stepOf(b), stranger.key, hot.address, USDT(5)), 'wrong_key');
    // Another contract than the registry's token.
    await expectRefused(
      txRequest(intentOf(sweep.id, of('transfer', 0).id), a.key, {
        to: attacker,
        data: ERC20.encodeFunctionData('transfer', [hot.address, 1n]),
      }),
      'wrong_contract',
    );

    // fund: the gas station pays a source of this sweep, native coin only, bounded.
    const fund = of('fund', 0);
    const planned = BigInt((fund.step as { value: string }).value);
    const fundTo = (fund.step as { to: string }).to;
    await expectSigned(txRequest(intentOf(sweep.id, fund.id), gasStation.key, { to: fundTo, value: planned }));
    await expectRefused(txRequest(intentOf(sweep.id, fund.id), gasStation.key, { to: attacker, value: planned }), 'wrong_recipient');
    await expectRefused(txRequest(intentOf(sweep.id, fund.id), gasStation.key, { to: fundTo, value: planned + 1n }), 'wrong_amount');
    await expectRefused(
      txRequest(intentOf(sweep.id, fund.id), gasStation.key, { to: fundTo, value: planned, data: '0x1234' }),
      'wrong_method',
    );
    // reclaim: a deposit key back to the gas station, and nowhere else.
    const reclaim = of('reclaim', 0);
    const reclaimKey = (reclaim.step as { from: { key: KeyPath } }).from.key;
    await expectSigned(txRequest(intentOf(sweep.id, reclaim.id), reclaimKey, { to: gasStation.address, value: 10n ** 15n }));
    await expectRefused(txRequest(intentOf(sweep.id, reclaim.id), reclaimKey, { to: attacker, value: 10n ** 15n }), 'wrong_recipient');
  });
});
