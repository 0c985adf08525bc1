import type { ChainRegistry } from '../../chains/chain-registry.js';
import {
  TransferRejectedError,
  isSweeper,
  type ChainAdapter,
  type SweepMethodImpl,
  type SweepRequest,
  type SweepStep,
  type Sweeper,
  type UnsignedTransfer,
} from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { closeUnsentSweepStep, failSweepStep, settleSweepStep, sweepSteps } from '../ledger/treasury/sweeps.js';
import { sweepOutboundStore, type SweepStepJob } from '../ledger/treasury/sweep-outbound-store.js';
import { advanceOutbound } from '../outbound/engine.js';
import { describeOutboundFailure, nothingSigned, type OutboundDeps, type OutboundKind, type StepResult } from '../outbound/kind.js';
import { requestFromJson, stepFromJson } from './codec.js';
import { recordSweepStepSettled } from '../metrics/sweeps.js';

// One sweep step (one transaction) as a kind of the outbound engine: persisted before broadcast, replaced at the
// same nonce when stuck, re-signed only when proven dead, read at finality. What is the sweep's own: the builder
// (the sweep method's `build`, null: the step is not needed and is settled as skipped) and the receipt (the
// method's `read`: per source the base units that left it for the destination, and the fee).

export interface SweepEngineDeps extends OutboundDeps {
  db: Db;
  adapters: ChainRegistry;
}

type SweepAdapter = ChainAdapter & Sweeper;

/** How long a step whose build was refused waits before it is built again (as the engine waits after a refusal). */
export const BUILD_REFUSED_WAIT_MS = 5_000;

export function advanceSweepStep(deps: SweepEngineDeps, stepId: string): Promise<StepResult> {
  return advanceOutbound(sweepStepKind(deps), deps, stepId);
}

const kinds = new WeakMap<SweepEngineDeps, OutboundKind<SweepStepJob, SweepAdapter>>();

function methodOf(adapter: SweepAdapter, job: SweepStepJob): SweepMethodImpl {
  const m = adapter.sweepMethods().find((x) => x.method === job.sweep.method);
  if (!m) throw new Error(`sweep method ${job.sweep.method} is not offered by ${adapter.network} (${adapter.mode})`);
  return m;
}

