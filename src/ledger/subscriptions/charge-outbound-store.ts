import type { Db } from '../../db/database.js';
import type { OutboundStore } from '../outbound/outbound-store.js';
import { takeNextNonce } from '../outbound/wallet-nonces.js';
import {
  dropChargeAttempt,
  liveChargeAttempts,
  loadCharge,
  lockChargeForReplacement,
  lockPendingCharge,
  markChargeBroadcast,
  recordReplacementAttempt,
  recordSignedCharge,
  reopenCharge,
  type ChargeRow,
} from './charges.js';
import { journalBurntFee } from '../journal/entries.js';
import { toAttempt } from '../outbound/attempt-store.js';
import { walletHistoryLedger } from '../outbound/wallet-history.js';

// Subscription charges as an outbound job: the charge row (pending → signed → broadcast while in flight; back to
// pending once every attempt is proven dead) and its subscription_charge_attempts ('live' or 'dropped').

export function chargeOutboundStore(db: Db): OutboundStore<ChargeRow> {
  return {
    wallets: walletHistoryLedger(db),
    async claim(id) {
      const charge = await loadCharge(db, BigInt(id));
      if (!charge) return { kind: 'done', status: 'missing' };
      if (charge.state === 'succeeded' || charge.state === 'failed') return { kind: 'done', status: charge.state };
      return { kind: 'job', job: charge };
    },
    // A pending charge has no live attempt (it leaves pending with its first, and returns only when none is live).
    liveAttempts: async (charge) =>
      charge.state === 'pending' ? [] : (await liveChargeAttempts(db, charge.id)).map((a) => toAttempt(a, charge.state === 'broadcast')),
    async sign(charge, replacing, fn) {
      return db.transaction().execute(async (trx) => {
        // A row lock taken by whoever signs: another scheduler signed or replaced it, or it was settled meanwhile.
        if (replacing ? !(await lockChargeForReplacement(trx, charge.id, replacing.id)) : !(await lockPendingCharge(trx, charge.id)))
          return 'raced' as const;
        return fn({
          takeNonce: (ref, chainNonce) => takeNextNonce(trx, ref, chainNonce),
          async record(a) {
            const input = { nonce: a.nonce, txHash: a.txHash, signed: a.signed, feeBumpPercent: a.feeBumpPercent };
            const id = replacing ? await recordReplacementAttempt(trx, charge.id, input) : await recordSignedCharge(trx, charge.id, input);
            return {
              id,
              txHash: a.txHash,
              nonce: a.nonce,
              signed: a.signed,
              feeBumpPercent: a.feeBumpPercent,
              createdAt: new Date(),
              broadcast: false,
            };
          },
        });
      });
    },
    markBroadcast: (charge) => markChargeBroadcast(db, charge.id),
    dropAttempt: (_charge, a, reason) => dropChargeAttempt(db, a.id, reason),
    // Bytes refused for lack of gas keep their nonce: the charge waits for the operator to top the charger up rather
    // than failing the customer's invoice for the merchant's missing gas; later charges wait behind this nonce.
    releaseNonceIfLast: async () => false,
    reopen: async (charge) => charge.state === 'pending' || (await reopenCharge(db, charge.id)),
    recordBurntFee: (charge, b) =>
      journalBurntFee(db, b, { kind: 'charge', merchantId: charge.merchant_id, object: { type: 'invoice', id: charge.invoice_id } }),
  };
}
