import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { serializeSubscription } from '../../api/serializers/subscription.js';
import { invalidRequest, parameterInvalid, resourceNotFound } from '../../domain/errors.js';
import { currencyExponent } from '../../domain/currency.js';
import { formatBaseUnits, formatMinor } from '../../domain/money.js';
import { CANCELLATION_REASONS, type SubscriptionRow } from '../../ledger/subscriptions/subscriptions.js';
import {
  cancelSubscriptionFor,
  findSubscriptionById,
  listSubscriptionPage,
  resolveHold,
  subscriptionDetail,
  type SubscriptionsDeps,
} from '../../operations/subscriptions.js';
import { assertOwns, merchantScope } from '../actor.js';
import {
  CONSOLE_SUBSCRIPTION_STATUSES,
  SUBSCRIPTION_RESOLVE_ACTIONS,
  type SubscriptionDetail,
  type SubscriptionHoldView,
  type SubscriptionList,
  type SubscriptionRowView,
  subscriptionDetailSchema,
  subscriptionListSchema,
} from '../contract/subscriptions.js';
import { reportingRead } from '../../operations/reporting.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { iso, keysetOf, listQueryShape } from './keyset-query.js';

// The console's subscriptions: the list, one subscription with its invoices, charges (state, transaction, dunning)
// and payment methods; the merchant's cancel (the API's rules); the operator's resolution of a hold (the CLI's
// `subscriptions resolve`).

const idParam = z.strictObject({ id: z.string().regex(/^[A-Za-z0-9_]{1,255}$/) });
const money = (minor: bigint, currency: string) => formatMinor(minor, currencyExponent(currency) ?? 2);

const holdOf = (s: SubscriptionRow): SubscriptionHoldView | null =>
  s.hold_reason !== null && s.held_at !== null
    ? {
        reason: s.hold_reason,
        charge_id: s.hold_charge_id === null ? null : String(s.hold_charge_id),
        transaction_hash: s.hold_tx_hash,
        since: s.held_at.toISOString(),
      }
    : null;

const rowOf = (s: SubscriptionRow): SubscriptionRowView => ({
  id: s.id,
  merchant_id: s.merchant_id,
  mode: s.mode,
  customer: s.customer,
  customer_email: s.customer_email,
  status: s.status,
  product: s.product,
  amount: money(s.unit_amount_minor * BigInt(s.quantity), s.currency),
  currency: s.currency,
  interval: s.interval,
  current_period_end: iso(s.current_period_end),
  next_action: s.next_action,
  next_action_at: iso(s.next_action_at),
  cancel_at: iso(s.cancel_at),
  hold: holdOf(s),
  created_at: s.created_at.toISOString(),
});

