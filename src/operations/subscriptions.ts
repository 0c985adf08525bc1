import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Mode, SubscriptionStatusValue } from '../db/schema.js';
import type { Clock } from '../domain/clock.js';
import type { ChargeRow } from '../ledger/subscriptions/charges.js';
import { heldSubscriptions, resolveSubscriptionHold, type HoldResolution, type ResolveResult } from '../ledger/subscriptions/hold.js';
import type { InvoiceRow } from '../ledger/subscriptions/invoices.js';
import type { PaymentMethodRow } from '../ledger/subscriptions/payment-methods.js';
import {
  cancelSubscription,
  type CancelSubscriptionResult,
  type CancellationReason,
  type SubscriptionRow,
} from '../ledger/subscriptions/subscriptions.js';
import { keysetPage, pastCursor, type KeysetPage, type KeysetRequest } from './keyset-by-created.js';

// Subscriptions for people: the list and one subscription with its invoices, charges and payment methods; the
// merchant's cancel (the API's rules, src/ledger/subscriptions/subscriptions.ts); the operator's hold work list and
// its resolution (docs/subscriptions.md "Operator hold"). Called by the CLI (`subscriptions held|resolve`) and the
// console alike.

export interface SubscriptionsDeps {
  db: Db;
  clock: Clock;
  checkoutBaseUrl: string;
}

export interface HeldView {
  subscription_id: string;
  merchant_id: string;
  mode: Mode;
  status: string;
  reason: string;
  charge_id: string | null;
  transaction_hash: string | null;
  invoice_id: string | null;
  held_at: string;
}

/** Every held subscription, oldest hold first (the operator's work list), as `subscriptions held` prints it. */
export async function heldSubscriptionList(db: Db): Promise<HeldView[]> {
  return (await heldSubscriptions(db)).map((h) => ({
    subscription_id: h.id,
    merchant_id: h.merchantId,
    mode: h.mode,
    status: h.status,
    reason: h.reason,
    charge_id: h.chargeId,
    transaction_hash: h.txHash,
    invoice_id: h.latestInvoiceId,
    held_at: h.heldAt.toISOString(),
  }));
}

/** Ends a hold: charge the open invoice again, or cancel the subscription. */
export function resolveHold(deps: SubscriptionsDeps, id: string, resolution: HoldResolution): Promise<ResolveResult> {
  return resolveSubscriptionHold(deps, id, resolution);
}

export interface SubscriptionFilter {
  merchantId?: string | undefined;
  mode?: Mode | undefined;
  status?: SubscriptionStatusValue | undefined;
  /** true: only subscriptions held for an operator. */
  held?: boolean | undefined;
}

/** Newest first by default, keyset on (created_at, id), across merchants (an operator) or within one. */
export async function listSubscriptionPage(db: Db, f: SubscriptionFilter, page: KeysetRequest): Promise<KeysetPage<SubscriptionRow>> {
  let q = db.selectFrom('subscriptions as s').selectAll('s');
  if (f.merchantId !== undefined) q = q.where('s.merchant_id', '=', f.merchantId);
  if (f.mode !== undefined) q = q.where('s.mode', '=', f.mode);
  if (f.status !== undefined) q = q.where('s.status', '=', f.status);
  if (f.held === true) q = q.where('s.hold_reason', 'is not', null);
  if (page.cursor !== undefined) q = q.where(pastCursor('subscriptions', 's', 'id', page.cursor, page.order));
  const rows = await q
    .orderBy(sql`s.created_at`, page.order)
    .orderBy('s.id', page.order)
    .limit(page.limit + 1)
    .execute();
  return keysetPage(rows, page.limit, (r) => r.id);
}

export function findSubscriptionById(db: Db, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface SubscriptionDetail {
  subscription: SubscriptionRow;
  /** Newest first. */
  invoices: InvoiceRow[];
  /** Newest first. */
  charges: ChargeRow[];
  /** The customer's payment methods with this merchant and mode, newest first. */
  paymentMethods: PaymentMethodRow[];
}

export async function subscriptionDetail(db: Db, id: string): Promise<SubscriptionDetail | undefined> {
  const s = await findSubscriptionById(db, id);
  if (!s) return undefined;
  const [invoices, charges, paymentMethods] = await Promise.all([
    db.selectFrom('invoices').selectAll().where('subscription_id', '=', id).orderBy('created_at', 'desc').orderBy('id', 'desc').execute(),
    db.selectFrom('subscription_charges').selectAll().where('subscription_id', '=', id).orderBy('id', 'desc').execute(),
    db
      .selectFrom('payment_methods')
      .selectAll()
      .where('merchant_id', '=', s.merchant_id)
      .where('mode', '=', s.mode)
      .where('customer', '=', s.customer)
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .execute(),
  ]);
  return { subscription: s, invoices, charges, paymentMethods };
}

/** The merchant's cancel, now or at the end of the current period (the API's rules and events). */
export function cancelSubscriptionFor(
  deps: SubscriptionsDeps,
  id: string,
  o: { atPeriodEnd: boolean; reason: CancellationReason | null; comment: string | null },
): Promise<CancelSubscriptionResult> {
  return cancelSubscription(deps.db, id, { ...o, clock: deps.clock, checkoutBaseUrl: deps.checkoutBaseUrl });
}
