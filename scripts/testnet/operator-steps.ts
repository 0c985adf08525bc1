import { show, type RunAmounts } from './amounts.js';
import type { PayerChain } from './chain.js';
import type { CliResult, Operator } from './operator.js';
import type { Profile, TokenSpec } from './profiles.js';
import { StepFailure, type StepContext } from './report.js';

// The run's last two steps, done as the service's operator does them, with the operator CLI (docs/treasury.md,
// docs/journal.md): sweep the session's deposit address, then reconcile the network's books with the chain.

export interface OperatorStepInput {
  profile: Profile;
  token: TokenSpec;
  chain: PayerChain;
  amounts: RunAmounts;
  operator: Operator;
  merchantId: string;
  /** The session's deposit address, as the hosted page showed it. */
  deposit: string;
  /** What the session was paid (base units): the deposit address holds it until the sweep. */
  paid: bigint;
  timeoutMs: number;
  link: (hash: string) => string | null;
}

/** What the run itself sent to the service's wallets (hot wallet, charger, gas station): the only movements reconcile acknowledges. */
export interface Funding {
  hash: string;
  /** As the chain displays it. */
  address: string;
  /** `native` or the token's symbol. */
  asset: string;
  amount: bigint;
}
export type Funded = Funding[];

interface SweepJson {
  id: string;
  status: string;
  method: string;
  destination_kind: string;
  destination: string;
  failure_reason: string | null;
  steps: Array<{ purpose: string; status: string; tx_hash: string | null; failure_reason: string | null }>;
  sources: Array<{ address: string; planned_base: string; swept_base: string | null; state: string }>;
}

const firstLines = (text: string, n = 3) =>
  text
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('settings:'))
    .slice(0, n)
    .join(' | ');

function json<T>(what: string, r: CliResult, okCodes: Array<number | null> = [0]): T {
  if (!okCodes.includes(r.code)) throw new StepFailure(`${what} exited ${r.code}: ${firstLines(r.stderr || r.stdout)}`);
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new StepFailure(`${what} printed no JSON: ${firstLines(r.stdout || r.stderr)}`);
  }
}

/**
 * sweep: gas for the gas station, the test-mode policy of the token set so this run's small amount is swept (restored
 * after), `sweep plan` then `sweep run` for the run's merchant, and on chain: the deposit address empty of the token,
 * the destination up by exactly what the ledger says was swept.
 */
