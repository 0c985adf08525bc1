import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { Redis } from 'ioredis';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import { createDb, type Db } from '../../src/db/database.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import { createMerchant } from '../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { keyMaterialFromEnv } from '../../src/signer/from-env.js';
import { evmSweepNetwork } from './scenario-sweeps.js';
import { serviceCli } from './second-driver.js';
import { TSX_SERVICE_ARGS } from './service-build.js';
import { createChainAdapter } from '../../src/watcher/adapter-factory.js';
import { loadChainSettings } from '../../src/watcher/config.js';
import { type ReorgDrop, reorgEvm } from './faults/chain-evm.js';
import { merchantApi, type MerchantApi, selectNetwork } from './api.js';
import type { Invariant, ScheduledFault, SimEvent, Violation } from './contract.js';
import { type SimEnvironment, seedFile } from './environment.js';
import { SIM_CONFIRMATIONS } from './env/evm.js';
import { createPrng } from './prng.js';
import { startSimReceiver } from './receiver.js';
import { checkAll } from './runner-invariants.js';
import { acknowledgeNativeFunding } from './invariants/journal.js';
import { HOT_WALLET_GAS } from './env/evm.js';
import { listFailedDeliveries, reopenDelivery } from '../../src/webhooks/deliveries.js';
import { createDeliveryQueue, deliveryJob } from '../../src/webhooks/queue.js';
import { buildScenario, type SessionPlan } from './scenario.js';
import { planExtras, startExtras } from './scenario-extras.js';
import { buildSchedule } from './schedule.js';
import { serialRestart } from './restart-queue.js';
import {
  fundOtherHotWallets,
  otherSweepNetworks,
  healChains,
  injectOtherReorg,
  injectSolanaFault,
  otherChainsEnv,
  payerOf,
  proxiesOf,
  ratesFor,
} from './seed-networks.js';
import type { SimNetwork } from './env/chain.js';
import { type RoleName, type RoleSpec, startSupervisor } from './supervisor.js';
import { injectSignerFault } from './faults/signer.js';
import { waitForSigner } from './signer-socket.js';
import { type ContinuousChecks, startContinuousChecks } from './invariants/continuous.js';
import { expireByChainTime } from './late.js';
import { type PhaseClock, phaseClock } from './phases.js';
import { acknowledgeRunnerTopUps, RunnerTopUps } from './top-ups.js';

// One seed: a fresh database and BullMQ prefix, merchants with the simulator's webhook receiver, the service's roles
// as supervised OS processes, the scenario and the fault schedule run together for `activeMs`, then the drain (every
// fault healed, every process up, the receiver answering 200) until the outbox is delivered and every session and
// refund is settled, bounded by `drainMs` (a hang is a violation), then the invariants. docs/simulation.md.
// The topology is the documented one (docs/signer.md): a `signer` process alone holds HD_MNEMONIC and listens on a Unix
// socket in a temp directory of the seed; it is started first, and every other role (and every CLI the runner starts)
// gets SIGNER_SOCKET and no seed; the active phase starts once the signer and the API answer. `inProcessSigner` runs
// the old way (every role holds the seed, no signer faults).

export const SIM_MNEMONIC = 'test test test test test test test test test test test junk';
const MASTER_KEY = 'a'.repeat(64);
const WEBHOOK_TIMEOUT_MS = 1500;

export interface SeedOptions {
  activeMs: number;
  drainMs: number;
  networks: SimNetwork[];
  invariants: Record<string, Invariant>;
  /** Replaces the schedule drawn from the seed (shrinking runs subsets of it). */
  faults?: ScheduledFault[];
  /** Scales how many faults a seed draws (1 = default). */
  intensity: number;
  /** Serial number of this seed in the invocation: keeps HD accounts (and so addresses) apart across seeds. */
  runIndex: number;
  /** The directory the service's roles run from (a mutated copy: scripts/sim/mutants.ts; a compiled build:
   * scripts/sim/service-build.ts); default the project. */
  serviceRoot?: string;
  /** Node's arguments for a role there (default tsx on src/main.ts). */
  serviceArgs?: string[];
  /** How often the continuous invariants run during the seed (invariants/continuous.ts); 0 turns them off. */
  continuousMs?: number;
  /**
   * `--expect-invariant` (a broken build's check): the drain ends as soon as a violation of this invariant was found
   * (the continuous checks), instead of waiting out its bound; the end-of-seed invariants still run.
   */
  stopDrainOn?: string;
  /** `--in-process-signer`: every role holds HD_MNEMONIC and signs itself (no signer process, no signer faults). */
  inProcessSigner?: boolean;
}

