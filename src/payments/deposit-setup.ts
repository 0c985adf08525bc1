import { DelayedError } from 'bullmq';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type ChainAdapter } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { createQueue, createWorker, type QueueContext } from '../jobs/queues.js';
import { depositSetupOutboundStore } from '../ledger/payments/deposit-setup-outbound-store.js';
import {
  closeDepositSetup,
  ensureDepositSetup,
  openDepositSetupSessions,
  settleDepositSetup,
  type DepositSetupRow,
} from '../ledger/payments/deposit-setups.js';
import { registerWallets } from '../ledger/journal/entries.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import type { Logger } from '../logger.js';
import { advanceOutbound } from '../outbound/engine.js';
import { describeOutboundFailure, nothingSigned, type OutboundDeps, type OutboundKind, type StepResult } from '../outbound/kind.js';

// When a payer picks a network whose deposit addresses need preparing (Solana: the owner's associated token account
// for the chosen mint), the merchant account's refunds hot wallet pays for it, rent included, so the payer's wallet
// pays only its own fee (docs/solana.md). The setup is a kind of the outbound engine (docs/outbound.md): its row and
// signed bytes are stored before the first broadcast, a crash at any point re-offers the same bytes, a new signature
// happens only once every earlier one is proven expired (Solana blockhashes), and the landed transaction's fee and the
// rent locked in the created account are journaled (kind `deposit_setup`, docs/journal.md) when it settles.

export function createDepositSetupScheduler(ctx: QueueContext) {
  const queue = createQueue('deposit-setup', ctx);
  return {
    enqueue: async (sessionId: string) => {
      await queue.add('setup', { sessionId }, { jobId: `setup-${sessionId}` });
    },
    close: () => queue.close(),
  };
}

export interface DepositSetupDeps extends OutboundDeps {
  db: Db;
  adapters: ChainRegistry;
}

type SetupAdapter = ChainAdapter & Required<Pick<ChainAdapter, 'buildDepositSetup' | 'depositSetupNeeded' | 'readRentPaid'>>;

function isSetupAdapter(a: ChainAdapter): a is SetupAdapter {
  return typeof a.buildDepositSetup === 'function' && typeof a.depositSetupNeeded === 'function' && typeof a.readRentPaid === 'function';
}

const kinds = new WeakMap<DepositSetupDeps, OutboundKind<DepositSetupRow, SetupAdapter>>();