export async function sweepStep(i: OperatorStepInput, s: StepContext, funded: Funded): Promise<string> {
  const { profile, token, chain, operator } = i;
  const net = profile.serviceNetwork;
  const filter = ['--merchant', i.merchantId, '--network', net, '--mode', 'test', '--token', token.symbol];
  const same = async (a: string, b: string) => (await operator.canonical(a)) === (await operator.canonical(b));

  const station = await operator.gasStation();
  s.data.gas_station = station;
  const gasTx = await chain.sendNative(station, profile.fundGas);
  funded.push({ hash: gasTx, address: station, asset: 'native', amount: profile.fundGas });
  s.tx(`${show(profile.fundGas, profile.native.decimals, profile.native.symbol)} to the gas station ${station}`, gasTx, i.link(gasTx));

  // The default policy (10 tokens minimum, fees up to 1 %) would leave a test amount waiting: the run's own, restored.
  const policyArgs = ['--network', net, '--mode', 'test', '--token', token.symbol];
  const before = json<{ min_amount: string; max_fee_bps: number; source: string }>(
    'sweep policy show',
    await operator.cli(['sweep', 'policy', 'show', ...policyArgs]),
  );
  const setPolicy = async (min: string, bps: number) =>
    json(
      'sweep policy set',
      await operator.cli([
        'sweep',
        'policy',
        'set',
        ...policyArgs,
        '--min',
        min,
        '--max-fee-bps',
        String(bps),
        '--actor',
        'testnet runner',
      ]),
    );
  await setPolicy(i.amounts.session, 10_000);
  s.note(
    `policy ${token.symbol} on ${net} (test): minimum ${i.amounts.session}, fees up to 100 % for this run (was ${before.min_amount}, ${before.max_fee_bps} bps, ${before.source})`,
  );
  try {
    const plan = json<{
      batches: Array<{ destination: string; destination_kind: string; method: string; sources: Array<{ address: string }> }>;
      skipped: Array<{ address: string; reason: string }>;
    }>('sweep plan', await operator.cli(['sweep', 'plan', ...filter, '--json']));
    let batch: (typeof plan.batches)[number] | undefined;
    for (const b of plan.batches) for (const src of b.sources) if (await same(src.address, i.deposit)) batch = b;
    if (!batch) {
      let why = 'not planned';
      for (const k of plan.skipped) if (await same(k.address, i.deposit)) why = k.reason;
      throw new StepFailure(`sweep plan does not sweep ${i.deposit}: ${why}`);
    }
    const destination = operator.display(batch.destination);
    s.data.destination = destination;
    s.data.destination_kind = batch.destination_kind;
    s.data.method = batch.method;
    const destBefore = await chain.tokenBalance(token, destination);

    const run = await operator.cli(['sweep', 'run', ...filter, '--wait-seconds', String(Math.ceil(i.timeoutMs / 1000)), '--json']);
    const out = json<{ created: SweepJson[]; resumed: SweepJson[] }>('sweep run', run, [0, 1]);
    let sweep: SweepJson | undefined;
    for (const sw of [...out.created, ...out.resumed]) for (const src of sw.sources) if (await same(src.address, i.deposit)) sweep = sw;
    if (!sweep) throw new StepFailure(`sweep run swept nothing from ${i.deposit}: ${firstLines(run.stderr)}`);
    s.data.sweep_id = sweep.id;
    for (const st of sweep.steps) if (st.tx_hash) s.tx(`sweep ${st.purpose}`, st.tx_hash, i.link(st.tx_hash));
    if (sweep.status !== 'completed') {
      const bad = sweep.steps.find((st) => st.failure_reason)?.failure_reason ?? sweep.failure_reason ?? firstLines(run.stderr);
      throw new StepFailure(`sweep ${sweep.id} ${sweep.status}: ${bad}`);
    }
    for (const st of sweep.steps)
      if (st.tx_hash && !st.tx_hash.startsWith('devnet-') && !(await chain.succeeded(st.tx_hash)))
        throw new StepFailure(`sweep ${st.purpose} ${st.tx_hash} did not succeed on chain`);

    // The chain: the deposit address empty, the destination up by what the ledger records as swept into it.
    let source: SweepJson['sources'][number] | undefined;
    for (const src of sweep.sources) if (await same(src.address, i.deposit)) source = src;
    if (source?.swept_base !== i.paid.toString())
      throw new StepFailure(`the ledger swept ${source?.swept_base ?? 'nothing'} base units from ${i.deposit}, it was paid ${i.paid}`);
    const left = await chain.tokenBalance(token, i.deposit);
    if (left !== 0n) throw new StepFailure(`the deposit address ${i.deposit} still holds ${left} base units`);
    let sweptHere = 0n;
    for (const sw of out.created)
      if (sw.status === 'completed' && (await same(sw.destination, destination)))
        for (const src of sw.sources) sweptHere += BigInt(src.swept_base ?? '0');
    const gained = (await chain.tokenBalance(token, destination)) - destBefore;
    if (gained !== sweptHere)
      throw new StepFailure(`the destination ${destination} gained ${gained} base units, the ledger swept ${sweptHere} into it`);
    Object.assign(s.data, { swept_base: source.swept_base, destination_gained_base: gained.toString() });
    return `${show(i.paid, token.decimals, token.symbol)} swept from ${i.deposit} to the ${batch.destination_kind === 'treasury' ? 'treasury' : 'refunds hot wallet'} ${destination} (${sweep.method}); the deposit address holds 0`;
  } finally {
    // Restored even when the sweep failed (a default policy is written back as its values).
    await setPolicy(before.min_amount, before.max_fee_bps).then(
      () => s.note(`policy restored: minimum ${before.min_amount}, ${before.max_fee_bps} bps`),
      (err: Error) =>
        s.note(
          `policy NOT restored (${err.message}): sweep policy set ${policyArgs.join(' ')} --min ${before.min_amount} --max-fee-bps ${before.max_fee_bps}`,
        ),
    );
  }
}

interface ReconcileJson {
  chains: Array<{
    network: string;
    mode: string;
    skipped?: string;
    height: string | null;
    addresses: number;
    balances: number;
    differences: Array<{ address: string; asset: string; difference: string }>;
  }>;
}

interface UnexplainedJson {
  entryId: string;
  txHash: string;
  legs: Array<{ account: string; asset: string; amount: string }>;
}

