import type { ChainRegistry } from '../../chains/chain-registry.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import type { Db } from '../db/database.js';
import { invalidRequest } from '../domain/errors.js';
import { formatMinor } from '../domain/money.js';
import { refundable, type Refundable } from '../ledger/refunds/refund-sources.js';
import { createRefund, type CreateRefundResult } from '../ledger/refunds/refunds.js';
import { refusal } from './refunds-refusal.js';

// Money back to customers (docs/refunds.md "Money back to customers"), once for the CLI (`deposits refund`,
// `sessions refund-received`) and the console (POST /stranded/:kind/:id/refund): an unmatched deposit, or what a
// session that closed unpaid received, through the merchant API's rules and payout engine. The default refund_id is
// derived from the deposit or session and the fingerprint from what was asked, so asking twice pays once.

export type StrandedKind = 'deposit' | 'session';

export interface StrandedRefundDeps {
  db: Db;
  chains: ChainRegistry;
  enqueuePayout(refundId: string): Promise<void>;
}

export interface StrandedRefundInput {
  /** Minor units (2 decimals); default: all that is left. */
  amountMinor?: bigint;
  /** What the operator typed for the amount (part of the fingerprint); default 'all'. */
  amountText?: string;
  /** A typed destination; default the sender. */
  to?: string;
  refundId?: string;
  /** metadata.initiated_by of the refund. */
  initiatedBy: string;
}

export const defaultStrandedRefundId = (kind: StrandedKind, id: string): string => `${kind === 'deposit' ? 'deposit' : 'received'}-${id}`;

/** What can be paid back; a refusal when there is no such deposit or session. Throws the ledger's spec errors. */
export async function strandedSource(deps: StrandedRefundDeps, kind: StrandedKind, id: string): Promise<Refundable> {
  const target = kind === 'deposit' ? { sessionId: null, depositId: id } : { sessionId: id, depositId: null };
  const found = await refundable(deps.db, deps.chains.tokenDecimals, target);
  if (!found) throw refusal(`no ${kind} ${id}`, 'resource_not_found', 'id', 404);
  return found;
}

/** The amount the refund would pay (minor units); a refusal when nothing is left and the default refund is not there. */
async function amountOf(deps: StrandedRefundDeps, kind: StrandedKind, id: string, found: Refundable, input: StrandedRefundInput) {
  if (input.amountMinor !== undefined) return input.amountMinor;
  if (found.remainingMinor === null) throw refusal(`${found.network} is not configured on this deployment`, 'network_not_configured');
  if (found.remainingMinor <= 0n && input.refundId === undefined && !(await alreadyRefunded(deps.db, kind, id, found))) {
    throw refusal(`nothing left to refund on ${kind} ${id}`, 'nothing_to_refund');
  }
  return found.remainingMinor;
}

/** What the refund would pay, where, in which token and on which network (changes nothing). */
export async function previewStrandedRefund(
  deps: StrandedRefundDeps,
  kind: StrandedKind,
  id: string,
  input: StrandedRefundInput,
  source?: Refundable,
) {
  const found = source ?? (await strandedSource(deps, kind, id));
  const amountMinor = await amountOf(deps, kind, id, found, input);
  let destination: string | null;
  if (input.to !== undefined) {
    destination = deps.chains.normalizeAddress(found.network, found.mode, input.to);
    if (destination === null)
      throw invalidRequest('parameter_invalid', `destination is not a valid ${found.network} address.`, 'destination');
  } else {
    destination = await senderOf(deps.db, kind, id, found);
    if (destination === null)
      throw invalidRequest('parameter_missing', 'The sender is unknown or not one; give destination.', 'destination');
  }
  return {
    found,
    amount: formatMinor(amountMinor, STABLECOIN_EXPONENT),
    token: found.token,
    network: found.network,
    destination: deps.chains.displayAddress(found.network, found.mode, destination),
  };
}

export async function refundStranded(
  deps: StrandedRefundDeps,
  kind: StrandedKind,
  id: string,
  input: StrandedRefundInput,
  found?: Refundable,
): Promise<CreateRefundResult> {
  const source = found ?? (await strandedSource(deps, kind, id));
  const amountMinor = await amountOf(deps, kind, id, source, input);
  const result = await createRefund(deps.db, deps.chains, {
    merchantId: source.merchantId,
    mode: source.mode,
    refundId: input.refundId ?? defaultStrandedRefundId(kind, id),
    sessionId: source.sessionId,
    depositId: source.depositId,
    // Nothing left but the default refund exists: the call below replays it (the amount is not looked at then).
    amountMinor: amountMinor > 0n ? amountMinor : 1n,
    currency: source.token,
    reason: null,
    description: kind === 'deposit' ? 'Unmatched deposit paid back by the operator' : 'Amount received paid back by the operator',
    metadata: { initiated_by: input.initiatedBy },
    destinationAddress: input.to ?? null,
    // What the operator asked for, not the computed remainder: the same request again replays the same refund.
    fingerprint: `cli:${kind}:${id}:${input.amountText ?? 'all'}:${input.to ?? 'sender'}`,
  });
  if (result.kind === 'created') await deps.enqueuePayout(result.refund.id);
  return result;
}

/** Whether the default refund of this deposit or session already exists (then asking again replays it). */
async function alreadyRefunded(db: Db, kind: StrandedKind, id: string, f: { merchantId: string; mode: 'test' | 'live' }) {
  const row = await db
    .selectFrom('refunds')
    .select('id')
    .where('merchant_id', '=', f.merchantId)
    .where('mode', '=', f.mode)
    .where('refund_id', '=', defaultStrandedRefundId(kind, id))
    .executeTakeFirst();
  return row !== undefined;
}

/** The one sender of a deposit, or of the credited deposits of a session; null when unknown or several. */
async function senderOf(db: Db, kind: StrandedKind, id: string, f: Refundable): Promise<string | null> {
  if (kind === 'deposit') {
    const d = await db.selectFrom('deposits').select('from_address').where('id', '=', id).executeTakeFirst();
    return d?.from_address ?? null;
  }
  const senders = await db
    .selectFrom('deposits')
    .select('from_address')
    .distinct()
    .where('session_id', '=', f.sessionId)
    .where('disposition', '=', 'credited')
    .execute();
  return senders.length === 1 ? (senders[0]!.from_address ?? null) : null;
}
