import type { Db } from '../../db/database.js';
import type { OutboundStore } from '../outbound/outbound-store.js';
import { SWEEP_STEP_ATTEMPTS, attemptOutboundStore } from '../outbound/attempt-store.js';
import { releaseNonceIfLastWith, takeNextNonce } from '../outbound/wallet-nonces.js';
import { claimSweepStep, lockProcessingStep, type SweepRow, type SweepStepRow } from './sweeps.js';

// Sweep steps as outbound jobs: the sweep_steps row (processing while it is sent) and its sweep_step_attempts, kept by
// the one attempt store (src/ledger/outbound/attempt-store.ts). Nonces are the shared hot_wallet_nonces rows: the gas station
// and every deposit address that sends its own transfer each have their own row, so a sweep's top-ups never collide
// with a refund or another sweep of the same wallet.

export interface SweepStepJob {
  step: SweepStepRow;
  sweep: SweepRow;
}

export function sweepOutboundStore(db: Db): OutboundStore<SweepStepJob> {
  return attemptOutboundStore(db, {
    attempts: SWEEP_STEP_ATTEMPTS,
    async claim(id) {
      const found = await claimSweepStep(db, id);
      if (!found) return { kind: 'done', status: 'missing' };
      if (found.step.status !== 'processing') return { kind: 'done', status: found.step.status };
      return { kind: 'job', job: found };
    },
    jobId: (job) => job.step.id,
    lock: (trx, job) => lockProcessingStep(trx, job.step.id),
    chain: (_locked, job) => ({ network: job.sweep.network, mode: job.sweep.mode }),
    nonces: { take: (trx, ref, chainNonce) => takeNextNonce(trx, ref, chainNonce), releaseIfLast: releaseNonceIfLastWith },
    burnt: (job) => ({ kind: 'sweep', merchantId: job.sweep.merchant_id, object: { type: 'sweep', id: job.sweep.id } }),
  });
}