export function depositSetupKind(deps: DepositSetupDeps): OutboundKind<DepositSetupRow, SetupAdapter> {
  const cached = kinds.get(deps);
  if (cached) return cached;
  const kind: OutboundKind<DepositSetupRow, SetupAdapter> = {
    store: depositSetupOutboundStore(deps.db),
    intent: (s) => ({ purpose: 'deposit_setup', setup_id: String(s.id) }),
    describe: (s) => ({ deposit_setup_id: String(s.id), session_id: s.session_id, merchant_id: s.merchant_id }),
    adapter(s) {
      const adapter = deps.adapters.get(s.network, s.mode);
      return adapter && isSetupAdapter(adapter) ? { adapter } : { missing: 'network' };
    },
    network: (s) => ({ network: s.network, mode: s.mode }),
    outcome: (adapter, _s, a) => adapter.getTransactionOutcome(a.txHash),
    async receipt(adapter, s, a, landed) {
      const rentPaid = await adapter.readRentPaid(a.txHash);
      if (rentPaid === null) return { kind: 'unread' };
      const feePayer = adapter.normalizeAddress(a.signed.sender!) ?? a.signed.sender!;
      return {
        kind: 'delivered',
        async settle() {
          const done = await settleDepositSetup(deps.db, s.id, {
            txHash: a.txHash,
            attemptId: a.id,
            feePayer,
            block: { height: landed.block.height, hash: landed.block.hash },
            fee: landed.fee,
            rentPaid,
          });
          if (done)
            deps.log?.info(
              { ...kind.describe(s), tx_hash: a.txHash, fee: String(landed.fee), rent_paid: String(rentPaid) },
              'deposit address prepared',
            );
          return { kind: 'done', status: 'succeeded' };
        },
      };
    },
    async prepare(adapter, s, replacing) {
      if (!replacing) {
        const session = await deps.db.selectFrom('payment_sessions').select('status').where('id', '=', s.session_id).executeTakeFirst();
        const reason =
          session?.status !== 'open'
            ? 'the session is no longer open'
            : !(await adapter.depositSetupNeeded(s.deposit_address, s.token as 'USDT' | 'USDC'))
              ? 'the deposit token account already exists'
              : null;
        if (reason) {
          if (!(await closeDepositSetup(deps.db, s.id, 'skipped', reason, { unsent: true }))) return { kind: 'wait', ms: deps.pollMs };
          deps.log?.info({ ...kind.describe(s), reason }, 'deposit setup not needed; skipped');
          return { kind: 'done', status: 'skipped' };
        }
      }
      const account = await merchantAccountIndex(deps.db, s.merchant_id, s.mode);
      const wallet = await adapter.deriveHotWallet(deps.signer!, account, HOT_WALLET_SLOT.refunds);
      // The fee payer is watched like any hot wallet (docs/journal.md).
      await registerWallets(deps.db, [
        { network: s.network, mode: s.mode, address: wallet.address, merchantId: s.merchant_id, role: 'refunds' },
      ]);
      return {
        kind: 'ready',
        from: wallet,
        build: () => adapter.buildDepositSetup(wallet, s.deposit_address, s.token as 'USDT' | 'USDC'),
      };
    },
    async fail(s, f) {
      const reason = describeOutboundFailure(f);
      // Nothing signed by this run (refused before signing): failed only while no other run's attempt can still land.
      const unsent = nothingSigned(f);
      if (!(await closeDepositSetup(deps.db, s.id, 'failed', reason, { unsent })) && unsent) return { kind: 'wait', ms: deps.pollMs };
      deps.log?.warn({ ...kind.describe(s), reason }, 'deposit setup failed; the payer’s wallet creates the account itself');
      return { kind: 'done', status: 'failed' };
    },
  };
  kinds.set(deps, kind);
  return kind;
}

/** One step of the session's deposit setup (its row created on the first call). */
export async function advanceDepositSetup(deps: DepositSetupDeps, sessionId: string): Promise<StepResult> {
  const row = await ensureDepositSetup(deps.db, sessionId);
  if (!row) return { kind: 'done', status: 'nothing_to_do' };
  return advanceOutbound(depositSetupKind(deps), deps, String(row.id));
}

export interface DepositSetupWorkerOptions extends DepositSetupDeps {
  /** How long one job keeps driving its setup before parking itself. */
  jobBudgetMs: number;
  /** A crashed worker's job runs again after this long (BullMQ lock and stalled-job check). */
  lockDurationMs: number;
  /** How often setups still processing are enqueued again (a job lost with Redis, or a crash before enqueue). */
  sweepIntervalMs: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export function startDepositSetupWorker(ctx: QueueContext, opts: DepositSetupWorkerOptions): { stop(): Promise<void> } {
  const state = { stopping: false };
  const worker = createWorker(
    'deposit-setup',
    ctx,
    async ({ sessionId }, job, token) => {
      const until = Date.now() + opts.jobBudgetMs;
      for (;;) {
        const step = await advanceDepositSetup(opts, sessionId);
        if (step.kind === 'done') return step.status;
        if (state.stopping || Date.now() + step.ms > until) {
          await job.moveToDelayed(Date.now() + step.ms, token);
          throw new DelayedError();
        }
        await new Promise((r) => setTimeout(r, step.ms));
      }
    },
    2,
    opts.lockDurationMs,
  );
  worker.on('failed', (job, err) => opts.log?.warn({ err, job: job?.id }, 'deposit setup job failed; BullMQ retries it'));
  const scheduler = createDepositSetupScheduler(ctx);
  const timer = setInterval(() => {
    openDepositSetupSessions(opts.db, 1000)
      .then(async (ids) => {
        for (const id of ids) await scheduler.enqueue(id);
      })
      .catch((err: unknown) => opts.log?.warn({ err }, 'deposit setup sweep failed'));
  }, opts.sweepIntervalMs);
  timer.unref();
  return {
    async stop() {
      state.stopping = true;
      clearInterval(timer);
      await Promise.all([worker.close(), scheduler.close()]);
    },
  };
}
