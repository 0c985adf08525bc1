import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { NETWORK_IDS, TOKEN_SYMBOLS, type NetworkId, type TokenSymbol } from '../../../chains/vocabulary.js';
import { serializeSession } from '../../api/serializers/session.js';
import { currencyExponent } from '../../domain/currency.js';
import { parameterInvalid } from '../../domain/errors.js';
import { InvalidAmountError, parseDecimalToMinor } from '../../domain/money.js';
import { reportingRead } from '../../operations/reporting.js';
import { refundAmountMinor } from '../../operations/refund-amount.js';
import { REFUND_REASONS } from '../../domain/refund-state.js';
import { cancelPayment, findPayment } from '../../operations/payments.js';
import { paymentDetail } from '../../operations/payments-detail.js';
import { listPayments } from '../../operations/payments-list.js';
import { refundPayment } from '../../operations/refunds.js';
import { refundView } from '../../operations/refunds-view.js';
import { assertOwns, merchantScope } from '../actor.js';
import {
  type PaymentCancelResult,
  type PaymentDetail,
  type PaymentList,
  paymentCancelResultSchema,
  paymentDetailSchema,
  paymentListSchema,
  paymentRefundResultSchema,
} from '../contract/payments.js';
import type { ConsoleRefund } from '../contract/refunds.js';
import type { ConsoleDeps } from '../deps.js';
import { consoleRoute } from '../route.js';
import { OPERATION_ERRORS } from '../../api/openapi/error-catalog.js';

// The console's payments (src/console/contract/payments.ts): the list, one session's page, and its refund and cancel
// with the public API's rules and errors.

const id = z.strictObject({ id: z.string().min(1).max(64) });
export const limitQuery = z.coerce.number().int().min(1).max(100).default(25);
export const isoQuery = z.iso.datetime({ offset: true }).transform((s) => new Date(s));
const decimalQuery = z.string().regex(/^\d{1,30}(\.\d{1,18})?$/, 'a decimal string such as 12.50');

const listQuery = z.strictObject({
  limit: limitQuery,
  cursor: z.string().min(1).max(200).optional(),
  sort: z.enum(['created_at', 'amount']).default('created_at'),
  order: z.enum(['asc', 'desc']).default('desc'),
  status: z.enum(['open', 'paid', 'expired', 'canceled']).optional(),
  network: z.enum(NETWORK_IDS as [NetworkId, ...NetworkId[]]).optional(),
  token: z.enum(TOKEN_SYMBOLS as [TokenSymbol, ...TokenSymbol[]]).optional(),
  mode: z.enum(['test', 'live']).optional(),
  merchant_id: z.string().min(1).max(64).optional(),
  currency: z
    .string()
    .regex(/^[A-Za-z]{3,4}$/)
    .optional(),
  created_from: isoQuery.optional(),
  created_to: isoQuery.optional(),
  amount_min: decimalQuery.optional(),
  amount_max: decimalQuery.optional(),
  q: z.string().min(1).max(200).optional(),
});

const refundBody = z.strictObject({
  amount: z.string().max(40).optional(),
  reason: z.enum(REFUND_REASONS).optional(),
  description: z.string().max(1000).optional(),
  refund_id: z.string().min(1).max(255).optional(),
});

/** A decimal amount of the session currency (or 2 decimals) in minor units; 400 parameter_invalid otherwise. */
function minorOf(text: string, exponent: number, param: string): bigint {
  try {
    return parseDecimalToMinor(text, exponent);
  } catch (e) {
    if (e instanceof InvalidAmountError) throw parameterInvalid(param, `${param}: ${e.message}.`);
    throw e;
  }
}

