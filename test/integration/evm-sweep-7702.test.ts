import { Contract, HDNodeWallet, Interface, Transaction, Wallet as EthersWallet, concat, parseUnits } from 'ethers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnvil, type AnvilNode } from '../support/anvil.js';
import { TEST_MNEMONIC, deployTokens, fund, makeAdapter, signer, walletAt, type DeployedToken } from '../support/evm-tokens/scenario.js';
import { driveSweep } from '../support/sweep-driver.js';
import {
  CREATE2_DEPLOYER,
  DELEGATION_PREFIX,
  MAX_BATCH_SOURCES,
  PER_SOURCE_GAS_BOUND,
  SWEEP_DELEGATE_SALT,
  createEip7702Sweep,
  encodeSweepCall,
  sweepDelegateAddress,
  sweepDelegateInitCode,
} from '../../chains/evm/sweep-7702.js';
import type { EvmChainAdapter } from '../../chains/evm/adapter.js';
import type { EvmTxBody } from '../../chains/evm/token-sender.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, addressPath, bip39Seed } from '../../chains/hd/bip44.js';
import {
  OPERATOR_ACCOUNT,
  OPERATOR_SLOT,
  type SweepMethodImpl,
  type SweepRequest,
  type SweepSource,
  type Wallet,
} from '../../chains/types.js';
import artifact from '../../chains/evm/contracts/SweepDelegate.json' with { type: 'json' };
import { artifactPath, compileSweepContracts } from '../../scripts/tools/compile-sweep-contracts.js';

// The evm-7702-batch sweep method on Anvil (--hardfork prague): deposit addresses delegate to SweepDelegate by EIP-7702
// authorization and the gas station empties many of them in one type-4 transaction; deposit addresses never hold ETH.

let node: AnvilNode;
let usdt: DeployedToken; // Tether-style: transfer returns nothing
let usdc: DeployedToken; // FiatToken-style: transfer returns true
let usdt18: DeployedToken; // BSC's 18-decimal tokens
let usdc18: DeployedToken;
let eth: EvmChainAdapter;
let bsc: EvmChainAdapter;
let gasStation: Wallet;
const treasury = '0x000000000000000000000000000000000000beef';
/** The merchant's other destination (its refunds hot wallet): the delegate is bound to both. */
const hot = '0x000000000000000000000000000000000000cafe';
const destinations = [treasury, hot];
let nextIndex = 0;

const tick = () => node.mine();
/** What the adapter's sweepMethods() passes (chains/evm/adapter.ts). */
const ctxOf = (a: EvmChainAdapter) => a.sweepContext();

async function depositSources(count: number, amounts: (i: number) => bigint): Promise<SweepSource[]> {
  const out: SweepSource[] = [];
  for (let i = 0; i < count; i++) {
    const index = nextIndex++;
    const key = { curve: 'secp256k1' as const, path: addressPath(COIN_TYPE_EVM, 100, CHANGE_DEPOSIT, index) };
    out.push({ key, address: await eth.deriveDepositAddress(signer, 100, BigInt(index)), amount: amounts(i) });
  }
  return out;
}

const balanceOf = async (t: DeployedToken, who: string): Promise<bigint> =>
  (await (t.contract.getFunction('balanceOf') as (a: string) => Promise<bigint>)(who)) as bigint;
const nativeOf = async (who: string) => BigInt(await node.rpc<string>('eth_getBalance', [who, 'latest']));
const codeOf = (who: string) => node.rpc<string>('eth_getCode', [who, 'latest']);
const request = (token: SweepRequest['token'], sources: SweepSource[]): SweepRequest => ({
  token,
  sources,
  destination: treasury,
  destinations,
  gasStation,
});

/** A method whose plan is fixed in advance (two plans made before either lands, as a sweep run planning per token). */
function withPlan(m: SweepMethodImpl, plan: Awaited<ReturnType<SweepMethodImpl['plan']>>): SweepMethodImpl {
  return {
    method: m.method,
    available: () => m.available(),
    plan: async () => plan,
    build: (...a) => m.build(...a),
    read: (...a) => m.read(...a),
  };
}

