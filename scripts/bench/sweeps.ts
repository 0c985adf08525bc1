// Sweep benchmark (issue 15): N funded deposit addresses on Anvil (--hardfork prague), Tether-style USDT.
//   - evm-7702-batch: gas per address of the batches (first sweep: with the EIP-7702 authorization; repeat sweep of
//     the same, already delegated addresses: without; a sweep after the merchant's treasury changed: re-delegation to
//     the new destinations' delegate), the one-time delegate deployment, addresses swept per second;
//   - the top-up path in the same run, on N other funded addresses: the adapter's `evm-gas-topup` method (exact gas
//     to the deposit address, its own token transfer, the leftover back when worth it).
// Prints figures; never fails on a timing. `npm run bench:sweeps -- [--addresses 1000]`
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { type Contract, HDNodeWallet, type Wallet, parseUnits } from 'ethers';
import { startAnvil } from '../../test/support/anvil.js';
import { deployBatcher } from '../../test/support/evm-tokens/deploy.js';
import { TEST_MNEMONIC, deployTokens, makeAdapter, signer, walletAt, type DeployedToken } from '../../test/support/evm-tokens/scenario.js';
import { driveSweep } from '../../test/support/sweep-driver.js';
import { createEip7702Sweep } from '../../chains/evm/sweep-7702.js';
import { COIN_TYPE_EVM, CHANGE_DEPOSIT, addressPath, bip39Seed } from '../../chains/hd/bip44.js';
import { OPERATOR_ACCOUNT, OPERATOR_SLOT, type SweepMethodImpl, type SweepRequest, type SweepSource } from '../../chains/types.js';
import type { RpcReceipt } from '../../chains/evm/rpc-types.js';

const { values } = parseArgs({
  options: { addresses: { type: 'string', default: '1000' } },
});
const N = Number(values.addresses);
const AMOUNT = parseUnits('25', 6);
const ACCOUNT = 200; // deposit addresses' BIP44 account (the test mnemonic's low accounts are Anvil's)
const treasury = '0x000000000000000000000000000000000000beef';
const hot = '0x000000000000000000000000000000000000cafe'; // the merchant's refunds hot wallet: the delegate binds both
const newTreasury = '0x000000000000000000000000000000000000d00d';