export interface SeedResult {
  seed: number;
  ok: boolean;
  violations: Violation[];
  faults: ScheduledFault[];
  events: SimEvent[];
  wallMs: number;
  /** Wall time per phase of the seed (scripts/sim/phases.ts), ms. */
  phases: Record<string, number>;
  eventsFile: string;
  logFile: string;
  stats: {
    sessions: number;
    refunds: number;
    deliveries: number;
    kills: number;
    starts: number;
    answers: Record<string, number>;
    /** Subscriptions, sweeps and canceled sessions (scenario-extras.ts). */
    extras: string;
  };
}

interface TrackedMerchant {
  id: string;
  api: MerchantApi;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function runSeed(env: SimEnvironment, seed: number, o: SeedOptions): Promise<SeedResult> {
  const started = Date.now();
  const prng = createPrng(seed);
  const scenario = buildScenario(prng.fork('scenario'), { activeMs: o.activeMs, networks: o.networks });
  const extrasPlan = planExtras(prng.fork('scenario'), { activeMs: o.activeMs, networks: o.networks, merchants: scenario.merchants });
  const faults =
    o.faults ??
    buildSchedule(prng.fork('faults'), {
      activeMs: o.activeMs,
      networks: o.networks,
      intensity: o.intensity,
      confirmations: SIM_CONFIRMATIONS,
      signer: !o.inProcessSigner,
    });
  const events: SimEvent[] = [];
  const violations: Violation[] = [];
  const t0 = { at: Date.now() };
  const ev = (kind: string, detail: Record<string, unknown> = {}) => {
    events.push({ at: Date.now() - t0.at, kind, detail });
  };
  const tag = o.faults ? `.run${o.runIndex}` : '';
  const logFile = seedFile(env.outDir, seed, `${tag.slice(1) || 'seed'}.service.log`);
  const eventsFile = seedFile(env.outDir, seed, `${tag.slice(1) || 'seed'}.events.json`);
  writeFileSync(logFile, '');
  const state = { stopped: false };
  const phases: PhaseClock = phaseClock((name, ms) => ev('phase', { name, ms }));
  phases.mark('setup');

  // Fresh state: every Redis key gone (the instance is private to this run), a new database from the template.
  const flush = new Redis(env.redis.url, { maxRetriesPerRequest: 1 });
  await flush.flushall();
  flush.disconnect();
  const dbName = `seed_${seed}_${o.runIndex}_${randomBytes(3).toString('hex')}`;
  const dbUrl = await env.pg.createSeedDatabase(dbName);
  const db: Db = createDb(dbUrl, 4);
  await sql`select setval('merchant_hd_accounts_account_index_seq', ${1000 + o.runIndex * 8})`.execute(db);
  const prefix = `sim_${seed}_${o.runIndex}`;

  const receiver = await startSimReceiver(prng.fork('receiver'), WEBHOOK_TIMEOUT_MS);
  const extras = await startExtras(extrasPlan);
  const startBlocks: Record<string, string> = {};
  for (const e of env.evm)
    startBlocks[`CHAIN_${e.contract.network.toUpperCase()}_TEST_START_BLOCK`] = String(await e.chain.node.provider.getBlockNumber());
  const serviceEnv: Record<string, string> = {
    DATABASE_URL: dbUrl,
    DATABASE_POOL_SIZE: '5',
    REDIS_URL: env.redis.url,
    REDIS_KEY_PREFIX: prefix,
    MASTER_KEY,
    HOST: '127.0.0.1',
    PORT: String(env.apiPort),
    LOG_LEVEL: process.env.SIM_LOG_LEVEL ?? 'info',
    METRICS_PORT: 'off',
    MIGRATE_ON_START: 'false',
    EXPIRY_SWEEP_INTERVAL_MS: '500',
    PAYOUT_POLL_MS: '200',
    PAYOUT_SWEEP_INTERVAL_MS: '1000',
    PAYOUT_STUCK_AFTER_MS: '5000',
    PAYOUT_LOCK_MS: '3000',
    WEBHOOK_RETRY_SCHEDULE_MS: '100,200,400,800,1600,3200',
    WEBHOOK_RETRY_JITTER_RATIO: '0',
    WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
    WEBHOOK_RELAY_POLL_MS: '200',
    WEBHOOK_RECONCILE_INTERVAL_MS: '1000',
    WEBHOOK_RECONCILE_GRACE_MS: '2000',
    WEBHOOK_LOCK_DURATION_MS: '3000',
    WATCHER_STANDBY_RETRY_MS: '300',
    API_RATE_LIMIT_PER_KEY_PER_SECOND: '0',
    API_RATE_LIMIT_PER_IP_PER_SECOND: '0',
    API_AUTH_FAILURES_PER_IP_PER_MINUTE: '0',
    RATE_SOURCES: '',
    ...extras.env,
    ...Object.assign({}, ...env.evm.map((e) => e.env)),
    ...startBlocks,
    ...(await otherChainsEnv(env)),
  };
  // Where the signer listens (a path short enough for a Unix socket); every other process asks it there.
  const socketDir = o.inProcessSigner ? undefined : mkdtempSync(join(tmpdir(), 'sp-sim-signer-'));
  const signerSocket = socketDir ? join(socketDir, 'signer.sock') : undefined;
  Object.assign(serviceEnv, signerSocket ? { SIGNER_SOCKET: signerSocket } : { HD_MNEMONIC: SIM_MNEMONIC });
  const base = `http://127.0.0.1:${env.apiPort}`;

  const roles: Array<{ name: RoleName; roles: string }> = [
    { name: 'api', roles: 'api' },
    { name: 'worker', roles: 'worker' },
    { name: 'watcher-a', roles: 'watcher' },
    { name: 'watcher-b', roles: 'watcher' },
  ];
  const roleSpecs: RoleSpec[] = roles.map((r) => ({
    name: r.name,
    env: { ...serviceEnv, ROLES: r.roles, ...(r.roles === 'api' ? {} : { PORT: '0' }) },
  }));
  // The signer first (its seed, its socket), then the other roles at once: they need it only to sign or derive, which
  // waits (or, for the API's select, answers 5xx and is retried) until it listens. The active phase waits for both.
  const signerSpec: RoleSpec[] = signerSocket
    ? [{ name: 'signer', env: { ...serviceEnv, ROLES: 'signer', HD_MNEMONIC: SIM_MNEMONIC, PORT: '0' } }]
    : [];
  const supervisor = startSupervisor([...signerSpec, ...roleSpecs], {
    logFile,
    restartDelayMs: 500,
    onEvent: ev,
    ...(o.serviceRoot ? { cwd: o.serviceRoot } : {}),
    ...(o.serviceArgs ? { args: o.serviceArgs } : {}),
  });
  const rolesStarted = Date.now();
  const signerReady = signerSocket ? waitForSigner(signerSocket, 120_000).then((ms) => ev('signer.ready', { ms })) : Promise.resolve();
  signerReady.catch(() => {});

  const merchants: TrackedMerchant[] = [];
  const topUps = new RunnerTopUps();
  // The gas the runner gave each hot wallet (after registering it): acknowledged once reconcile books it.
  const nativeFunded = new Map<string, bigint>();
  const live: { continuous?: ContinuousChecks } = {};
  const cleanup = async () => {
    state.stopped = true;
    await live.continuous?.stop();
    await supervisor.stopAll();
    await receiver.close();
    await extras.stop().catch(() => {});
    await db.destroy();
    await env.pg.dropDatabase(dbName).catch(() => {});
    if (socketDir) rmSync(socketDir, { recursive: true, force: true });
  };

  try {
    // Merchants (in the database, as the CLI does), their refund hot wallets funded on every network.
    const box = new SecretBox(MASTER_KEY);
    // The runner's own keys (it derives the addresses it funds and checks): the seed the signer holds.
    const material = keyMaterialFromEnv({ HD_MNEMONIC: SIM_MNEMONIC });
    if (material.kind !== 'signer') throw new Error('the simulator derives its addresses from SIM_MNEMONIC');
    const keys = material.signer;
    const adapterOf = (network: SimNetwork) => createChainAdapter(loadChainSettings(serviceEnv, network, 'test')!, serviceEnv);
    // Sweeps on every network: EVM's gas stations given gas by anvil_setBalance, Solana's and TRON's (seed-networks.ts).
    for (const e of env.evm) await extras.setupNetwork(db, evmSweepNetwork(e, adapterOf(e.contract.network)), keys, nativeFunded);
    for (const n of otherSweepNetworks(env, serviceEnv, keys)) await extras.setupNetwork(db, n, keys, nativeFunded);
    for (let i = 0; i < scenario.merchants; i++) {
      const m = await createMerchant(db, box, { name: `Sim ${seed}/${i}`, webhookUrl: receiver.url });
      receiver.addSecret(m.webhookSecret);
      const { account_index } = await db
        .selectFrom('merchant_hd_accounts')
        .select('account_index')
        .where('merchant_id', '=', m.merchantId)
        .where('mode', '=', 'test')
        .executeTakeFirstOrThrow();
      for (const e of env.evm) {
        const adapter = createChainAdapter(loadChainSettings(serviceEnv, e.contract.network, 'test')!, serviceEnv);
        const hot = await adapter.deriveHotWallet(keys, account_index, HOT_WALLET_SLOT.refunds);
        // As an operator does: the wallet registered (`payouts wallets`), then funded; the watcher journals the
        // top-up as unexplained and the drain acknowledges exactly these transactions (docs/journal.md).
        await registerWallets(db, [
          { network: e.contract.network, mode: 'test', address: hot.address, merchantId: m.merchantId, role: 'refunds' },
        ]);
        topUps.add(e.contract.network, await e.fundHotWallet(hot.address, 1000n));
        nativeFunded.set(hot.address.toLowerCase(), HOT_WALLET_GAS);
        await extras.setupMerchant(db, e, adapter, keys, { merchantId: m.merchantId, accountIndex: account_index }, nativeFunded);
      }
      await fundOtherHotWallets(env, {
        db,
        serviceEnv,
        keys,
        accountIndex: account_index,
        merchantId: m.merchantId,
        topUps,
        nativeFunded,
      });
      merchants.push({ id: m.merchantId, api: merchantApi(base, m.testKey.key, m.testKey.secret, () => state.stopped) });
    }

    ev('seed.setup', { ms: Date.now() - started });
    phases.mark('roles');
    await signerReady;
    await waitFor(
      async () =>
        (await fetch(`${base}/healthz`)
          .then((r) => r.ok)
          .catch(() => false)) || undefined,
      120_000,
      'the API never answered /healthz',
    );
    ev('roles.ready', { ms: Date.now() - rolesStarted });
    t0.at = Date.now();
    phases.mark('active');
    live.continuous =
      o.continuousMs === 0
        ? undefined
        : startContinuousChecks(
            {
              db,
              chains: env.chains,
              deliveries: receiver.deliveries,
              signatureProblems: receiver.problems,
              redis: { url: env.redis.url, prefix },
            },
            {
              intervalMs: o.continuousMs ?? 3000,
              onViolation: (v) => {
                violations.push(v);
                ev('violation.continuous', { ...v });
              },
            },
          );
    ev('seed.start', { seed, merchants: merchants.map((m) => m.id), faults: faults.length, sessions: scenario.sessions.length });

    // The fault schedule and the scenario run side by side from t0.
    // A schedule with signer faults replayed with --in-process-signer has no signer process to hurt: those are skipped.
    const injections = faults.map((f) =>
      sleep(f.at).then(() =>
        f.kind.startsWith('signer.') && !signerSocket
          ? ev('fault.skipped', { kind: f.kind, reason: 'in-process signer' })
          : inject(env, supervisor, db, f, ev),
      ),
    );
    const sessions = scenario.sessions.map((plan, i) =>
      sleep(plan.at).then(() => runSession(env, db, base, merchants[plan.merchant]!, plan, `${seed}-${o.runIndex}-${i}`, ev, violations)),
    );
    const flows = extras.flows({
      db,
      base,
      evm: env.evm,
      ...(env.solana ? { solana: env.solana } : {}),
      ...(env.tron ? { tron: env.tron } : {}),
      merchants,
      mnemonic: SIM_MNEMONIC,
      runIndex: o.runIndex,
      key: `${seed}-${o.runIndex}`,
      ev,
      violations,
      cli: serviceCli({
        ...(o.serviceRoot ? { cwd: o.serviceRoot } : {}),
        serviceArgs: o.serviceArgs ?? TSX_SERVICE_ARGS,
        env: serviceEnv,
        logFile,
      }),
      activeMs: o.activeMs,
    });
    await Promise.all([
      ...injections,
      ...[...sessions, ...flows].map((p) => p.catch((err: Error) => ev('step.error', { message: err.message }))),
    ]);
    await Promise.all(injections);

    // Drain: everything healed, the receiver says 200, open sessions expire now.
    ev('drain.start');
    phases.mark('drain');
    receiver.heal();
    await healChains(env);
    await retry(() => sql`update payment_sessions set expires_at = now() where status = 'open' and expires_at > now()`.execute(db));
    const expectedFound = () => o.stopDrainOn !== undefined && violations.some((v) => v.invariant === o.stopDrainOn);
    const drained = await drain(
      db,
      receiver.deliveries,
      topUps,
      { url: env.redis.url, prefix },
      o.drainMs,
      extras.unsettled,
      expectedFound,
    );
    if (drained && expectedFound()) ev('drain.stopped', { reason: `expected invariant ${o.stopDrainOn} found`, left: drained });
    else if (drained) violations.push({ invariant: 'drain', message: `not settled within ${o.drainMs} ms: ${drained}` });
    ev('drain.end', { left: drained ?? null });
    if (live.continuous) ev('continuous.summary', await live.continuous.stop());
    phases.mark('invariants');
    // Where every session and refund ended, and when: the event log shows how long each took to settle.
    for (const r of await db.selectFrom('payment_sessions').select(['id', 'status', 'created_at', 'paid_at', 'expired_at']).execute())
      ev('session.final', { sessionId: r.id, status: r.status, created: r.created_at, paid: r.paid_at, expired: r.expired_at });
    for (const r of await db.selectFrom('refunds').select(['refund_id', 'status', 'created_at', 'processed_at']).execute())
      ev('refund.final', { refundId: r.refund_id, status: r.status, created: r.created_at, processed: r.processed_at });

    // As an operator does: the gas top-ups it made, booked by reconcile as unexplained native movements, acknowledged
    // (exactly those addresses and amounts; anything else stays and fails the journal invariant).
    for (const l of await acknowledgeNativeFunding(
      { db, chains: env.chains },
      nativeFunded,
      'simulator: hot wallet gas funded by the runner',
    ))
      ev('native.unexplained', { address: l.address, amount: String(l.amount) });
    violations.push(
      ...(await checkAll(o.invariants, {
        db,
        chains: env.chains,
        deliveries: receiver.deliveries,
        events,
        redis: { url: env.redis.url, prefix },
        signer: signerSocket ? 'remote' : 'in-process',
      })),
    );
    for (const p of receiver.problems) violations.push({ invariant: 'webhook-signature', message: p });
    for (const e of events.filter((x) => x.kind === 'process.crash'))
      violations.push({
        invariant: 'no-process-crash',
        message: `${e.detail.role} crashed: ${String(e.detail.excerpt).replace(/\s+/g, ' ').slice(0, 300)}`,
      });
  } catch (err) {
    violations.push({ invariant: 'runner', message: `the seed could not run: ${(err as Error).stack ?? err}` });
  }
  const stats = {
    sessions: scenario.sessions.length,
    refunds: Number(
      (
        await db
          .selectFrom('refunds')
          .select(sql<string>`count(*)`.as('n'))
          .executeTakeFirst()
          .catch(() => undefined)
      )?.n ?? 0,
    ),
    deliveries: receiver.deliveries.length,
    kills: supervisor.counts.kills,
    starts: supervisor.counts.starts,
    answers: receiver.answers,
    extras: await extras.summary(db, events).catch((err: Error) => `extras summary failed: ${err.message}`),
  };
  phases.mark('teardown');
  await cleanup();
  const phaseMs = phases.end();
  // A violation the continuous checks reported during the seed is found again by the end-of-seed invariants: once.
  const unique = [...new Map(violations.map((v) => [`${v.invariant}|${v.message}`, v])).values()];
  violations.splice(0, violations.length, ...unique);
  for (const v of violations) ev('violation', { ...v });
  writeFileSync(eventsFile, JSON.stringify({ seed, faults, scenario, extras: extrasPlan, violations, events }, null, 1));
  return {
    seed,
    ok: violations.length === 0,
    violations,
    faults,
    events,
    wallMs: Date.now() - started,
    phases: phaseMs,
    eventsFile,
    logFile,
    stats,
  };
}

async function waitFor<T>(f: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(what);
    await sleep(200);
  }
}

