import type { ChainRegistry } from '../../chains/registry.js';
import { HOT_WALLET_SLOT, type SignedTransfer, type TxSigner } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { createQueue, createWorker, type QueueContext } from '../jobs/queues.js';
import type { Logger } from '../logger.js';

// When a payer picks a network whose deposit addresses need preparing (Solana: the owner's associated token account
// for the chosen mint), the merchant account's hot wallet pays for it, rent included, so the payer's wallet pays only
// its own fee (docs/solana.md). The transaction is an idempotent create: sending it twice, or after the payer's wallet
// created the account, changes nothing, so a plain retrying job is enough.

export function createDepositSetupScheduler(ctx: QueueContext) {
  const queue = createQueue('deposit-setup', ctx);
  return {
    enqueue: async (sessionId: string) => {
      await queue.add('setup', { sessionId }, { jobId: `setup-${sessionId}` });
    },
    close: () => queue.close(),
  };
}

async function prepareDepositAddress(
  deps: { db: Db; adapters: ChainRegistry; signer: TxSigner },
  sessionId: string,
): Promise<'prepared' | 'nothing_to_do'> {
  const s = await deps.db
    .selectFrom('payment_sessions as s')
    .innerJoin('merchant_hd_accounts as a', (j) => j.onRef('a.merchant_id', '=', 's.merchant_id').onRef('a.mode', '=', 's.mode'))
    .select(['s.network', 's.mode', 's.token', 's.deposit_address', 's.status', 'a.account_index'])
    .where('s.id', '=', sessionId)
    .executeTakeFirst();
  if (!s || s.status !== 'open' || !s.network || !s.token || !s.deposit_address) return 'nothing_to_do';
  const adapter = deps.adapters.get(s.network, s.mode);
  if (!adapter?.buildDepositSetup) return 'nothing_to_do';
  const feePayer = await adapter.deriveHotWallet(deps.signer, s.account_index, HOT_WALLET_SLOT.refunds);
  const unsigned = await adapter.buildDepositSetup(feePayer, s.deposit_address, s.token);
  const signed: SignedTransfer = await adapter.signTransfer(unsigned, deps.signer);
  const sent = await adapter.broadcast(signed);
  if (sent.status === 'rejected') throw new Error(`deposit setup refused: ${sent.reason} ${sent.detail}`);
  for (let i = 0; i < 120; i++) {
    const outcome = await adapter.getTransactionOutcome(signed.hash);
    if (outcome.status === 'succeeded') return 'prepared';
    if (outcome.status === 'failed') throw new Error(`deposit setup failed: ${outcome.reason} ${outcome.detail}`);
    if (await adapter.isExpired(signed)) throw new Error('deposit setup expired before landing; retried');
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error('deposit setup not confirmed in time; retried');
}

export function startDepositSetupWorker(
  ctx: QueueContext,
  deps: { db: Db; adapters: ChainRegistry; signer: TxSigner; log?: Pick<Logger, 'info' | 'warn'> },
): { stop(): Promise<void> } {
  const worker = createWorker(
    'deposit-setup',
    ctx,
    async ({ sessionId }) => {
      const r = await prepareDepositAddress(deps, sessionId);
      if (r === 'prepared') deps.log?.info({ session_id: sessionId }, 'deposit address prepared');
      return r;
    },
    2,
  );
  worker.on('failed', (job, err) => deps.log?.warn({ err, job: job?.id }, 'deposit setup failed; BullMQ retries it'));
  return { stop: () => worker.close() };
}