beforeAll(async () => {
  node = await startAnvil({ extraArgs: ['--hardfork', 'prague'] });
  [usdt, usdc, usdt18, usdc18] = (await deployTokens(node, [
    { symbol: 'USDT', shape: 'tether', decimals: 6 },
    { symbol: 'USDC', shape: 'fiat', decimals: 6 },
    { symbol: 'USDT', shape: 'tether', decimals: 18 },
    { symbol: 'USDC', shape: 'fiat', decimals: 18 },
  ])) as [DeployedToken, DeployedToken, DeployedToken, DeployedToken];
  eth = makeAdapter(node, [usdt, usdc]);
  bsc = makeAdapter(node, [usdt18, usdc18], { network: 'bsc' });
  gasStation = await eth.deriveHotWallet(signer, OPERATOR_ACCOUNT, OPERATOR_SLOT.gasStation);
  await node.rpc('anvil_setBalance', [gasStation.address, `0x${(10n ** 20n).toString(16)}`]);
}, 120_000);

afterAll(async () => {
  await node?.stop();
});

describe('SweepDelegate bytecode', () => {
  it('the committed artifact is byte-identical to a fresh compile of the committed source', () => {
    const [fresh] = compileSweepContracts();
    expect(fresh!.contract).toBe('SweepDelegate');
    expect(artifactPath('SweepDelegate')).toMatch(/chains\/evm\/contracts\/SweepDelegate\.json$/);
    expect(fresh!.bytecode).toBe(artifact.bytecode);
    expect(fresh!.sourceSha256).toBe(artifact.sourceSha256);
    expect(fresh!.compiler).toBe(artifact.compiler);
    expect(fresh!.abi).toEqual(artifact.abi);
  }, 60_000);
});