/** A database statement retried while the private PostgreSQL is down (a restart fault). */
async function retry<T>(f: () => Promise<T>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      return await f();
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(300);
    }
  }
}

async function inject(
  env: SimEnvironment,
  sup: ReturnType<typeof startSupervisor>,
  db: Db,
  f: ScheduledFault,
  ev: (kind: string, detail: Record<string, unknown>) => void,
): Promise<void> {
  ev(`fault.${f.kind}`, f.params);
  const p = f.params;
  if (f.kind === 'kill') sup.kill(p.role as RoleName);
  else if (f.kind === 'failpoint') {
    sup.arm(p.role as RoleName, [String(p.point)]);
    if (p.watchers) for (const w of ['watcher-a', 'watcher-b'] as const) sup.arm(w, [String(p.watchers)]);
  } else if (f.kind === 'reorg') {
    const e = env.evm.find((x) => x.contract.network === p.network);
    if (!e) return injectOtherReorg(env, f, ev);
    const r = await reorgEvm(e.contract.rpcUrl, { depth: Number(p.depth), drop: p.drop as ReorgDrop, extend: Number(p.extend ?? 0) });
    // Dropped payer transactions are broadcast again by the payer, as a wallet does (same nonce, same hash).
    const resent = await e.resync();
    ev('fault.reorg.done', { network: p.network, removed: r.removed.length, reincluded: r.reincluded.length, dropped: r.dropped, resent });
  } else if (f.kind === 'rpc') {
    const proxies = proxiesOf(env, String(p.network));
    if (proxies.length === 0) return;
    const { durationMs, network: _n, ...rates } = p as Record<string, number> & { network: string };
    for (const x of proxies) x.proxy.setFaults(ratesFor(x, rates));
    await sleep(Number(durationMs));
    for (const x of proxies) x.proxy.setFaults({ errorRate: 0, timeoutRate: 0, http429Rate: 0, http5xxRate: 0, maxLogsRange: undefined });
    ev('fault.rpc.healed', { network: p.network });
  } else if (f.kind.startsWith('signer.')) {
    await injectSignerFault(f, { sup, db, ev });
  } else if (f.kind.startsWith('solana.')) {
    await injectSolanaFault(env, f, ev);
  } else if (f.kind === 'redis.restart') {
    await serialRestart(env.redis, async () => {
      await env.redis.crash();
      await sleep(Number(p.downMs));
      await env.redis.start();
    });
    ev('fault.redis.up', {});
  } else if (f.kind === 'postgres.restart') {
    await serialRestart(env.pg, async () => {
      await env.pg.crash();
      await sleep(Number(p.downMs));
      await env.pg.start();
    });
    ev('fault.postgres.up', {});
  }
}