/**
 * reconcile: `reconcile --network <net> --mode test --json` must exit 0 with no difference on an address the run
 * touched. On exit 3, the unexplained movements that are this run's own funding of the service's wallets are
 * acknowledged (`journal acknowledge`), and reconcile runs again; nothing else is acknowledged: a token transfer by its
 * transaction hash, address and exact amount; a native top-up (which reconcile books as `native-balance:<height>`,
 * plain value transfers leaving no log) by address, no larger than what the run sent there. Exit 4 (a balance left
 * uncompared: TRON's solidified block moved during every read) is run again, as the operator would, at most twice;
 * then it fails the step.
 */
export async function reconcileStep(i: OperatorStepInput, s: StepContext, funded: Funded, touched: string[]): Promise<string> {
  const { profile, operator } = i;
  const net = profile.serviceNetwork;
  const canon = async (a: string) => (await operator.canonical(a)) ?? a;
  const fundings = await Promise.all(funded.map(async (f) => ({ ...f, canonical: await canon(f.address) })));
  const canonTouched = new Set<string>();
  for (const a of [...touched, ...funded.map((f) => f.address)]) canonTouched.add(await canon(a));
  const acknowledged: string[] = [];
  let reruns = 0;
  for (;;) {
    const r = await operator.cli(['reconcile', '--network', net, '--mode', 'test', '--json']);
    const report = json<ReconcileJson>('reconcile', r, [0, 3, 4]);
    const chain = report.chains.find((c) => c.network === net && c.mode === 'test');
    if (!chain) throw new StepFailure(`reconcile reported no ${net}/test chain`);
    const named = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('difference:') || l.startsWith('not compared:'))
      .join('; ');
    if (r.code === 0) {
      for (const d of chain.differences)
        if (canonTouched.has(await canon(d.address)))
          throw new StepFailure(`reconcile exited 0 but ${d.address} ${d.asset} differs by ${d.difference}`);
      Object.assign(s.data, {
        height: chain.height,
        addresses: chain.addresses,
        balances: chain.balances,
        acknowledged: acknowledged.join(',') || null,
      });
      return `${net}/test reconciled at height ${chain.height}: ${chain.addresses} addresses, ${chain.balances} balances, no difference${acknowledged.length ? `; ${acknowledged.length} funding(s) by this run acknowledged` : ''}`;
    }
    if (r.code === 4 && reruns < 2) {
      reruns++;
      s.note(`reconcile exited 4 (${named}): run again`);
      continue;
    }
    if (r.code === 4) throw new StepFailure(`reconcile exited 4, not everything compared: ${named}`);
    // Exit 3: acknowledge this run's own funding of the service's wallets, and only that.
    const list = json<UnexplainedJson[]>(
      'journal unexplained',
      await operator.cli(['journal', 'unexplained', '--network', net, '--mode', 'test']),
    );
    let acked = 0;
    for (const e of list) {
      if (acknowledged.includes(e.entryId)) continue;
      const legs = e.legs.filter((l) => l.account.startsWith('address:'));
      if (legs.length !== 1) continue;
      const leg = legs[0]!;
      const amount = BigInt(leg.amount);
      const address = await canon(leg.account.slice(leg.account.lastIndexOf(':') + 1));
      const asset = leg.asset.slice(leg.asset.lastIndexOf(':') + 1);
      const mine = e.txHash.startsWith('native-balance:')
        ? asset === 'native' &&
          amount > 0n &&
          amount <= fundings.filter((f) => f.asset === 'native' && f.canonical === address).reduce((a, f) => a + f.amount, 0n)
        : fundings.some((f) => f.hash === e.txHash && f.canonical === address && f.asset === asset && f.amount === amount);
      if (!mine) continue;
      const note = `testnet runner: its own funding of ${operator.display(address)} (${amount} base units of ${asset}${e.txHash.startsWith('native-balance:') ? '' : `, tx ${e.txHash}`})`;
      json('journal acknowledge', await operator.cli(['journal', 'acknowledge', e.entryId, '--note', note]));
      acknowledged.push(e.entryId);
      s.note(
        `acknowledged unexplained entry ${e.entryId} (${e.txHash}): ${amount} ${asset} into ${operator.display(address)}, the run's own funding`,
      );
      acked++;
    }
    if (acked === 0) throw new StepFailure(`reconcile exited 3: ${named || firstLines(r.stderr)}`);
  }
}