const node = await startAnvil({ extraArgs: ['--hardfork', 'prague'] });
try {
  const [usdt] = (await deployTokens(node, [{ symbol: 'USDT', shape: 'tether', decimals: 6 }])) as [DeployedToken];
  const adapter = makeAdapter(node, [usdt], { confirmation: { kind: 'depth', confirmations: 1 } });
  const gasStation = await adapter.deriveHotWallet(signer, OPERATOR_ACCOUNT, OPERATOR_SLOT.gasStation);
  await node.rpc('anvil_setBalance', [gasStation.address, `0x${(10n ** 22n).toString(16)}`]);
  const root = HDNodeWallet.fromSeed(bip39Seed(TEST_MNEMONIC));
  const deployer = walletAt(0, node.provider);
  const batcher = await deployBatcher(deployer);
  // The treasury already holds some USDT (as after its first sweep), so no sweep pays for creating its balance slot.
  await mintAndSpread(usdt, deployer, batcher, [treasury, newTreasury], 1n);

  let next = 0;
  const newSources = async (count: number): Promise<SweepSource[]> => {
    const out: SweepSource[] = [];
    for (let i = 0; i < count; i++, next++) {
      const key = { curve: 'secp256k1' as const, path: addressPath(COIN_TYPE_EVM, ACCOUNT, CHANGE_DEPOSIT, next) };
      out.push({ key, address: root.derivePath(key.path).address.toLowerCase(), amount: AMOUNT });
    }
    return out;
  };
  const request = (sources: SweepSource[], to = treasury): SweepRequest => ({
    token: 'USDT',
    sources,
    destination: to,
    destinations: [to, hot],
    gasStation,
  });
  const gasOf = async (hash: string) => BigInt((await node.rpc<RpcReceipt>('eth_getTransactionReceipt', [hash])).gasUsed);

  // evm-7702-batch: first sweep (authorizations), then a repeat sweep of the same addresses (already delegated).
  const m7702 = createEip7702Sweep(adapter.sweepContext());
  const sources = await newSources(N);
  await mintAndSpread(
    usdt,
    deployer,
    batcher,
    sources.map((s) => s.address),
    AMOUNT,
  );
  const t0 = Date.now();
  const firstPlan = await m7702.plan(request(sources));
  const planMs = Date.now() - t0;
  const first = await timed(() => driveSweep(adapter, fixedPlan(m7702, firstPlan), signer, request(sources)));
  first.ms += planMs;
  const deployGas = await sumGas(
    first.value.steps.filter((s) => s.step.purpose === 'deploy'),
    gasOf,
  );
  const batches = first.value.steps.filter((s) => s.step.purpose === 'batch');
  const firstGas = await sumGas(batches, gasOf);
  await mintAndSpread(
    usdt,
    deployer,
    batcher,
    sources.map((s) => s.address),
    AMOUNT,
  );
  const repeat = await timed(() => driveSweep(adapter, m7702, signer, request(sources)));
  const repeatGas = await sumGas(repeat.value.steps, gasOf);
  const swept = batches.reduce((n, s) => n + (s.receipt?.swept.length ?? 0), 0);
  if (swept !== N || (await balanceOf(usdt, sources[0]!.address)) !== 0n) throw new Error(`7702 sweep moved ${swept} of ${N} addresses`);

  // The merchant's treasury changes: the same addresses re-delegate to the new destinations' delegate (deployed first).
  await mintAndSpread(
    usdt,
    deployer,
    batcher,
    sources.map((s) => s.address),
    AMOUNT,
  );
  const moved = await timed(() => driveSweep(adapter, m7702, signer, request(sources, newTreasury)));
  const movedGas = await sumGas(
    moved.value.steps.filter((s) => s.step.purpose === 'batch'),
    gasOf,
  );

  console.log(`evm-7702-batch, ${N} addresses (Tether-style USDT), ${batches.length} type-4 transactions`);
  console.log(`  delegate deployment (once per gas station and merchant destinations): ${deployGas} gas`);
  console.log(
    `  first sweep:  ${perAddress(firstGas, N)} gas per address, ${rate(N, first.ms)} addresses/s (plan + send + final; plan ${planMs} ms)`,
  );
  console.log(`  repeat sweep: ${perAddress(repeatGas, N)} gas per address (already delegated), ${rate(N, repeat.ms)} addresses/s`);
  console.log(`  after a destination change: ${perAddress(movedGas, N)} gas per address (re-delegation), ${rate(N, moved.ms)} addresses/s`);

  // The top-up path, measured in the same run.
  const topup = adapter.sweepMethods().find((x) => x.method === 'evm-gas-topup');
  if (!topup) throw new Error('the adapter offers no evm-gas-topup method');
  const tSources = await newSources(N);
  await mintAndSpread(
    usdt,
    deployer,
    batcher,
    tSources.map((s) => s.address),
    AMOUNT,
  );
  const run = await timed(() => driveSweep(adapter, topup, signer, request(tSources)));
  const topupGas = await sumGas(run.value.steps, gasOf);
  const reclaims = run.value.steps.filter((s) => s.step.purpose === 'reclaim' && s.hash !== null).length;
  const topupPerAddress = topupGas / BigInt(N);
  console.log(
    `evm-gas-topup (the adapter's method), ${N} addresses: ${perAddress(topupGas, N)} gas per address ` +
      `(${reclaims} reclaims sent), ${rate(N, run.ms)} addresses/s`,
  );
  const saving = Number(((topupPerAddress - firstGas / BigInt(N)) * 1000n) / topupPerAddress) / 10;
  console.log(`7702 first sweep uses ${saving}% less gas per address than the top-up path (target: at least 40%)`);
  console.log(`7702 first sweep: ${rate(N, first.ms)} addresses/s (target: at least 100); load average ${loadavg()[0]!.toFixed(1)}`);
} finally {
  await node.stop();
}

/** The method with a plan made beforehand (to time planning apart). */
function fixedPlan(m: SweepMethodImpl, plan: Awaited<ReturnType<SweepMethodImpl['plan']>>): SweepMethodImpl {
  return {
    method: m.method,
    available: () => m.available(),
    plan: async () => plan,
    build: (...a) => m.build(...a),
    read: (...a) => m.read(...a),
  };
}

async function mintAndSpread(token: DeployedToken, deployer: Wallet, batcher: Contract, to: string[], each: bigint) {
  const mint = token.contract.connect(deployer).getFunction('issue') as (a: string, b: bigint) => Promise<{ wait(): Promise<unknown> }>;
  await (await mint(deployer.address, each * BigInt(to.length))).wait();
  const approve = token.contract.connect(deployer).getFunction('approve') as (
    a: string,
    b: bigint,
  ) => Promise<{ wait(): Promise<unknown> }>;
  await (await approve(await batcher.getAddress(), each * BigInt(to.length))).wait();
  const pay = batcher.connect(deployer).getFunction('pay') as (
    t: string,
    a: string[],
    b: bigint[],
  ) => Promise<{ wait(): Promise<unknown> }>;
  for (let i = 0; i < to.length; i += 200) {
    const chunk = to.slice(i, i + 200);
    await (
      await pay(
        token.address,
        chunk,
        chunk.map(() => each),
      )
    ).wait();
  }
}

async function balanceOf(token: DeployedToken, who: string): Promise<bigint> {
  return (await (token.contract.getFunction('balanceOf') as (a: string) => Promise<bigint>)(who)) as bigint;
}

async function sumGas(steps: ReadonlyArray<{ hash: string | null }>, gasOf: (h: string) => Promise<bigint>): Promise<bigint> {
  let sum = 0n;
  for (const s of steps) if (s.hash) sum += await gasOf(s.hash);
  return sum;
}

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const t = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - t };
}

function perAddress(gas: bigint, n: number): string {
  return (gas / BigInt(n)).toLocaleString('en-US');
}

function rate(n: number, ms: number): string {
  return ((n * 1000) / Math.max(ms, 1)).toFixed(0);
}