async function runSession(
  env: SimEnvironment,
  db: Db,
  base: string,
  m: TrackedMerchant,
  plan: SessionPlan,
  key: string,
  ev: (kind: string, detail: Record<string, unknown>) => void,
  violations: Violation[],
): Promise<void> {
  const created = await m.api.call(
    'POST',
    '/api/v1/checkout/sessions/create',
    { amount: (plan.amountCents / 100).toFixed(2), currency: 'USD', order_id: `o-${key}` },
    { idempotencyKey: `s-${key}` },
  );
  if (created.status !== 200) {
    violations.push({ invariant: 'api', message: `session create answered ${created.status}: ${JSON.stringify(created.json)}` });
    return;
  }
  const id = String(created.json.id);
  const sel = await selectNetwork(base, id, plan.network, plan.token);
  if (sel.status !== 200) {
    violations.push({ invariant: 'api', message: `select answered ${sel.status}: ${JSON.stringify(sel.json)}`, subject: id });
    return;
  }
  const due = BigInt(sel.json.amount_due_base);
  const address = String(sel.json.deposit_address);
  ev('session.selected', {
    sessionId: id,
    network: plan.network,
    token: plan.token,
    dueBase: due.toString(),
    payment: plan.payment,
    address,
  });
  const chain = payerOf(env, plan.network)!;
  // Late is judged by the chain's clock on Anvil; the other chains' nodes here follow the wall clock.
  const evmChain = env.evm.find((e) => e.contract.network === plan.network);
  const latestEvmBlockTime = async () => (evmChain ? (await evmChain.chain.node.provider.getBlock('latest'))?.timestamp : undefined);
  const pay = async (amount: bigint) => {
    const hash = await chain.pay(plan.token, address, amount, (h) => ev('payment.rebroadcast', { sessionId: id, hash: h }));
    ev('payment.sent', { sessionId: id, amount: amount.toString(), hash });
  };
  switch (plan.payment) {
    case 'exact':
      await pay(due);
      break;
    case 'partial':
      await pay(due / 3n);
      await sleep(1000);
      await pay(due - due / 3n);
      break;
    case 'over':
      await pay(due + due / 5n);
      break;
    case 'under':
      await pay(due / 2n);
      break;
    case 'late': {
      // The session's expiry moved before the chain's latest block (as if its lifetime ran out), then the full amount
      // arrives: in a later block, so late by the chain's clock (late.ts).
      const expiresAt = await retry(async () => expireByChainTime(db, id, (await latestEvmBlockTime()) ?? Math.floor(Date.now() / 1000)));
      ev('session.expired-by-runner', { sessionId: id, expiresAt: expiresAt.toISOString() });
      await sleep(1100);
      await pay(due);
      break;
    }
    case 'none':
      break;
  }
  if (!plan.refund) return;
  const paid = await m.api.call('GET', `/api/v1/checkout/sessions/${id}`).then(async function poll(r): Promise<boolean> {
    if (r.json?.payment_status === 'paid') return true;
    for (let i = 0; i < 150; i++) {
      await sleep(400);
      const again = await m.api.call('GET', `/api/v1/checkout/sessions/${id}`);
      if (again.json?.payment_status === 'paid') return true;
    }
    return false;
  });
  if (!paid) {
    ev('refund.skipped', { sessionId: id, reason: 'not paid within 60 s' });
    return;
  }
  const refund = (suffix: string, cents: number) =>
    m.api.call(
      'POST',
      '/api/v1/refunds/create',
      { session_id: id, refund_id: `r-${key}-${suffix}`, amount: cents, currency: plan.token },
      { idempotencyKey: `r-${key}-${suffix}` },
    );
  const full = plan.amountCents;
  if (plan.refund === 'full' || plan.refund === 'partial') {
    const r = await refund('a', plan.refund === 'full' ? full : Math.max(1, Math.floor(full / 2)));
    ev('refund.created', { sessionId: id, status: r.status, kind: plan.refund });
    if (r.status !== 201)
      violations.push({ invariant: 'api', message: `refund create answered ${r.status}: ${JSON.stringify(r.json)}`, subject: id });
  } else if (plan.refund === 'racing') {
    const part = Math.max(1, Math.ceil((full * 7) / 10));
    const [a, b] = await Promise.all([refund('a', part), refund('b', part)]);
    ev('refund.raced', { sessionId: id, statuses: [a.status, b.status] });
    if ([a.status, b.status].filter((s) => s === 201).length !== 1)
      violations.push({
        invariant: 'refund-race',
        message: `two refunds of ${part} of ${full} answered ${a.status} and ${b.status}`,
        subject: id,
      });
  } else if (plan.refund === 'canceled') {
    const r = await refund('a', full);
    const c = await m.api.call('POST', `/api/v1/refunds/r-${key}-a/cancel`, {}, { idempotencyKey: `cancel-r-${key}-a` });
    ev('refund.cancel', { sessionId: id, created: r.status, canceled: c.status, status: c.json?.status });
  }
}

