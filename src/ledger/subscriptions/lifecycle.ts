import type { Kysely, Transaction } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database, Mode } from '../../db/schema.js';
import { newId } from '../../domain/ids.js';
import { stablecoinMinorToBase } from '../../domain/money.js';
import type { TokenDecimals } from '../../domain/chain-lookup.js';
import type { NetworkId, TokenSymbol } from '../../../chains/vocabulary.js';
import type { Clock } from '../../domain/clock.js';
import { nextBoundaryAfter } from '../../domain/subscription-periods.js';
import type { SubscriptionSettings } from '../../domain/subscription-settings.js';
import { insertInvoiceEvent } from './invoices.js';
import {
  SUBSCRIPTION_TRANSITIONS,
  cancelNow,
  insertSubscriptionEvent,
  type CancellationReason,
  type SubscriptionRow,
} from './subscriptions.js';

// Life-cycle transitions of subscriptions: authorization, and the scheduler's due actions (expire, renew, retry,
// cancel). Each runs in one transaction holding the subscription's row lock and writes its events there.

export interface LifecycleDeps {
  db: Db;
  clock: Clock;
  settings: SubscriptionSettings;
  checkoutBaseUrl: string;
  /** Where charges of a merchant go on a chain: the charger (spender, pays gas) and the settlement address. */
  /** `via`: the caller's transaction (lookups inside a transaction must not need a second pool connection). */
  wallets(merchantId: string, mode: Mode, network: string, via?: Kysely<Database>): Promise<{ charger: string; settlement: string }>;
  tokenDecimals: TokenDecimals;
}

/** The customer picked network, token and wallet on the authorization page: the approval we now wait for. */
export async function recordAuthorizationChoice(
  db: Db,
  subscriptionId: string,
  c: { network: NetworkId; token: TokenSymbol; owner: string; allowanceBase: bigint; at: Date },
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('subscriptions')
    .set({
      auth_network: c.network,
      auth_token: c.token,
      auth_owner: c.owner,
      auth_allowance_base: c.allowanceBase,
      auth_requested_at: c.at,
      updated_at: c.at,
    })
    .where('id', '=', subscriptionId)
    .where('status', 'in', SUBSCRIPTION_TRANSITIONS.authorize)
    .returningAll()
    .executeTakeFirst();
}

export interface ApprovalObservation {
  network: NetworkId;
  mode: Mode;
  token: TokenSymbol;
  owner: string;
  spender: string;
  value: bigint;
  txHash: string;
  logIndex: number;
}

export type ApplyApprovalResult = 'authorized' | 'too_small' | 'no_match' | 'duplicate';

/**
 * An Approval to the charger of `subscriptionId`'s merchant from the wallet the customer connected. Creates the payment
 * method and moves the subscription on: trialing until trial_end, or due for its first charge now.
 */
