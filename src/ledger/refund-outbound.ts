import type { Db } from '../db/database.js';
import type { OutboundAttempt, OutboundStore } from './outbound-store.js';
import {
  blockingAttemptIds,
  claimRefundForProcessing,
  lockProcessingRefund,
  payoutAttempts,
  recordSignedAttempt,
  releaseNonceIfLast,
  setAttemptState,
  takeNextNonce,
  type PayoutAttempt,
} from './payouts.js';
import type { RefundRow } from './refunds.js';
import { journalBurntFee } from './journal.js';
import { hasIdShape } from '../domain/ids.js';

// Refund payouts as an outbound job: the refund row (processing while it is paid out) and its payout_attempts.

const LIVE = new Set(['signed', 'broadcast']);

export function refundOutboundStore(db: Db): OutboundStore<RefundRow> {
  return {
    async claim(id) {
      const refund = await claimRefundForProcessing(db, id);
      if (!refund || refund.status !== 'processing') return { kind: 'done', status: refund?.status ?? 'missing' };
      return { kind: 'job', job: refund };
    },
    async liveAttempts(refund) {
      return (await payoutAttempts(db, refund.id)).filter((a) => LIVE.has(a.state)).map(toAttempt);
    },
    async sign(refund, replacing, fn) {
      return db.transaction().execute(async (trx) => {
        const locked = await lockProcessingRefund(trx, refund.id);
        if (!locked) return 'closed' as const; // canceled meanwhile
        // Another run of this refund (a duplicate job) may have signed since the caller looked: sign only if the
        // attempts are still as seen.
        const blocking = await blockingAttemptIds(trx, refund.id);
        if (replacing ? String(blocking[0]) !== String(replacing.id) : blocking.length > 0) return 'raced' as const;
        return fn({
          // The refunds hot wallet sends nothing but the ledger's own payouts: its first nonce must be 0.
          takeNonce: (ref, chainNonce) => takeNextNonce(trx, ref, chainNonce, { firstFromZero: true }),
          record: async (a) =>
            toAttempt(
              await recordSignedAttempt(trx, locked, {
                sender: a.sender,
                nonce: a.nonce,
                txHash: a.txHash,
                signed: a.signed,
                feeBumpPercent: a.feeBumpPercent,
              }),
            ),
        });
      });
    },
    markBroadcast: (_refund, a) => setAttemptState(db, a.id, 'broadcast'),
    dropAttempt: (_refund, a, reason) => setAttemptState(db, a.id, 'dropped', reason),
    releaseNonceIfLast: (_refund, ref, a) => releaseNonceIfLast(db, ref, a),
    // A refund stays processing while its attempts are followed; nothing to reopen.
    reopen: async () => true,
    recordBurntFee: (refund, b) =>
      journalBurntFee(db, b, {
        kind: 'refund_payout',
        merchantId: refund.merchant_id,
        sessionId: hasIdShape(refund.session_id, 'pay') ? null : refund.session_id,
        object: { type: 'refund', id: refund.id },
      }),
  };
}

function toAttempt(a: PayoutAttempt): OutboundAttempt {
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