export async function registerSubscriptionRoutes(app: FastifyInstance, deps: ConsoleDeps): Promise<void> {
  const { db, chains, clock, checkoutBaseUrl } = deps.ops;
  const subs: SubscriptionsDeps = { db, clock, checkoutBaseUrl };

  async function detail(id: string): Promise<SubscriptionDetail> {
    const d = await subscriptionDetail(db, id);
    if (!d) throw resourceNotFound('id', 'subscription');
    const s = d.subscription;
    const tokenAmount = (network: string, token: string, base: bigint) => {
      const decimals = chains.tokenDecimals(network, s.mode, token);
      return decimals === undefined ? null : formatBaseUnits(base, decimals);
    };
    return {
      subscription: serializeSubscription(s, checkoutBaseUrl) as SubscriptionDetail['subscription'],
      merchant_id: s.merchant_id,
      mode: s.mode,
      next_action: s.next_action,
      next_action_at: iso(s.next_action_at),
      invoices: d.invoices.map((i) => ({
        id: i.id,
        period_number: i.period_number,
        status: i.status,
        payment_status: i.payment_status,
        billing_reason: i.billing_reason,
        amount_due: money(i.amount_due_minor, i.currency),
        amount_paid: money(i.amount_paid_minor, i.currency),
        currency: i.currency,
        period_start: i.period_start.toISOString(),
        period_end: i.period_end.toISOString(),
        due_date: i.due_date.toISOString(),
        paid_at: iso(i.paid_at),
        attempt_count: i.attempt_count,
        first_failed_at: iso(i.first_failed_at),
        created_at: i.created_at.toISOString(),
      })),
      charges: d.charges.map((c) => ({
        id: String(c.id),
        invoice_id: c.invoice_id,
        network: c.network,
        token: c.token,
        amount: tokenAmount(c.network, c.token, BigInt(c.amount_base)),
        amount_base: BigInt(c.amount_base).toString(),
        state: c.state,
        failure_reason: c.failure_reason,
        transaction_hash: c.tx_hash,
        explorer_url: c.tx_hash ? chains.explorerTxUrl(c.network, s.mode, c.tx_hash) : null,
        created_at: c.created_at.toISOString(),
        settled_at: iso(c.settled_at),
      })),
      payment_methods: d.paymentMethods.map((p) => ({
        id: p.id,
        status: p.status,
        network: p.network,
        token: p.token,
        owner_address: p.owner_address,
        spender_address: p.spender_address,
        allowance: tokenAmount(p.network, p.token, BigInt(p.allowance_base)),
        allowance_base: BigInt(p.allowance_base).toString(),
        approval_transaction_hash: p.approval_tx_hash,
        created_at: p.created_at.toISOString(),
        revoked_at: iso(p.revoked_at),
      })),
      hold: holdOf(s),
    };
  }

  async function owned(actor: Parameters<typeof assertOwns>[0], id: string): Promise<SubscriptionRow> {
    const s = await findSubscriptionById(db, id);
    if (!s) throw resourceNotFound('id', 'subscription');
    assertOwns(actor, s.merchant_id);
    return s;
  }

  const summary = (s: SubscriptionRow) => ({
    status: s.status,
    cancel_at: iso(s.cancel_at),
    canceled_at: iso(s.canceled_at),
    hold_reason: s.hold_reason,
    next_action: s.next_action,
  });

  consoleRoute(app, db, {
    method: 'GET',
    url: '/subscriptions',
    summary: 'Subscriptions',
    response: subscriptionListSchema,
    query: z.strictObject({
      ...listQueryShape,
      status: z.enum(CONSOLE_SUBSCRIPTION_STATUSES).optional(),
      merchant_id: z.string().optional(),
      mode: z.enum(['test', 'live']).optional(),
      held: z.enum(['true', 'false']).optional(),
    }),
    async handler({ actor, query }): Promise<SubscriptionList> {
      const merchantId = merchantScope(actor, query.merchant_id);
      const page = await reportingRead(deps.ops, (reads) =>
        listSubscriptionPage(reads, { merchantId, mode: query.mode, status: query.status, held: query.held === 'true' }, keysetOf(query)),
      );
      return { data: page.rows.map(rowOf), next_cursor: page.nextCursor };
    },
  });

  consoleRoute(app, db, {
    method: 'GET',
    url: '/subscriptions/:id',
    summary: 'One subscription: invoices, charges, payment methods, dunning',
    response: subscriptionDetailSchema,
    params: idParam,
    async handler({ actor, params }): Promise<SubscriptionDetail> {
      await owned(actor, params.id);
      return detail(params.id);
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/subscriptions/:id/cancel',
    summary: 'Cancel a subscription',
    response: subscriptionDetailSchema,
    errors: { 400: ['subscription_not_cancelable'] },
    params: idParam,
    body: z.strictObject({
      at_period_end: z.boolean().optional(),
      reason: z.enum(CANCELLATION_REASONS).optional(),
      comment: z.string().max(500).optional(),
    }),
    async handler({ actor, params, body, audit }): Promise<SubscriptionDetail> {
      const before = await owned(actor, params.id);
      const r = await cancelSubscriptionFor(subs, params.id, {
        atPeriodEnd: body.at_period_end ?? false,
        reason: body.reason ?? null,
        comment: body.comment ?? null,
      });
      if (r.kind === 'not_cancelable')
        throw invalidRequest('subscription_not_cancelable', `A subscription in status ${r.subscription.status} cannot be canceled.`, 'id');
      if (r.kind === 'no_period')
        throw parameterInvalid('at_period_end', 'This subscription has no current period yet; cancel it now instead.');
      await audit({
        action: 'subscription.cancel',
        objectType: 'subscription',
        objectId: params.id,
        merchantId: before.merchant_id,
        before: summary(before),
        after: { ...summary(r.subscription), at_period_end: body.at_period_end ?? false },
      });
      return detail(params.id);
    },
  });

  consoleRoute(app, db, {
    method: 'POST',
    url: '/subscriptions/:id/resolve',
    summary: 'Resolve the hold of a subscription',
    response: subscriptionDetailSchema,
    errors: { 400: ['subscription_not_held'] },
    role: 'operator',
    params: idParam,
    body: z.strictObject({ action: z.enum(SUBSCRIPTION_RESOLVE_ACTIONS) }),
    async handler({ params, body, audit }): Promise<SubscriptionDetail> {
      const before = await findSubscriptionById(db, params.id);
      const r = await resolveHold(subs, params.id, body.action);
      if (r.kind === 'not_found') throw resourceNotFound('id', 'subscription');
      if (r.kind === 'not_held') throw invalidRequest('subscription_not_held', `This subscription is not held (status ${r.status}).`, 'id');
      await audit({
        action: 'subscription.resolve',
        objectType: 'subscription',
        objectId: params.id,
        merchantId: r.subscription.merchant_id,
        before: before ? { ...summary(before), hold: holdOf(before) } : null,
        after: { resolution: body.action, ...summary(r.subscription) },
      });
      return detail(params.id);
    },
  });
}