/** Waits until nothing is left to settle; returns what is still open when `ms` runs out, or undefined. */
async function drain(
  db: Db,
  deliveries: Array<{ eventId: string; answered: number }>,
  topUps: RunnerTopUps,
  redisAt: { url: string; prefix: string },
  ms: number,
  unsettled: (db: Db) => Promise<string[]>,
  stopEarly: () => boolean = () => false,
): Promise<string | undefined> {
  const redis = new Redis(redisAt.url, { maxRetriesPerRequest: 1, lazyConnect: true });
  redis.on('error', () => {});
  const deliveryQueue = createDeliveryQueue(redis, redisAt.prefix);
  try {
    return await drainLoop();
  } finally {
    await deliveryQueue.close().catch(() => {});
    redis.disconnect();
  }
  async function drainLoop(): Promise<string | undefined> {
    const end = Date.now() + ms;
    let left = 'nothing checked yet';
    for (;;) {
      try {
        const open = await db.selectFrom('payment_sessions').select('id').where('status', '=', 'open').execute();
        const refunds = await db.selectFrom('refunds').select('refund_id').where('status', 'in', ['pending', 'processing']).execute();
        const unrelayed = await db.selectFrom('outbox_events').select('id').where('relayed_at', 'is', null).execute();
        const acked = new Set(deliveries.filter((d) => d.answered >= 200 && d.answered < 300).map((d) => d.eventId));
        const events = await db.selectFrom('outbox_events').select('id').execute();
        const undelivered = events.filter((e) => !acked.has(e.id));
        // As an operator does (`webhooks resend-failed`): a delivery the receiver refused for good (a 4xx is not
        // retried, docs/webhooks.md) is sent again now that the receiver answers 200; the webhooks invariant exempts
        // resent events from the per-object order check.
        for (const f of await listFailedDeliveries(db, {})) {
          const reopened = await reopenDelivery(db, f.event_id);
          if (!reopened) continue;
          const j = deliveryJob({ eventId: f.event_id, generation: reopened.generation });
          await deliveryQueue.queue.add(j.name, j.data, j.opts);
        }
        // The runner's own hot-wallet top-ups, once journaled as unexplained, acknowledged as an operator would.
        const unjournaled = await acknowledgeRunnerTopUps(db, topUps, 'simulator: hot wallet funded by the runner');
        left = [
          open.length ? `${open.length} open sessions` : '',
          refunds.length ? `refunds ${refunds.map((r) => r.refund_id).join(',')} unsettled` : '',
          unrelayed.length ? `${unrelayed.length} events not relayed` : '',
          undelivered.length
            ? `${undelivered.length} events not acknowledged (${undelivered
                .slice(0, 3)
                .map((e) => e.id)
                .join(',')})`
            : '',
          // Computed but left out of this list before: the invariants judge the journal only once these are booked.
          unjournaled.length
            ? `${unjournaled.length} runner top-ups not yet journaled (${unjournaled
                .slice(0, 3)
                .map((t) => `${t.network} ${t.txId}`)
                .join(', ')})`
            : '',
          ...(await unsettled(db)),
        ]
          .filter(Boolean)
          .join('; ');
        if (!left) return undefined;
      } catch (err) {
        left = `database unreachable: ${(err as Error).message}`;
      }
      if (Date.now() > end || stopEarly()) return left;
      await sleep(250);
    }
  }
}