export async function applyApproval(deps: LifecycleDeps, subscriptionId: string, a: ApprovalObservation): Promise<ApplyApprovalResult> {
  return deps.db.transaction().execute(async (trx) => {
    const sub = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('id', '=', subscriptionId)
      .where('status', 'in', SUBSCRIPTION_TRANSITIONS.authorize)
      .where('auth_requested_at', 'is not', null)
      .where('auth_network', '=', a.network)
      .where('mode', '=', a.mode)
      .where('auth_token', '=', a.token)
      .where('auth_owner', '=', a.owner)
      .forUpdate()
      .executeTakeFirst();
    if (!sub) return 'no_match';
    if (a.value < (sub.auth_allowance_base ?? 0n)) return 'too_small';
    const now = deps.clock.now();
    const pm = await trx
      .insertInto('payment_methods')
      .values({
        id: newId('pm'),
        merchant_id: sub.merchant_id,
        mode: sub.mode,
        customer: sub.customer,
        network: a.network,
        token: a.token,
        owner_address: a.owner,
        spender_address: a.spender,
        allowance_base: a.value,
        approval_tx_hash: a.txHash,
        approval_log_index: a.logIndex,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.constraint('payment_methods_approval_uq').doNothing())
      .returning('id')
      .executeTakeFirst();
    if (!pm) return 'duplicate';
    if (sub.status !== 'incomplete') {
      // A new authorization of a live subscription (re-authorization from the page): the new payment method takes
      // over; a past_due subscription retries its open invoice now instead of at the next scheduled retry.
      const retryNow = sub.status === 'past_due' && sub.next_action === 'retry';
      const updated = await trx
        .updateTable('subscriptions')
        .set({ payment_method_id: pm.id, auth_requested_at: null, updated_at: now, ...(retryNow ? { next_action_at: now } : {}) })
        .where('id', '=', sub.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      await insertSubscriptionEvent(trx, updated, 'subscription.updated', deps.checkoutBaseUrl, now);
      return 'authorized';
    }
    const trial = sub.trial_end !== null && sub.trial_end.getTime() > now.getTime();
    const updated = await trx
      .updateTable('subscriptions')
      .set({
        payment_method_id: pm.id,
        auth_requested_at: null,
        updated_at: now,
        ...(trial
          ? {
              status: 'trialing' as const,
              current_period_start: now,
              current_period_end: sub.trial_end,
              next_action: 'renew' as const,
              next_action_at: sub.trial_end,
            }
          : { next_action: 'renew' as const, next_action_at: now }),
      })
      .where('id', '=', sub.id)
      .where('status', 'in', trial ? SUBSCRIPTION_TRANSITIONS.authorizeToTrial : SUBSCRIPTION_TRANSITIONS.authorizeToCharge)
      .returningAll()
      .executeTakeFirstOrThrow();
    await insertSubscriptionEvent(trx, updated, trial ? 'subscription.trialing' : 'subscription.updated', deps.checkoutBaseUrl, now);
    return 'authorized';
  });
}

export type AllowanceChange = Omit<ApprovalObservation, 'logIndex'>;

/**
 * An Approval from a customer whose payment method names that (owner, token, spender), sent by the customer (not one
 * of our charges), or a replaced Solana delegation (value 0): to 0, the payment method is `revoked`; to a positive
 * value, its allowance is updated and a revoked one is `active` again, and a past_due subscription using it retries
 * its open invoice now. Each subscription whose payment method changed status gets `subscription.updated`. Returns
 * the payment methods changed.
 */
export async function applyAllowanceChange(deps: LifecycleDeps, c: AllowanceChange): Promise<number> {
  return deps.db.transaction().execute(async (trx) => {
    const own = await trx.selectFrom('subscription_charge_attempts').select('id').where('tx_hash', '=', c.txHash).executeTakeFirst();
    if (own) return 0; // our own transferFrom spending the allowance (some tokens log the remaining allowance)
    const now = deps.clock.now();
    const revoke = c.value === 0n;
    const pms = await trx
      .selectFrom('payment_methods')
      .select(['id', 'status', 'allowance_base'])
      .where('network', '=', c.network)
      .where('mode', '=', c.mode)
      .where('owner_address', '=', c.owner)
      .where('token', '=', c.token)
      .where('spender_address', '=', c.spender)
      .forUpdate()
      .execute();
    const changed = pms.filter((p) => (revoke ? p.status !== 'revoked' : p.status !== 'active' || p.allowance_base !== c.value));
    if (changed.length === 0) return 0;
    await trx
      .updateTable('payment_methods')
      .set(
        revoke
          ? { status: 'revoked', revoked_at: now, allowance_base: 0n, updated_at: now }
          : { status: 'active', revoked_at: null, allowance_base: c.value, updated_at: now },
      )
      .where(
        'id',
        'in',
        changed.map((p) => p.id),
      )
      .execute();
    // Subscriptions hear of a change of status (revoked, or active again) by subscription.updated; a past_due one
    // retries its open invoice now when the allowance grew (the customer approved again after it ran out).
    const flipped = new Set(changed.filter((p) => p.status !== (revoke ? 'revoked' : 'active')).map((p) => p.id));
    const grew = new Set(changed.filter((p) => !revoke && (p.status === 'revoked' || c.value > p.allowance_base)).map((p) => p.id));
    const subs = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where(
        'payment_method_id',
        'in',
        changed.map((p) => p.id),
      )
      .where('status', 'in', ['trialing', 'active', 'past_due'])
      .forUpdate()
      .execute();
    for (const sub of subs) {
      const retryNow = grew.has(sub.payment_method_id!) && sub.status === 'past_due' && sub.next_action === 'retry';
      const statusChanged = flipped.has(sub.payment_method_id!);
      if (!retryNow && !statusChanged) continue;
      const updated = await trx
        .updateTable('subscriptions')
        .set({ updated_at: now, ...(retryNow ? { next_action_at: now } : {}) })
        .where('id', '=', sub.id)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (statusChanged) await insertSubscriptionEvent(trx, updated, 'subscription.updated', deps.checkoutBaseUrl, now);
    }
    return changed.length;
  });
}

export type DueOutcome = { kind: 'none' } | { kind: 'processed'; subscriptionId: string; action: string; chargeId?: bigint };

/**
 * Claims one due subscription (FOR UPDATE SKIP LOCKED: concurrent schedulers take different rows) and performs its
 * action in the same transaction. `next_action_at` is cleared or moved forward by every action, so a row is never
 * claimed twice for the same action; invoices are unique per (subscription, period) on top of that.
 */
export async function processOneDue(deps: LifecycleDeps): Promise<DueOutcome> {
  const now = deps.clock.now();
  return deps.db.transaction().execute(async (trx) => {
    const sub = await trx
      .selectFrom('subscriptions')
      .selectAll()
      .where('next_action_at', '<=', now)
      .orderBy('next_action_at')
      .limit(1)
      .forUpdate()
      .skipLocked()
      .executeTakeFirst();
    if (!sub) return { kind: 'none' };
    const action = sub.next_action;
    switch (action) {
      case 'expire': {
        const expired = await trx
          .updateTable('subscriptions')
          .set({ status: 'incomplete_expired', next_action: null, next_action_at: null, updated_at: now })
          .where('id', '=', sub.id)
          .where('status', 'in', SUBSCRIPTION_TRANSITIONS.expireIncomplete)
          .returningAll()
          .executeTakeFirst();
        if (expired) await insertSubscriptionEvent(trx, expired, 'subscription.incomplete_expired', deps.checkoutBaseUrl, now);
        else await clearAction(trx, sub.id);
        return { kind: 'processed', subscriptionId: sub.id, action };
      }
      case 'cancel':
        await cancelNow(trx, sub, {
          reason: sub.cancellation_reason as CancellationReason | null,
          comment: null,
          at: sub.cancel_at ?? sub.current_period_end ?? now,
          checkoutBaseUrl: deps.checkoutBaseUrl,
        });
        return { kind: 'processed', subscriptionId: sub.id, action };
      case 'renew':
        return { kind: 'processed', subscriptionId: sub.id, action, ...(await renew(deps, trx, sub, now)) };
      case 'retry':
        return { kind: 'processed', subscriptionId: sub.id, action, ...(await retry(deps, trx, sub)) };
      case null:
        await clearAction(trx, sub.id);
        return { kind: 'processed', subscriptionId: sub.id, action: 'none' };
      default: {
        const never: never = action;
        return never;
      }
    }
  });
}

async function clearAction(trx: Transaction<Database>, id: string): Promise<void> {
  await trx.updateTable('subscriptions').set({ next_action: null, next_action_at: null }).where('id', '=', id).execute();
}

/** The period after the current one: invoice it (invoice.created) and queue its charge. */
async function renew(deps: LifecycleDeps, trx: Transaction<Database>, sub: SubscriptionRow, now: Date): Promise<{ chargeId?: bigint }> {
  const start = sub.current_period_end ?? now;
  const ends =
    sub.cancel_at_period_end ||
    (sub.iterations !== null && sub.paid_periods >= sub.iterations) ||
    (sub.cancel_at !== null && sub.cancel_at.getTime() <= start.getTime());
  if (ends && sub.status !== 'incomplete') {
    await cancelNow(trx, sub, {
      reason: sub.cancellation_reason as CancellationReason | null,
      comment: null,
      at: sub.cancel_at ?? start,
      checkoutBaseUrl: deps.checkoutBaseUrl,
    });
    return {};
  }
  const anchor = sub.billing_cycle_anchor ?? start;
  const end = anchor.getTime() > start.getTime() ? anchor : nextBoundaryAfter(anchor, sub.interval, start);
  const periodNumber = sub.period_number + 1;
  const invoice = await trx
    .insertInto('invoices')
    .values({
      id: newId('in'),
      merchant_id: sub.merchant_id,
      mode: sub.mode,
      subscription_id: sub.id,
      customer: sub.customer,
      period_number: periodNumber,
      amount_due_minor: sub.unit_amount_minor * BigInt(sub.quantity),
      currency: sub.currency,
      billing_reason: sub.paid_periods === 0 && sub.trial_end === null ? 'subscription_create' : 'subscription_cycle',
      period_start: start,
      period_end: end,
      due_date: start,
      metadata: JSON.stringify(sub.metadata),
      created_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .updateTable('subscriptions')
    .set({
      billing_cycle_anchor: anchor,
      period_number: periodNumber,
      current_period_start: start,
      current_period_end: end,
      latest_invoice_id: invoice.id,
      next_action: null,
      next_action_at: null,
      updated_at: now,
    })
    .where('id', '=', sub.id)
    .execute();
  await insertInvoiceEvent(trx, invoice, 'invoice.created', now);
  return { chargeId: await insertCharge(deps, trx, sub, invoice.id, invoice.amount_due_minor) };
}

async function retry(deps: LifecycleDeps, trx: Transaction<Database>, sub: SubscriptionRow): Promise<{ chargeId?: bigint }> {
  const invoice = sub.latest_invoice_id
    ? await trx.selectFrom('invoices').selectAll().where('id', '=', sub.latest_invoice_id).where('status', '=', 'open').executeTakeFirst()
    : undefined;
  await clearAction(trx, sub.id);
  if (!invoice) return {};
  // A charge of this invoice still in flight (a retry brought forward by a re-authorization): it settles the invoice.
  const live = await trx
    .selectFrom('subscription_charges')
    .select('id')
    .where('invoice_id', '=', invoice.id)
    .where('state', '<>', 'failed')
    .executeTakeFirst();
  if (live) return {};
  return { chargeId: await insertCharge(deps, trx, sub, invoice.id, invoice.amount_due_minor) };
}

async function insertCharge(
  deps: LifecycleDeps,
  trx: Transaction<Database>,
  sub: SubscriptionRow,
  invoiceId: string,
  amountMinor: bigint,
): Promise<bigint> {
  const pm = await trx.selectFrom('payment_methods').selectAll().where('id', '=', sub.payment_method_id!).executeTakeFirstOrThrow();
  const decimals = deps.tokenDecimals(pm.network, pm.mode, pm.token);
  if (decimals === undefined) throw new Error(`${pm.network} ${pm.token} is not configured; cannot charge ${sub.id}`);
  const w = await deps.wallets(sub.merchant_id, sub.mode, pm.network, trx);
  // The partial unique index (one live or succeeded charge per invoice) rejects a second charge of this period.
  const row = await trx
    .insertInto('subscription_charges')
    .values({
      invoice_id: invoiceId,
      subscription_id: sub.id,
      merchant_id: sub.merchant_id,
      mode: sub.mode,
      network: pm.network,
      token: pm.token,
      owner_address: pm.owner_address,
      charger_address: w.charger,
      destination_address: w.settlement,
      amount_base: stablecoinMinorToBase(amountMinor, decimals),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Earliest next action after a paid period: the end of the subscription, or the next renewal. */
export function nextAfterPaid(sub: SubscriptionRow, paidPeriods: number): { next_action: 'renew' | 'cancel'; next_action_at: Date } {
  const end = sub.current_period_end!;
  if (sub.cancel_at !== null && sub.cancel_at.getTime() <= end.getTime()) return { next_action: 'cancel', next_action_at: sub.cancel_at };
  if (sub.cancel_at_period_end || (sub.iterations !== null && paidPeriods >= sub.iterations))
    return { next_action: 'cancel', next_action_at: end };
  return { next_action: 'renew', next_action_at: end };
}
