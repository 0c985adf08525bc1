import type { Db } from '../../db/database.js';
import type { OutboundStore } from '../outbound/outbound-store.js';
import { PAYOUT_ATTEMPTS, attemptOutboundStore } from '../outbound/attempt-store.js';
import { claimRefundForProcessing, lockProcessingRefund } from './refund-payouts.js';
import { releaseNonceIfLastWith, takeNextNonce } from '../outbound/wallet-nonces.js';
import type { RefundRow } from './refunds.js';
import { hasIdShape } from '../../domain/ids.js';

// Refund payouts as an outbound job: the refund row (processing while it is paid out) and its payout_attempts, kept by
// the one attempt store (src/ledger/outbound/attempt-store.ts).

export function refundOutboundStore(db: Db): OutboundStore<RefundRow> {
  return attemptOutboundStore(db, {
    attempts: PAYOUT_ATTEMPTS,
    async claim(id) {
      const refund = await claimRefundForProcessing(db, id);
      if (!refund || refund.status !== 'processing') return { kind: 'done', status: refund?.status ?? 'missing' };
      return { kind: 'job', job: refund };
    },
    jobId: (refund) => refund.id,
    lock: (trx, refund) => lockProcessingRefund(trx, refund.id), // undefined: canceled meanwhile
    chain: (locked) => ({ network: locked.network, mode: locked.mode }),
    nonces: {
      // The refunds hot wallet sends nothing but the ledger's own payouts: its first nonce must be 0.
      take: (trx, ref, chainNonce) => takeNextNonce(trx, ref, chainNonce, { firstFromZero: true }),
      releaseIfLast: releaseNonceIfLastWith,
    },
    burnt: (refund) => ({
      kind: 'refund_payout',
      merchantId: refund.merchant_id,
      sessionId: hasIdShape(refund.session_id, 'pay') ? null : refund.session_id,
      object: { type: 'refund', id: refund.id },
    }),
  });
}
