import type { Db } from '../db/database.js';
import type { OutboundAttempt, OutboundStore } from './outbound-store.js';
import { journalBurntFee } from './journal.js';
import {
  blockingSetupAttemptIds,
  depositSetupAttempts,
  depositSetupById,
  lockProcessingSetup,
  recordSetupAttempt,
  setSetupAttemptState,
  type DepositSetupAttemptRow,
  type DepositSetupRow,
} from './deposit-setups.js';

// Deposit setups as outbound jobs: the deposit_setups row (processing while it is sent) and its deposit_setup_attempts.
// Solana has no account nonces: a setup is bound to a recent blockhash instead, and re-signed only once the engine has
// proven every attempt expired (docs/outbound.md). The nonce calls are never reached for it; they refuse, so that a
// nonce family added later cannot silently share a wallet's nonce row without a proper policy.

const LIVE = new Set(['signed', 'broadcast']);

export function depositSetupOutboundStore(db: Db): OutboundStore<DepositSetupRow> {
  return {
    async claim(id) {
      const found = await depositSetupById(db, id);
      if (!found) return { kind: 'done', status: 'missing' };
      if (found.status !== 'processing') return { kind: 'done', status: found.status };
      return { kind: 'job', job: found };
    },
    async liveAttempts(job) {
      return (await depositSetupAttempts(db, job.id)).filter((a) => LIVE.has(a.state)).map(toAttempt);
    },
    async sign(job, replacing, fn) {
      return db.transaction().execute(async (trx) => {
        const locked = await lockProcessingSetup(trx, job.id);
        if (!locked) return 'closed' as const;
        const blocking = await blockingSetupAttemptIds(trx, job.id);
        if (replacing ? String(blocking[0]) !== String(replacing.id) : blocking.length > 0) return 'raced' as const;
        return fn({
          takeNonce: () => Promise.reject(new Error('deposit setups are sent only on chains without account nonces')),
          record: async (a) => toAttempt(await recordSetupAttempt(trx, locked, a)),
        });
      });
    },
    markBroadcast: (_job, a) => setSetupAttemptState(db, a.id, 'broadcast'),
    dropAttempt: (_job, a, reason) => setSetupAttemptState(db, a.id, 'dropped', reason),
    // No nonce to give back (Solana): the same bytes are offered until they land or are proven expired.
    releaseNonceIfLast: async () => false,
    // A setup stays processing while its attempts are followed; nothing to reopen.
    reopen: async () => true,
    recordBurntFee: (setup, b) =>
      journalBurntFee(db, b, {
        kind: 'deposit_setup',
        merchantId: setup.merchant_id,
        sessionId: setup.session_id,
        object: { type: 'session', id: setup.session_id },
      }),
  };
}

function toAttempt(a: DepositSetupAttemptRow): OutboundAttempt {
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