export function sweepStepKind(deps: SweepEngineDeps): OutboundKind<SweepStepJob, SweepAdapter> {
  const cached = kinds.get(deps);
  if (cached) return cached;
  const kind: OutboundKind<SweepStepJob, SweepAdapter> = {
    store: sweepOutboundStore(deps.db),
    intent: (job) => ({ purpose: 'sweep_step', sweep_id: job.sweep.id, step_id: String(job.step.id) }),
    describe: (job) => ({
      sweep_id: job.sweep.id,
      sweep_step_id: job.step.id,
      merchant_id: job.sweep.merchant_id,
      purpose: job.step.purpose,
    }),
    adapter(job) {
      const adapter = deps.adapters.get(job.sweep.network, job.sweep.mode);
      return adapter && isSweeper(adapter) ? { adapter } : { missing: 'network' };
    },
    network: (job) => ({ network: job.sweep.network, mode: job.sweep.mode }),
    outcome: (adapter, _job, a) => adapter.getTransactionOutcome(a.txHash),
    async receipt(adapter, job, a, landed) {
      const step = stepFromJson(job.step.step);
      const r = await methodOf(adapter, job).read(a.txHash, requestFromJson(job.sweep.request), step);
      if (!r) return { kind: 'unread' };
      const swept = r.swept.reduce((t, s) => t + s.amount, 0n);
      if (step.sources.length > 0 && swept === 0n) return { kind: 'undelivered', elsewhere: r.elsewhere };
      return {
        kind: 'delivered',
        async settle() {
          const done = await settleSweepStep(deps.db, job.step.id, { id: a.id, txHash: a.txHash }, r, landed);
          if (done) {
            recordSweepStepSettled(job.sweep, r.fee, swept);
            deps.log?.info(
              {
                ...kind.describe(job),
                tx_hash: a.txHash,
                swept_base: String(swept),
                elsewhere_base: String(r.elsewhere),
                fee: String(r.fee),
                native_moved: String(r.nativeMoved),
              },
              'sweep step settled',
            );
          }
          return { kind: 'done', status: 'succeeded' };
        },
      };
    },
    async prepare(adapter, job, replacing) {
      const method = methodOf(adapter, job);
      const request = requestFromJson(job.sweep.request);
      const step = stepFromJson(job.step.step);
      let first: { nonce: bigint | null; unsigned: UnsignedTransfer } | null = null;
      let alsoHeldBy: string[] | undefined;
      if (!replacing) {
        // Every sender of the sweep holds this step while it sent transactions the ledger does not know (a restored
        // backup: the operator is shown the whole sweep found on chain, not only this step's wallet's part of it).
        alsoHeldBy = [...new Set((await sweepSteps(deps.db, job.sweep.id)).map((s) => s.from_address))];
        // The tokens this step serves (its transfer, or the gas, TRX, energy or activation for it) already left a
        // source: a transaction the ledger does not know moved them (a backup restored after this sweep ran, or the
        // deposit key used by hand). Sending it would pay its top-up twice or transfer nothing: nothing is built, and
        // once the wallet history guard lets the step through it fails, naming the source (the sweep then fails and
        // releases its addresses; a later plan reads their balances afresh).
        const gone = await tokensGone(adapter, request, step);
        if (gone)
          return {
            kind: 'ready',
            from: step.from,
            alsoHeldBy,
            async build() {
              throw new TransferRejectedError('insufficient_token_balance', gone);
            },
          };
        // The builder may decide the step is not needed any more (nothing worth reclaiming, an account already
        // active): settled as skipped, nothing signed.
        const nonce = await adapter.getAccountNonce(step.from.address);
        let unsigned: UnsignedTransfer | null;
        try {
          unsigned = await method.build(request, step, nonce, 0);
        } catch (err) {
          if (!(err instanceof TransferRejectedError)) throw err;
          // Refused before signing (a gas station without the native coin, a node refusing to build): the step waits
          // like a refused broadcast, not rebuilt on every pass; a wallet short of fee money is named for the operator.
          deps.log?.warn({ ...kind.describe(job), reason: err.reason, detail: err.message }, 'sweep step cannot be built yet; waiting');
          return { kind: 'wait', ms: Math.max(deps.pollMs, BUILD_REFUSED_WAIT_MS), ...(err.shortfall ? { shortfall: err.shortfall } : {}) };
        }
        if (!unsigned) {
          // Not if another run of this step signed it meanwhile (what made it unneeded may be that very transaction).
          if (!(await closeUnsentSweepStep(deps.db, job.step.id, 'skipped', 'not needed when built')))
            return { kind: 'wait', ms: deps.pollMs };
          deps.log?.info(kind.describe(job), 'sweep step not needed; skipped');
          return { kind: 'done', status: 'skipped' };
        }
        first = { nonce, unsigned };
      }
      return {
        kind: 'ready',
        from: step.from,
        ...(alsoHeldBy ? { alsoHeldBy } : {}),
        async build(nonce, feeBumpPercent) {
          if (first && first.nonce === nonce && feeBumpPercent === 0) return first.unsigned;
          const unsigned = await method.build(request, step, nonce, feeBumpPercent);
          if (!unsigned) throw new TransferRejectedError('other', `the ${step.purpose} step is no longer needed`);
          return unsigned;
        },
      };
    },
    async fail(job, f) {
      const reason = describeOutboundFailure(f);
      if (nothingSigned(f)) {
        // Nothing signed by this run: failed only while no other run's attempt of the step can still land.
        if (!(await closeUnsentSweepStep(deps.db, job.step.id, 'failed', reason))) return { kind: 'wait', ms: deps.pollMs };
      } else await failSweepStep(deps.db, job.step.id, reason);
      deps.log?.warn({ ...kind.describe(job), reason }, 'sweep step failed');
      return { kind: 'done', status: 'failed' };
    },
  };
  kinds.set(deps, kind);
  return kind;
}

/** The steps that move a source's tokens or prepare their move (clean-up steps, deploy and close do not). */
const SERVES_SOURCES = new Set(['fund', 'activate', 'delegate', 'transfer', 'batch']);

/**
 * Why `step` must not be sent because a source it serves no longer holds its planned amount at the final height
 * (balances only grow between plan and send, unless something the ledger does not know moved the tokens); null: send.
 */
async function tokensGone(adapter: SweepAdapter, request: SweepRequest, step: SweepStep): Promise<string | null> {
  if (!SERVES_SOURCES.has(step.purpose)) return null;
  const canon = (a: string) => adapter.normalizeAddress(a) ?? a;
  const served = new Set((step.sources.length > 0 ? step.sources : [step.to]).map(canon));
  const sources = request.sources.filter((s) => served.has(canon(s.address)));
  if (sources.length === 0) return null;
  const balances = await adapter.finalTokenBalances(
    request.token,
    sources.map((s) => s.address),
  );
  const short = sources.flatMap((s, i) =>
    balances[i]! < s.amount ? [`${adapter.displayAddress(s.address)} holds ${balances[i]} of ${s.amount}`] : [],
  );
  if (short.length === 0) return null;
  return `the tokens already left the source (${short.join('; ')}): moved by a transaction the ledger does not know (a restored backup, or the deposit key used by hand)`;
}