export function registerPaymentRoutes(app: FastifyInstance, deps: ConsoleDeps): void {
  const { ops } = deps;
  const render = (s: Parameters<typeof serializeSession>[0], includeLineItems = true) =>
    serializeSession(s, { checkoutBaseUrl: ops.checkoutBaseUrl, tokenDecimals: ops.chains.tokenDecimals, includeLineItems });

  consoleRoute(app, ops.db, {
    method: 'GET',
    url: '/payments',
    summary: 'Payment sessions, with filters, sorting and keyset pages',
    response: paymentListSchema,
    query: listQuery,
    handler: async ({ actor, query }): Promise<PaymentList> => {
      // amount_min/amount_max are in the session currency: at the exponent of `currency` when given, else 2 decimals.
      const exponent = query.currency ? (currencyExponent(query.currency) ?? 2) : 2;
      // A reporting read (docs/deploy.md "Read replica"): the replica when fresh enough, else the primary.
      return reportingRead(ops, (db) =>
        listPayments(
          { ...ops, db },
          {
            merchantId: merchantScope(actor, query.merchant_id),
            status: query.status,
            network: query.network,
            token: query.token,
            mode: query.mode,
            currency: query.currency,
            createdFrom: query.created_from,
            createdTo: query.created_to,
            amountMin: query.amount_min === undefined ? undefined : minorOf(query.amount_min, exponent, 'amount_min'),
            amountMax: query.amount_max === undefined ? undefined : minorOf(query.amount_max, exponent, 'amount_max'),
            q: query.q,
            sort: query.sort,
            order: query.order,
            limit: query.limit,
            cursor: query.cursor,
          },
        ),
      );
    },
  });

  consoleRoute(app, ops.db, {
    method: 'GET',
    url: '/payments/:id',
    summary: "One session's page: timeline, deposits, webhook deliveries, refunds",
    response: paymentDetailSchema,
    params: id,
    handler: async ({ actor, params }): Promise<PaymentDetail> => {
      const s = await findPayment(ops, params.id);
      assertOwns(actor, s.merchant_id);
      const parts = await paymentDetail(ops, s);
      return { session: render(s) as PaymentDetail['session'], merchant_id: s.merchant_id, mode: s.mode, ...parts };
    },
  });

  consoleRoute(app, ops.db, {
    method: 'POST',
    url: '/payments/:id/refund',
    summary: "Refund a paid session (the public API's rules)",
    response: paymentRefundResultSchema,
    status: [201, 200],
    errors: { 400: OPERATION_ERRORS.createRefund[400], 429: OPERATION_ERRORS.createRefund[429] },
    params: id,
    body: refundBody,
    handler: async ({ actor, params, body, reply, audit }): Promise<ConsoleRefund> => {
      const s = await findPayment(ops, params.id);
      assertOwns(actor, s.merchant_id);
      const amountMinor = refundAmountMinor(body.amount);
      const result = await refundPayment(ops, s, {
        amountMinor,
        reason: body.reason,
        description: body.description,
        refundId: body.refund_id,
        initiatedBy: `console:${actor.role}`,
      });
      const view = refundView(result.refund, ops.chains);
      if (result.kind === 'created') {
        await audit({
          action: 'refund.create',
          objectType: 'refund',
          objectId: result.refund.id,
          merchantId: s.merchant_id,
          after: { session_id: s.id, refund_id: view.refund_id, amount: view.amount, token: view.token, status: view.status },
        });
      } else {
        await audit({
          action: 'refund.create',
          objectType: 'refund',
          objectId: result.refund.id,
          merchantId: s.merchant_id,
          detail: 'replayed',
        });
      }
      reply.code(result.kind === 'created' ? 201 : 200);
      return view;
    },
  });

  consoleRoute(app, ops.db, {
    method: 'POST',
    url: '/payments/:id/cancel',
    summary: 'Cancel an open session',
    response: paymentCancelResultSchema,
    errors: { 400: ['INVALID_SESSION_STATUS', 'session_expired'] },
    params: id,
    handler: async ({ actor, params, audit }): Promise<PaymentCancelResult> => {
      const s = await findPayment(ops, params.id);
      assertOwns(actor, s.merchant_id);
      const canceled = await cancelPayment(ops, s);
      await audit({
        action: 'session.cancel',
        objectType: 'payment_session',
        objectId: s.id,
        merchantId: s.merchant_id,
        before: { status: s.status },
        after: { status: canceled.status },
      });
      return { session: render(canceled, false) as PaymentCancelResult['session'] };
    },
  });
}
