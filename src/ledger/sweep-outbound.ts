import type { Db } from '../db/database.js';
import type { OutboundAttempt, OutboundStore } from './outbound-store.js';
import { journalBurntFee } from './journal.js';
import { releaseNonceIfLastWith, takeNextNonce } from './payouts.js';
import {
  blockingStepAttemptIds,
  claimSweepStep,
  lockProcessingStep,
  recordStepAttempt,
  setStepAttemptState,
  sweepStepAttempts,
  type SweepAttemptRow,
  type SweepRow,
  type SweepStepRow,
} from './sweeps.js';

// Sweep steps as outbound jobs: the sweep_steps row (processing while it is sent) and its sweep_step_attempts. Nonces
// are the shared hot_wallet_nonces rows: the gas station and every deposit address that sends its own transfer each
// have their own row, so a sweep's top-ups never collide with a refund or another sweep of the same wallet.

export interface SweepStepJob {
  step: SweepStepRow;
  sweep: SweepRow;
}

const LIVE = new Set(['signed', 'broadcast']);

export function sweepOutboundStore(db: Db): OutboundStore<SweepStepJob> {
  return {
    async claim(id) {
      const found = await claimSweepStep(db, id);
      if (!found) return { kind: 'done', status: 'missing' };
      if (found.step.status !== 'processing') return { kind: 'done', status: found.step.status };
      return { kind: 'job', job: found };
    },
    async liveAttempts(job) {
      return (await sweepStepAttempts(db, job.step.id)).filter((a) => LIVE.has(a.state)).map(toAttempt);
    },
    async sign(job, replacing, fn) {
      return db.transaction().execute(async (trx) => {
        const locked = await lockProcessingStep(trx, job.step.id);
        if (!locked) return 'closed' as const;
        const blocking = await blockingStepAttemptIds(trx, job.step.id);
        if (replacing ? String(blocking[0]) !== String(replacing.id) : blocking.length > 0) return 'raced' as const;
        return fn({
          takeNonce: (ref, chainNonce) => takeNextNonce(trx, ref, chainNonce),
          record: async (a) => toAttempt(await recordStepAttempt(trx, locked, job.sweep, a)),
        });
      });
    },
    markBroadcast: (_job, a) => setStepAttemptState(db, a.id, 'broadcast'),
    dropAttempt: (_job, a, reason) => setStepAttemptState(db, a.id, 'dropped', reason),
    releaseNonceIfLast: (_job, ref, a) =>
      releaseNonceIfLastWith(db, ref, a, (trx) =>
        setStepAttemptState(trx, a.id, 'dropped', 'refused by the network before landing; nonce given back'),
      ),
    // A step stays processing while its attempts are followed; nothing to reopen.
    reopen: async () => true,
    recordBurntFee: (job, b) =>
      journalBurntFee(db, b, { kind: 'sweep', merchantId: job.sweep.merchant_id, object: { type: 'sweep', id: job.sweep.id } }),
  };
}

function toAttempt(a: SweepAttemptRow): OutboundAttempt {
  return {
    id: a.id,
    txHash: a.tx_hash,
    nonce: a.nonce,
    signed: a.signed,
    feeBumpPercent: a.fee_bump_percent,
    createdAt: a.created_at,
    broadcast: a.state !== 'signed',
  };
}
