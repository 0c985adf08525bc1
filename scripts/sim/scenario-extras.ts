import { sql } from 'kysely';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver } from '../../chains/types.js';
import type { Db } from '../../src/db/database.js';
import { registerWallets } from '../../src/ledger/journal/entries.js';
import type { MerchantApi } from './api.js';
import type { Violation } from './contract.js';
import { HOT_WALLET_GAS, type SimEvm } from './env/evm.js';
import type { Prng } from './prng.js';
import { runSecondDriver, type ServiceCli } from './second-driver.js';
import { buildCancelPlans, type CancelPlan, runCanceledSession } from './scenario-cancel.js';
import type { SimSolana } from './env/solana.js';
import type { SimTron } from './env/tron.js';
import {
  buildSubscriptionPlans,
  customerWallet,
  evmCustomer,
  evmSubscriptionChain,
  runSubscription,
  type SubscriptionCustomer,
  tronSubscriptionChain,
  type SubscriptionPlan,
} from './scenario-subscriptions.js';
import { solanaCustomer, solanaCustomerKeypair, solanaSubscriptionChain } from './scenario-subscriptions-solana.js';
import { buildSweepPlan, pauseSweeps, setupSweepNetwork, startSweeps, type SweepNetwork, type SweepPlan } from './scenario-sweeps.js';

// The scenario's parts beyond sessions and refunds (issue #20; docs/simulation.md "Scenario"): subscriptions with
// failing and recovering allowances, sweeps by the worker's schedule, canceled sessions paid anyway. Drawn from forks
// of the seed's scenario stream, so the sessions and refunds a seed draws (and the fault schedule) are unchanged.
// seed.ts calls: planExtras → startExtras (service env) → setupNetwork / setupMerchant → flows at t0 → unsettled in
// the drain → summary → stop.

export interface ExtrasPlan {
  subscriptions: SubscriptionPlan[];
  cancels: CancelPlan[];
  sweeps: SweepPlan;
}

export function planExtras(scenarioPrng: Prng, o: { activeMs: number; networks: string[]; merchants: number }): ExtrasPlan {
  return {
    subscriptions: buildSubscriptionPlans(scenarioPrng.fork('subscriptions'), o),
    cancels: buildCancelPlans(scenarioPrng.fork('cancel'), o),
    sweeps: buildSweepPlan(scenarioPrng.fork('sweeps'), o),
  };
}

