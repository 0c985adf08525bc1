import type { ChainRegistry } from '../../chains/chain-registry.js';
import { HOT_WALLET_SLOT, type KeyDeriver } from '../../chains/types.js';
import type { Mode } from '../db/schema.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { recordChainPayout } from '../ledger/refunds/refund-payouts.js';
import { createRefund, type RefundRow } from '../ledger/refunds/refunds.js';
import type { Db } from '../db/database.js';
import { refusal } from './refunds-refusal.js';

// Operator actions on a refund, once for the CLI (`payouts retry`, `payouts settle-from-chain`) and the console
// (POST /refunds/:id/retry, POST /refunds/:id/settle-from-chain). Refusals carry the CLI's own sentences.

export interface RefundActionDeps {
  db: Db;
  /** The configured chains (the CLI creates them lazily: only after the refusals that need no RPC). */
  chains: () => Promise<ChainRegistry>;
  enqueuePayout(refundId: string): Promise<void>;
}

/** A merchant's refund by its refund_id or our re_ id; undefined when none. */
export async function findMerchantRefund(db: Db, merchantId: string, refundId: string): Promise<RefundRow | undefined> {
  return db
    .selectFrom('refunds')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where((eb) => eb.or([eb('refund_id', '=', refundId), eb('id', '=', refundId)]))
    .executeTakeFirst();
}

/** Pays a failed refund again, as a new refund `<refund_id>-retry-N` to the same destination, and queues its payout. */
export async function retryRefund(
  deps: RefundActionDeps,
  old: RefundRow,
  asked = old.refund_id,
): Promise<{ retried: string; refund: RefundRow }> {
  if (old.status !== 'failed') throw refusal(`refund ${asked} is ${old.status}; only failed refunds can be retried`, 'refund_not_failed');
  const tries = await deps.db
    .selectFrom('refunds')
    .select('refund_id')
    .where('merchant_id', '=', old.merchant_id)
    .where('mode', '=', old.mode)
    .where('refund_id', 'like', `${old.refund_id.replaceAll('%', '\\%').replaceAll('_', '\\_')}-retry-%`)
    .execute();
  const created = await createRefund(deps.db, await deps.chains(), {
    merchantId: old.merchant_id,
    mode: old.mode as Mode,
    refundId: `${old.refund_id}-retry-${tries.length + 1}`,
    sessionId: old.session_id,
    depositId: old.deposit_id, // a failed refund of an unmatched deposit is retried against that deposit
    amountMinor: old.amount_minor,
    currency: old.currency,
    reason: old.reason,
    description: old.description,
    metadata: { ...old.metadata, retry_of: old.refund_id },
    destinationAddress: old.destination_address,
    fingerprint: `retry:${old.id}:${tries.length + 1}`,
  });
  await deps.enqueuePayout(created.refund.id);
  return { retried: old.refund_id, refund: created.refund };
}

/**
 * Records a landed transfer of the merchant's refunds wallet as this refund's payout (docs/outbound.md, "Transactions
 * the ledger does not know"): the transaction must be final and move the refund's token from the refunds wallet to the
 * refund's destination. The engine then settles the refund from it.
 */
export async function settleRefundFromChain(
  deps: RefundActionDeps & { keys: KeyDeriver | null | undefined },
  refund: RefundRow,
  tx: string,
  actor: string,
  asked = refund.refund_id,
): Promise<{ refund: RefundRow; txHash: string; deliveredBase: bigint }> {
  if (!deps.keys)
    throw refusal('settle-from-chain needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive the refunds wallet', 'keys_not_configured');
  const adapter = (await deps.chains()).get(refund.network, refund.mode);
  if (!adapter) throw refusal(`${refund.network} (${refund.mode}) is not configured in this environment`, 'network_not_configured');
  const wallet = await adapter.deriveHotWallet(
    deps.keys,
    await merchantAccountIndex(deps.db, refund.merchant_id, refund.mode),
    HOT_WALLET_SLOT.refunds,
  );
  const outcome = await adapter.getTransactionOutcome(tx);
  if (outcome.status !== 'succeeded' || !outcome.final)
    throw refusal(
      `${tx} is ${outcome.status === 'succeeded' ? 'not final yet' : outcome.status} on ${refund.network}`,
      'transaction_not_final',
      'tx_hash',
    );
  // The refund's token, from the refunds wallet, to the refund's destination: what the engine reads to settle it.
  const d = await adapter.readDelivery(tx, refund.token as 'USDT' | 'USDC', wallet.address, refund.destination_address);
  if (!d || d.delivered === 0n)
    throw refusal(
      `${tx} moved no ${refund.token} from ${adapter.displayAddress(wallet.address)} to the refund's destination`,
      'transaction_not_a_payout',
      'tx_hash',
    );
  const r = await recordChainPayout(deps.db, refund.id, {
    sender: wallet.address,
    txHash: tx,
    nonce: null,
    detail: `recorded from the chain by ${actor} (payouts settle-from-chain)`,
  });
  if (r.kind === 'not_open')
    throw refusal(`refund ${asked} is ${r.status}; only pending or processing refunds can be settled`, 'refund_not_open');
  if (r.kind === 'has_attempts')
    throw refusal(`refund ${asked} has a transaction of its own in flight: the engine follows it`, 'refund_in_flight');
  if (r.kind === 'already_recorded')
    throw refusal(
      `${tx} is already recorded for refund ${r.refundId}: one transaction pays one refund`,
      'transaction_already_recorded',
      'tx_hash',
    );
  await deps.enqueuePayout(refund.id);
  return { refund, txHash: tx, deliveredBase: d.delivered };
}
