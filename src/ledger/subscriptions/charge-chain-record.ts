import type { Db } from '../../db/database.js';
import { lockPendingCharge, recordSignedCharge } from './charges.js';

/**
 * The operator's record of a landed transfer that paid this charge although the ledger never signed it (a restored
 * older backup: `payouts settle-charge-from-chain`). Stored as the charge's attempt with no bytes, so the engine
 * settles the charge from the landed transaction like any attempt of its own (invoice paid, once). Refused unless the
 * charge is still pending (nothing of its own in flight), or when the transaction is already another charge's.
 */
export async function recordChainCharge(
  db: Db,
  chargeId: bigint,
  a: { txHash: string; detail: string },
): Promise<{ kind: 'recorded'; attemptId: bigint } | { kind: 'not_pending' } | { kind: 'already_recorded'; chargeId: bigint }> {
  return db.transaction().execute(async (trx) => {
    const charge = await lockPendingCharge(trx, chargeId);
    if (!charge) return { kind: 'not_pending' as const };
    // One transaction pays one charge: an earlier period's transfer (same customer, same destination) is refused.
    const taken = await trx
      .selectFrom('subscription_charge_attempts as a')
      .innerJoin('subscription_charges as c', 'c.id', 'a.charge_id')
      .select('a.charge_id')
      .where('a.tx_hash', '=', a.txHash)
      .where('c.network', '=', charge.network)
      .where('a.state', '!=', 'dropped')
      .executeTakeFirst();
    if (taken) return { kind: 'already_recorded' as const, chargeId: taken.charge_id };
    const signed = { network: charge.network, hash: a.txHash, raw: null, sender: charge.charger_address, nonce: null };
    const attemptId = await recordSignedCharge(trx, chargeId, {
      nonce: null,
      txHash: a.txHash,
      signed: { ...signed, validUntilHeight: null, validUntilTimeMs: null, recorded_by: a.detail },
    });
    return { kind: 'recorded' as const, attemptId };
  });
}