export interface FlowContext {
  db: Db;
  base: string;
  evm: SimEvm[];
  solana?: SimSolana;
  tron?: SimTron;
  merchants: Array<{ api: MerchantApi }>;
  mnemonic: string;
  runIndex: number;
  key: string;
  ev: (kind: string, detail: Record<string, unknown>) => void;
  violations: Violation[];
  /** The service's CLI, started where the roles start (the second driver of the sweeps). */
  cli: ServiceCli;
  /** The active phase's length (ms from t0, when `flows` is called). */
  activeMs: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startExtras(plan: ExtrasPlan) {
  const sweeps = await startSweeps(plan.sweeps);
  /** When the drain paused sweeping; a plan the worker began before the pause may still create sweeps until settled. */
  const paused = { at: 0 };
  const pauseSettlesMs = plan.sweeps.intervalSeconds * 1000 + 10_000;
  return {
    /** Added to every role's environment. */
    env: { ...sweeps.env, SUBSCRIPTION_TICK_MS: '500' },
    /** Per seed and network (before the scenario): sweep policy and gas station (TRON: and the stake as drawn). */
    setupNetwork: (db: Db, n: SweepNetwork, keys: KeyDeriver, nativeFunded: Map<string, bigint>) =>
      setupSweepNetwork(db, plan.sweeps, n, keys, nativeFunded),
    /** Per merchant and network: the charger registered in the journal, then given gas (acknowledged like the hot wallets'). */
    async setupMerchant(
      db: Db,
      e: SimEvm,
      adapter: ChainAdapter,
      keys: KeyDeriver,
      m: { merchantId: string; accountIndex: number },
      nativeFunded: Map<string, bigint>,
    ): Promise<void> {
      const charger = (await adapter.deriveHotWallet(keys, m.accountIndex, HOT_WALLET_SLOT.charges)).address;
      await registerWallets(db, [
        { network: e.contract.network, mode: 'test', address: charger, merchantId: m.merchantId, role: 'charges' },
      ]);
      await e.chain.node.provider.send('anvil_setBalance', [charger, `0x${HOT_WALLET_GAS.toString(16)}`]);
      nativeFunded.set(charger.toLowerCase(), HOT_WALLET_GAS);
    },
    /** The flows, each started at its planned moment from t0. */
    flows(c: FlowContext): Array<Promise<void>> {
      const chainOf = (network: string) => c.evm.find((e) => e.contract.network === network)!;
      // The customer of subscription i: an ed25519 keypair on Solana, an EVM key elsewhere (TRON: under the 0x41 prefix).
      const customerOf = (network: string, i: number): SubscriptionCustomer => {
        if (network === 'solana' && c.solana)
          return solanaCustomer(solanaSubscriptionChain(c.solana), solanaCustomerKeypair(c.mnemonic, c.runIndex, i));
        const chain = network === 'tron' && c.tron ? tronSubscriptionChain(c.tron) : evmSubscriptionChain(chainOf(network));
        return evmCustomer(chain, customerWallet(c.mnemonic, c.runIndex, i, chain));
      };
      const subs = plan.subscriptions.map((p, i) => {
        const customer = customerOf(p.network, i);
        return sleep(p.at).then(() =>
          runSubscription(
            {
              db: c.db,
              base: c.base,
              api: c.merchants[p.merchant]!.api,
              customer,
              key: `${c.key}-sub${i}`,
              ev: c.ev,
              violations: c.violations,
            },
            p,
          ),
        );
      });
      const cancels = plan.cancels.map((p, i) =>
        sleep(p.at).then(() =>
          runCanceledSession(
            {
              base: c.base,
              api: c.merchants[p.merchant]!.api,
              chain: chainOf(p.network),
              key: `${c.key}-c${i}`,
              ev: c.ev,
              violations: c.violations,
            },
            p,
          ),
        ),
      );
      const second = plan.sweeps.secondDriver;
      const t0 = Date.now();
      const drivers =
        second === null
          ? []
          : [
              sleep(second.at).then(() =>
                runSecondDriver({ cli: c.cli, db: c.db, runs: second.runs, t0, latestAt: c.activeMs }, c.ev, c.violations),
              ),
            ];
      return [...subs, ...cancels, ...drivers];
    },
    /** What the drain still waits for: charges and sweeps in flight; sweeping paused (first call) and settled. */
    async unsettled(db: Db): Promise<string[]> {
      if (paused.at === 0) {
        await pauseSweeps(db);
        paused.at = Date.now();
      }
      const charges = await db
        .selectFrom('subscription_charges')
        .select('id')
        .where('state', 'in', ['pending', 'signed', 'broadcast'])
        .execute();
      const running = await db.selectFrom('sweeps').select('id').where('status', '=', 'running').execute();
      return [
        charges.length ? `${charges.length} charges in flight` : '',
        running.length ? `sweeps ${running.map((s) => s.id).join(',')} running` : '',
        Date.now() < paused.at + pauseSettlesMs ? 'sweeping paused just now' : '',
      ].filter(Boolean);
    },
    /** For the seed line: what the extra parts did. */
    async summary(db: Db, events: Array<{ kind: string }>): Promise<string> {
      const n = async (q: Promise<Array<{ n: string }>>) => Number((await q)[0]?.n ?? 0);
      const count = sql<string>`count(*)`.as('n');
      const charged = await n(db.selectFrom('subscription_charges').select(count).where('state', '=', 'succeeded').execute());
      const failed = await n(db.selectFrom('subscription_charges').select(count).where('state', '=', 'failed').execute());
      const swept = await n(db.selectFrom('sweeps').select(count).where('status', '=', 'completed').execute());
      const sweeps = await n(db.selectFrom('sweeps').select(count).execute());
      const canceled = await n(db.selectFrom('payment_sessions').select(count).where('status', '=', 'canceled').execute());
      const recovered = events.filter((e) => e.kind === 'subscription.recovered').length;
      const paidAnyway = events.filter((e) => e.kind === 'deposit.unmatched').length;
      const cli = events.filter((e) => e.kind === 'sweep.cli.end') as Array<{ detail?: { code?: number | null } }>;
      const driver =
        plan.sweeps.secondDriver === null ? '' : ` (cli sweep run: exits ${cli.map((e) => e.detail?.code).join(',') || 'none'})`;
      return (
        `subscriptions ${plan.subscriptions.length} charges ${charged} ok/${failed} failed recovered ${recovered} ` +
        `sweeps ${swept}/${sweeps} completed${driver} canceled ${canceled} (paid anyway ${paidAnyway})`
      );
    },
    stop: () => sweeps.stop(),
  };
}

export type Extras = Awaited<ReturnType<typeof startExtras>>;