describe('evm-7702-batch on Anvil (prague)', () => {
  it('is available on prague and not on cancun', async () => {
    expect(await createEip7702Sweep(ctxOf(eth)).available()).toEqual({ ok: true });
    const old = await startAnvil({ extraArgs: ['--hardfork', 'cancun'] });
    try {
      const r = await createEip7702Sweep(ctxOf(makeAdapter(old, [usdt]))).available();
      expect(r.ok).toBe(false);
      expect(r.ok === false && r.reason).toMatch(/EIP-7702/);
    } finally {
      await old.stop();
    }
  }, 60_000);

  it('sweeps 50 deposit addresses of USDT and of USDC in one type-4 transaction per token, exact amounts, no ETH on them', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const sources = await depositSources(50, (i) => parseUnits('10', 6) + BigInt(i));
    const usdcAmounts = sources.map((_, i) => parseUnits('3', 6) + BigInt(i) * 7n);
    // Each address holds more than is swept: only the planned amount moves, the rest stays (a deposit after planning).
    for (const [i, s] of sources.entries()) {
      await fund(usdt, s.address, s.amount + 5n);
      await fund(usdc, s.address, usdcAmounts[i]! + 9n);
    }
    const delegate = sweepDelegateAddress(gasStation.address, destinations);
    expect(await codeOf(delegate)).toBe('0x');
    const usdtReq = request('USDT', sources);
    const usdcReq = request(
      'USDC',
      sources.map((s, i) => ({ ...s, amount: usdcAmounts[i]! })),
    );
    // Both planned before either lands: both carry the 50 authorizations at nonce 0.
    const usdtPlan = await m.plan(usdtReq);
    const usdcPlan = await m.plan(usdcReq);
    for (const p of [usdtPlan, usdcPlan]) {
      expect(p.skipped).toEqual([]);
      expect(p.steps.map((s) => [s.group, s.purpose])).toEqual([
        [0, 'deploy'],
        [1, 'batch'],
      ]);
      expect(p.estimatedCost).toBe(p.steps[0]!.estimatedFee + p.steps[1]!.estimatedFee);
    }
    const usdtTreasury = await balanceOf(usdt, treasury);
    const first = await driveSweep(eth, withPlan(m, usdtPlan), signer, usdtReq, { tick });
    const second = await driveSweep(eth, withPlan(m, usdcPlan), signer, usdcReq, { tick });
    // The delegate is deployed once, at the computed address; the second deploy step became unnecessary.
    expect(first.steps.map((s) => [s.step.purpose, s.outcome?.status])).toEqual([
      ['deploy', 'succeeded'],
      ['batch', 'succeeded'],
    ]);
    expect(second.steps.map((s) => [s.step.purpose, s.hash === null ? 'skipped' : s.outcome?.status])).toEqual([
      ['deploy', 'skipped'],
      ['batch', 'succeeded'],
    ]);
    expect(await codeOf(delegate)).not.toBe('0x');
    for (const [token, run, amounts] of [
      [usdt, first, sources.map((s) => s.amount)],
      [usdc, second, usdcAmounts],
    ] as const) {
      const batch = run.steps[1]!;
      const tx = await node.rpc<{ type: string; to: string; from: string; gas: string; authorizationList: unknown[] }>(
        'eth_getTransactionByHash',
        [batch.hash],
      );
      expect(tx.type).toBe('0x4');
      expect(tx.from.toLowerCase()).toBe(gasStation.address);
      expect(tx.to.toLowerCase()).toBe(delegate);
      expect(tx.authorizationList).toHaveLength(50);
      // The gas limit was estimated (sources' delegation simulated by a state override), not the per-source bound.
      expect(BigInt(tx.gas)).toBeLessThan(PER_SOURCE_GAS_BOUND * 50n);
      expect(batch.receipt!.swept).toEqual(sources.map((s, i) => ({ source: s.address, amount: amounts[i] })));
      expect(batch.receipt!.elsewhere).toBe(0n);
      expect(batch.receipt!.fee).toBeGreaterThan(0n);
      const moved = batch.receipt!.swept.reduce((a, s) => a + s.amount, 0n);
      expect(moved).toBe(amounts.reduce((a, x) => a + x, 0n));
      expect(token.address).toBe(token === usdt ? usdt.address : usdc.address);
    }
    expect((await balanceOf(usdt, treasury)) - usdtTreasury).toBe(sources.reduce((a, s) => a + s.amount, 0n));
    for (const s of sources) {
      expect(await balanceOf(usdt, s.address)).toBe(5n);
      expect(await balanceOf(usdc, s.address)).toBe(9n);
      expect(await nativeOf(s.address)).toBe(0n);
      expect(await codeOf(s.address)).toBe(`${DELEGATION_PREFIX}${delegate.slice(2)}`);
    }
  }, 300_000);

  it('sweeps already delegated addresses without authorizations (a type-2 transaction: EIP-7702 forbids an empty list)', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const fresh = await depositSources(2, () => parseUnits('1', 6));
    for (const s of fresh) await fund(usdt, s.address, s.amount);
    await driveSweep(eth, m, signer, request('USDT', fresh), { tick });
    // Money arrives again on the now-delegated addresses.
    for (const s of fresh) await fund(usdt, s.address, 77n);
    const again = await driveSweep(
      eth,
      m,
      signer,
      request(
        'USDT',
        fresh.map((s) => ({ ...s, amount: 77n })),
      ),
      { tick },
    );
    expect(again.plan.steps.map((s) => [s.purpose, s.params.authorizations])).toEqual([['batch', '']]);
    const tx = await node.rpc<{ type: string }>('eth_getTransactionByHash', [again.steps[0]!.hash]);
    expect(tx.type).toBe('0x2');
    expect(again.steps[0]!.receipt!.swept).toEqual(fresh.map((s) => ({ source: s.address, amount: 77n })));
    for (const s of fresh) expect(await balanceOf(usdt, s.address)).toBe(0n);
  }, 120_000);

  it('skips what it cannot sweep: an amount above the balance, a duplicate, nothing to move, a blacklisted sender', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const [a, b, c, d] = await depositSources(4, () => 100n);
    await fund(usdt, a!.address, 100n);
    await fund(usdt, b!.address, 99n);
    await fund(usdt, d!.address, 100n);
    const blacklist = (on: boolean) =>
      (usdt.contract.getFunction(on ? 'addBlackList' : 'removeBlackList') as (x: string) => Promise<{ wait(): Promise<unknown> }>)(
        d!.address,
      ).then((t) => t.wait());
    await blacklist(true);
    try {
      const p = await m.plan(request('USDT', [a!, b!, { ...c!, amount: 0n }, a!, d!]));
      expect(p.skipped.slice(0, 3)).toEqual([
        { address: c!.address, reason: 'nothing to sweep' },
        { address: a!.address, reason: 'listed twice in one sweep' },
        { address: b!.address, reason: 'balance 99 below the planned 100' },
      ]);
      // One blacklisted address would revert a whole batch: it is left out, with the token's answer.
      expect(p.skipped[3]).toMatchObject({
        address: d!.address,
        reason: expect.stringMatching(/^the token refuses the transfer: .*revert/i),
      });
      expect(p.steps.flatMap((s) => s.sources)).toEqual([a!.address]);
    } finally {
      await blacklist(false);
    }
  });

  it('never builds a batch before its delegate exists: a call to an empty address would succeed and move nothing', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const otherStation = await eth.deriveHotWallet(signer, OPERATOR_ACCOUNT, 7);
    await node.rpc('anvil_setBalance', [otherStation.address, `0x${(10n ** 19n).toString(16)}`]);
    const sources = await depositSources(1, () => 10n);
    await fund(usdt, sources[0]!.address, 10n);
    const req = { ...request('USDT', sources), gasStation: otherStation };
    const plan = await m.plan(req);
    expect(plan.steps.map((s) => [s.group, s.purpose])).toEqual([
      [0, 'deploy'],
      [1, 'batch'],
    ]);
    await expect(m.build(req, plan.steps[1]!, await eth.getAccountNonce(otherStation.address), 0)).rejects.toThrow(/not deployed/);
  });

  it('refuses to build a batch whose simulation reverts (a source blacklisted after planning): nothing is sent', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const sources = await depositSources(2, () => 40n);
    for (const s of sources) await fund(usdt, s.address, 40n);
    const req = request('USDT', sources);
    const plan = await m.plan(req);
    const step = plan.steps.find((s) => s.purpose === 'batch')!;
    expect(step.params.authorizations).not.toBe('');
    const listed = (on: boolean) =>
      (usdt.contract.getFunction(on ? 'addBlackList' : 'removeBlackList') as (x: string) => Promise<{ wait(): Promise<unknown> }>)(
        sources[1]!.address,
      ).then((t) => t.wait());
    await listed(true);
    try {
      // The sources' delegation is simulated by a state override, which Anvil applies: a real revert, refused.
      await expect(m.build(req, step, await eth.getAccountNonce(gasStation.address), 0)).rejects.toMatchObject({
        reason: 'simulation_reverted',
      });
    } finally {
      await listed(false);
    }
    expect(await balanceOf(usdt, sources[0]!.address)).toBe(40n);
  });

  it('a fee-bumped rebuild at the same nonce carries the same signed authorizations', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const sources = await depositSources(3, () => 1000n);
    for (const s of sources) await fund(usdt, s.address, 1000n);
    const req = request('USDT', sources);
    const plan = await m.plan(req);
    const step = plan.steps.find((s) => s.purpose === 'batch')!;
    const nonce = await eth.getAccountNonce(gasStation.address);
    const plain = (await m.build(req, step, nonce, 0))!;
    const bumped = (await m.build(req, step, nonce, 25))!;
    const [t1, t2] = [await eth.signTransfer(plain as never, signer), await eth.signTransfer(bumped as never, signer)].map((s) =>
      Transaction.from(s.raw),
    );
    expect(t1!.nonce).toBe(t2!.nonce);
    expect(t2!.maxFeePerGas!).toBeGreaterThan(t1!.maxFeePerGas!);
    expect(t1!.authorizationList).toHaveLength(3);
    expect(t2!.authorizationList!.map((a) => [a.address, a.nonce, a.chainId, a.signature.serialized])).toEqual(
      t1!.authorizationList!.map((a) => [a.address, a.nonce, a.chainId, a.signature.serialized]),
    );
    expect((bumped.body as EvmTxBody).authorizations).toEqual((plain.body as EvmTxBody).authorizations);
  });

  it("a stolen gas-station key moves nothing: every attempt to send a delegated address's tokens elsewhere reverts; an approved sweep still works", async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const [victim] = await depositSources(1, () => 500n);
    await fund(usdt, victim!.address, 500n);
    await driveSweep(eth, m, signer, request('USDT', [{ ...victim!, amount: 1n }]), { tick });
    const delegate = sweepDelegateAddress(gasStation.address, destinations);
    expect(await codeOf(victim!.address)).toBe(`${DELEGATION_PREFIX}${delegate.slice(2)}`);
    // The attacker holds the gas-station key (the only caller the entry accepts) and a wallet of its own.
    const root = HDNodeWallet.fromSeed(bip39Seed(TEST_MNEMONIC));
    const station = new EthersWallet(root.derivePath(gasStation.key.path).privateKey, node.provider);
    expect(station.address.toLowerCase()).toBe(gasStation.address);
    const outsider = walletAt(3, node.provider);
    const thief = outsider.address.toLowerCase();
    const pull = (to: string) =>
      new Contract(delegate, artifact.abi as never).interface.encodeFunctionData('pull', [usdt.address, to, 499n]);
    // The attacker's own delegate (the same code, bound to the thief), deployed with the gas-station key through the
    // same CREATE2 deployer: no deposit key ever authorized it.
    const rogue = sweepDelegateAddress(gasStation.address, [thief]);
    await (
      await station.sendTransaction({
        to: CREATE2_DEPLOYER,
        data: concat([SWEEP_DELEGATE_SALT, sweepDelegateInitCode(gasStation.address, [thief])]),
      })
    ).wait();
    expect(await codeOf(rogue)).not.toBe('0x');
    const sweepTo = (to: string) => encodeSweepCall(usdt.address, to, [victim!.address], [499n]);
    // Each attempt, and the contract's error that refuses it (the invariant of SweepDelegate.sol).
    const attempts: Array<{ who: EthersWallet | HDNodeWallet; to: string; data: string; error: string }> = [
      // The entry, to the thief: the deposit address's code refuses a destination it is not bound to (I8).
      { who: station, to: delegate, data: sweepTo(thief), error: 'NotDestination' },
      // The deposit address's delegated code, directly: pull (I2), and sweep through it (I1).
      { who: station, to: victim!.address, data: pull(thief), error: 'NotEntry' },
      { who: station, to: victim!.address, data: pull(treasury), error: 'NotEntry' },
      { who: station, to: victim!.address, data: sweepTo(thief), error: 'NotGasStation' },
      // The attacker's own entry: the deposit address answers only its own delegate's entry (I2).
      { who: station, to: rogue, data: sweepTo(thief), error: 'NotEntry' },
      { who: station, to: rogue, data: sweepTo(treasury), error: 'NotEntry' },
      // Anyone else: not even to the merchant's own destination (I1, I2).
      { who: outsider, to: delegate, data: sweepTo(treasury), error: 'NotGasStation' },
      { who: outsider, to: victim!.address, data: pull(thief), error: 'NotEntry' },
    ];
    const errors = new Interface(artifact.abi as never);
    for (const a of attempts) {
      const refused = await node.provider.call({ from: a.who.address, to: a.to, data: a.data }).then(
        () => null,
        (e: { data?: string }) => (e.data ? errors.parseError(e.data)?.name : 'no revert data'),
      );
      expect(refused, `${a.who.address} -> ${a.to}`).toBe(a.error);
      // Sent for real (no estimate): mined and reverted, nothing moved.
      const sent = await a.who.sendTransaction({ to: a.to, data: a.data, gasLimit: 200_000n });
      await node.mine();
      expect((await node.provider.getTransactionReceipt(sent.hash))!.status).toBe(0);
    }
    expect(await balanceOf(usdt, victim!.address)).toBe(499n);
    expect(await balanceOf(usdt, thief)).toBe(0n);
    expect(await codeOf(victim!.address)).toBe(`${DELEGATION_PREFIX}${delegate.slice(2)}`);
    // The sweep the service planned (to the merchant's treasury, the delegate its deposit key authorized) still works.
    const before = await balanceOf(usdt, treasury);
    const approved = await driveSweep(eth, m, signer, request('USDT', [{ ...victim!, amount: 499n }]), { tick });
    expect(approved.steps.at(-1)!.receipt!.swept).toEqual([{ source: victim!.address, amount: 499n }]);
    expect((await balanceOf(usdt, treasury)) - before).toBe(499n);
    expect(await balanceOf(usdt, victim!.address)).toBe(0n);
    // Native coin sent to a delegated deposit address is accepted (as a top-up is), and only the deposit key moves it
    // again: the address still sends its own transactions, so nothing is stranded.
    await (await walletAt(4, node.provider).sendTransaction({ to: victim!.address, value: 10n ** 15n })).wait();
    expect(await nativeOf(victim!.address)).toBe(10n ** 15n);
    const own = new EthersWallet(root.derivePath(victim!.key.path).privateKey, node.provider);
    expect(own.address.toLowerCase()).toBe(victim!.address);
    const price = BigInt(await node.rpc<string>('eth_gasPrice'));
    await (
      await own.sendTransaction({
        to: gasStation.address,
        value: 10n ** 15n - 21_000n * price,
        gasLimit: 21_000n,
        type: 0,
        gasPrice: price,
      })
    ).wait();
    expect(await nativeOf(victim!.address)).toBe(0n);
  }, 180_000);

  it('a new destination gets its own delegate: delegated addresses re-delegate to it at their next sweep, and the old one can no longer pull', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    // The delegate's address depends on the set of destinations, not their order, and on each of them.
    expect(sweepDelegateAddress(gasStation.address, [hot, treasury])).toBe(sweepDelegateAddress(gasStation.address, destinations));
    expect(sweepDelegateAddress(gasStation.address, [treasury])).not.toBe(sweepDelegateAddress(gasStation.address, destinations));
    const sources = await depositSources(3, () => 60n);
    for (const s of sources) await fund(usdt, s.address, 120n);
    await driveSweep(eth, m, signer, request('USDT', sources), { tick });
    const old = sweepDelegateAddress(gasStation.address, destinations);
    // The merchant's treasury changes: the next sweep deploys the delegate of the new destinations and re-delegates.
    const newTreasury = '0x000000000000000000000000000000000000d00d';
    const moved: SweepRequest = { ...request('USDT', sources), destination: newTreasury, destinations: [hot, newTreasury] };
    const next = sweepDelegateAddress(gasStation.address, [hot, newTreasury]);
    const plan = await m.plan(moved);
    expect(plan.steps.map((s) => [s.purpose, s.to])).toEqual([
      ['deploy', CREATE2_DEPLOYER],
      ['batch', next],
    ]);
    // Each address re-delegates at its current nonce (1: its first authorization used nonce 0).
    expect(plan.steps[1]!.params.authorizations).toBe(sources.map((s) => `${s.address}:1`).join(','));
    const run = await driveSweep(eth, m, signer, moved, { tick });
    expect(run.steps.at(-1)!.receipt!.swept).toEqual(sources.map((s) => ({ source: s.address, amount: 60n })));
    expect(await balanceOf(usdt, newTreasury)).toBe(180n);
    for (const s of sources) expect(await codeOf(s.address)).toBe(`${DELEGATION_PREFIX}${next.slice(2)}`);
    // The old delegate's entry, even called by the gas station to its own bound destination, reverts (I5).
    await expect(
      node.rpc('eth_call', [
        { from: gasStation.address, to: old, data: encodeSweepCall(usdt.address, treasury, [sources[0]!.address], [1n]) },
        'latest',
      ]),
    ).rejects.toThrow(/revert/i);
    // A destination that is not among the request's destinations is refused at planning.
    await expect(m.plan({ ...moved, destination: treasury })).rejects.toMatchObject({ reason: 'invalid' });
  }, 180_000);

  it('sweeps 18-decimal BSC tokens (Tether-style and FiatToken-style)', async () => {
    const m = createEip7702Sweep(ctxOf(bsc));
    const amount = parseUnits('123.456789012345678901', 18);
    const sources = await depositSources(3, (i) => amount + BigInt(i));
    for (const s of sources) {
      await fund(usdt18, s.address, s.amount);
      await fund(usdc18, s.address, s.amount * 2n);
    }
    const a = await driveSweep(bsc, m, signer, request('USDT', sources), { tick });
    const b = await driveSweep(
      bsc,
      m,
      signer,
      request(
        'USDC',
        sources.map((s) => ({ ...s, amount: s.amount * 2n })),
      ),
      { tick },
    );
    expect(a.steps.at(-1)!.receipt!.swept).toEqual(sources.map((s) => ({ source: s.address, amount: s.amount })));
    expect(b.steps.at(-1)!.receipt!.swept).toEqual(sources.map((s) => ({ source: s.address, amount: s.amount * 2n })));
    for (const s of sources) {
      expect(await balanceOf(usdt18, s.address)).toBe(0n);
      expect(await balanceOf(usdc18, s.address)).toBe(0n);
      expect(await nativeOf(s.address)).toBe(0n);
    }
  }, 120_000);

  it('caps a batch by gas: more sources than fit in one transaction make several batch steps', async () => {
    const m = createEip7702Sweep(ctxOf(eth));
    const sources = await depositSources(MAX_BATCH_SOURCES + 1, () => 1n);
    // Planning reads each balance: fund them all.
    for (const s of sources) await fund(usdc, s.address, 1n);
    const p = await m.plan(request('USDC', sources));
    expect(p.steps.filter((s) => s.purpose === 'batch').map((s) => s.sources.length)).toEqual([MAX_BATCH_SOURCES, 1]);
    expect(CREATE2_DEPLOYER).toMatch(/^0x4e59b448/);
  }, 300_000);
});
