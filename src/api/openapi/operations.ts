import type { z } from 'zod';
import { refundCancellationSchema, refundSchema } from '../serializers/refund.js';
import { sessionSchema } from '../serializers/session.js';
import { invoiceSchema } from '../serializers/invoice.js';
import { paymentSchema } from '../serializers/payment.js';
import { paymentMethodSchema } from '../serializers/payment-method.js';
import { subscriptionCancellationSchema, subscriptionSchema } from '../serializers/subscription.js';
import { createSessionSchema } from '../routes/session-input.js';
import { emptyBody, sessionListQuery } from '../routes/sessions.js';
import { createRefundBody, refundListQuery } from '../routes/refunds.js';
import { cancelSubscriptionBody, createSubscriptionBody, EXPANDABLE_FIELDS, subscriptionListQuery } from '../routes/subscriptions.js';
import { invoiceListQuery } from '../routes/invoices.js';
import { pageEnvelopeSchema } from '../routes/query.js';
import { listEnvelopeSchema } from '../routes/cursor-list.js';
import type { OperationId } from './error-catalog.js';

// Every signed operation of the API (src/api/routes/), with the zod schemas the route validates with and the zod
// schema of what its serializer answers. The OpenAPI document (document.ts) is generated from this table.

/** Response schemas by their name in `components.schemas`. */
export const RESPONSE_SCHEMAS = {
  PaymentSession: sessionSchema,
  PaymentSessionPage: pageEnvelopeSchema(sessionSchema),
  Refund: refundSchema,
  RefundCancellation: refundCancellationSchema,
  RefundPage: pageEnvelopeSchema(refundSchema),
  Subscription: subscriptionSchema,
  SubscriptionCancellation: subscriptionCancellationSchema,
  SubscriptionList: listEnvelopeSchema(subscriptionSchema),
  Invoice: invoiceSchema,
  InvoiceList: listEnvelopeSchema(invoiceSchema),
  Payment: paymentSchema,
  PaymentMethod: paymentMethodSchema,
} as const;

/** Request body schemas by their name in `components.schemas` (converted as the route's input). */
export const REQUEST_SCHEMAS = {
  CreateSessionRequest: createSessionSchema,
  CreateRefundRequest: createRefundBody,
  CreateSubscriptionRequest: createSubscriptionBody,
  CancelSubscriptionRequest: cancelSubscriptionBody,
  EmptyRequest: emptyBody,
} as const;

export interface QueryParameter {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

export interface OperationSpec {
  id: OperationId;
  method: 'get' | 'post';
  /** Relative to the servers /api/v1 and /v1. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  pathParam?: { name: string; description: string; pattern?: string };
  query?: z.ZodObject<z.ZodRawShape>;
  extraQuery?: QueryParameter[];
  body?: { schema: keyof typeof REQUEST_SCHEMAS; required: boolean };
  /** Takes the optional Idempotency-Key header. */
  idempotencyKey?: boolean;
  success: { status: number; schema: keyof typeof RESPONSE_SCHEMAS; description: string };
  /** A success body that is not one JSON object of RESPONSE_SCHEMAS (an export's CSV or JSON array): its content map. */
  successContent?: Record<string, { schema: Record<string, unknown> }>;
}

const ID = '^[A-Za-z0-9_]{1,255}$';

/** The description of a cancel that takes an Idempotency-Key (an extension, docs/errors.md "Retrying safely"). */
const retryableCancel = (other: string) =>
  `With an Idempotency-Key (an extension), a retry with the same key gets the first answer again (header \`Idempotent-Replayed: true\`) where without one it would be refused as already canceled; the key with another ${other} is 409.`;

export const OPERATIONS: readonly OperationSpec[] = [
  {
    id: 'createSession',
    method: 'post',
    path: '/checkout/sessions/create',
    tag: 'Payment sessions',
    summary: 'Create a payment session',
    description:
      "Locks the exchange rate for the session's life. `metadata.network` pins a network and `metadata.target_currency` the coin (extensions). With an Idempotency-Key, a retry with the same body replays the first answer (header `Idempotent-Replayed: true`).",
    body: { schema: 'CreateSessionRequest', required: true },
    idempotencyKey: true,
    success: { status: 200, schema: 'PaymentSession', description: 'The new session.' },
  },
  {
    id: 'listSessions',
    method: 'get',
    path: '/checkout/sessions',
    tag: 'Payment sessions',
    summary: 'List payment sessions (page style)',
    query: sessionListQuery,
    success: { status: 200, schema: 'PaymentSessionPage', description: 'One page of sessions, newest first.' },
  },
  {
    id: 'getSession',
    method: 'get',
    path: '/checkout/sessions/{session_id}',
    tag: 'Payment sessions',
    summary: 'Retrieve a payment session',
    pathParam: { name: 'session_id', description: 'The cs_ id.', pattern: ID },
    success: { status: 200, schema: 'PaymentSession', description: 'The session.' },
  },
  {
    id: 'cancelSession',
    method: 'post',
    path: '/checkout/sessions/{session_id}/cancel',
    tag: 'Payment sessions',
    summary: 'Cancel an open payment session',
    description: retryableCancel('session'),
    pathParam: { name: 'session_id', description: 'The cs_ id.', pattern: ID },
    body: { schema: 'EmptyRequest', required: false },
    idempotencyKey: true,
    success: { status: 200, schema: 'PaymentSession', description: 'The canceled session (without line_items).' },
  },
  {
    id: 'createRefund',
    method: 'post',
    path: '/refunds/create',
    tag: 'Refunds',
    summary: 'Refund a paid session or subscription payment',
    description:
      'Give `session_id` (payment-session flow) or `payment_id` (subscription flow). `refund_id` is the idempotency key: the same refund_id with the same body replays the refund (`Idempotent-Replayed: true`), with another body it is 409.',
    body: { schema: 'CreateRefundRequest', required: true },
    success: { status: 201, schema: 'Refund', description: 'The refund (new or replayed).' },
  },
  {
    id: 'listRefunds',
    method: 'get',
    path: '/refunds',
    tag: 'Refunds',
    summary: 'List refunds (page style)',
    query: refundListQuery,
    success: { status: 200, schema: 'RefundPage', description: 'One page of refunds, newest first.' },
  },
  {
    id: 'getRefund',
    method: 'get',
    path: '/refunds/{refund_id}',
    tag: 'Refunds',
    summary: 'Retrieve a refund',
    pathParam: { name: 'refund_id', description: 'Your refund_id or our re_ id.' },
    success: { status: 200, schema: 'Refund', description: 'The refund.' },
  },
  {
    id: 'cancelRefund',
    method: 'post',
    path: '/refunds/{refund_id}/cancel',
    tag: 'Refunds',
    summary: 'Cancel a refund whose payout is not signed yet',
    description: retryableCancel('refund'),
    pathParam: { name: 'refund_id', description: 'Your refund_id or our re_ id.' },
    body: { schema: 'EmptyRequest', required: false },
    idempotencyKey: true,
    success: { status: 200, schema: 'RefundCancellation', description: 'The refund, now canceled.' },
  },
  {
    id: 'createSubscription',
    method: 'post',
    path: '/subscriptions/create',
    tag: 'Subscriptions',
    summary: 'Create a subscription',
    body: { schema: 'CreateSubscriptionRequest', required: true },
    idempotencyKey: true,
    success: { status: 200, schema: 'Subscription', description: 'The new subscription (status incomplete until authorized).' },
  },
  {
    id: 'listSubscriptions',
    method: 'get',
    path: '/subscriptions',
    tag: 'Subscriptions',
    summary: 'List subscriptions (cursor style)',
    query: subscriptionListQuery,
    success: { status: 200, schema: 'SubscriptionList', description: 'Subscriptions, newest first.' },
  },
  {
    id: 'getSubscription',
    method: 'get',
    path: '/subscriptions/{subscription_id}',
    tag: 'Subscriptions',
    summary: 'Retrieve a subscription',
    pathParam: { name: 'subscription_id', description: 'The sub_ id.', pattern: ID },
    extraQuery: [
      {
        name: 'expand',
        description: `Comma-separated (or repeated, or \`expand[]\`) list of ${EXPANDABLE_FIELDS.join(', ')}.`,
        schema: { type: 'string' },
      },
    ],
    success: { status: 200, schema: 'Subscription', description: 'The subscription.' },
  },
  {
    id: 'cancelSubscription',
    method: 'post',
    path: '/subscriptions/{subscription_id}/cancel',
    tag: 'Subscriptions',
    summary: 'Cancel a subscription now or at the end of its period',
    description: retryableCancel('subscription or body'),
    pathParam: { name: 'subscription_id', description: 'The sub_ id.', pattern: ID },
    body: { schema: 'CancelSubscriptionRequest', required: false },
    idempotencyKey: true,
    success: { status: 200, schema: 'SubscriptionCancellation', description: 'The subscription after the cancel.' },
  },
  {
    id: 'listInvoices',
    method: 'get',
    path: '/invoices',
    tag: 'Invoices',
    summary: 'List invoices (cursor style)',
    query: invoiceListQuery,
    success: { status: 200, schema: 'InvoiceList', description: 'Invoices, newest first.' },
  },
  {
    id: 'getInvoice',
    method: 'get',
    path: '/invoices/{invoice_id}',
    tag: 'Invoices',
    summary: 'Retrieve an invoice',
    pathParam: { name: 'invoice_id', description: 'The in_ id.', pattern: ID },
    success: { status: 200, schema: 'Invoice', description: 'The invoice.' },
  },
  {
    id: 'getPayment',
    method: 'get',
    path: '/payment/{payment_id}',
    tag: 'Payments',
    summary: 'Retrieve a subscription payment',
    pathParam: { name: 'payment_id', description: 'The pay_ id.' },
    success: { status: 200, schema: 'Payment', description: 'The payment behind one invoice.' },
  },
  {
    id: 'getPaymentMethod',
    method: 'get',
    path: '/payment_method/{payment_method_id}',
    tag: 'Payment methods',
    summary: 'Retrieve a payment method',
    pathParam: { name: 'payment_method_id', description: 'The pm_ id.' },
    success: { status: 200, schema: 'PaymentMethod', description: 'The payment method (the payer wallet, masked).' },
  },
  {
    id: 'exportRows',
    method: 'get',
    path: '/exports/{kind}',
    tag: 'Exports',
    summary: 'Extension: export a period of sessions, payments, refunds, invoices or charges (CSV or JSON), streamed',
    pathParam: { name: 'kind', description: 'sessions, payments, refunds, invoices or charges.', pattern: '^[a-z]{1,32}$' },
    extraQuery: [
      { name: 'since', description: 'Start of the period, Unix seconds (required).', schema: { type: 'string', pattern: '^\\d{1,11}$' } },
      { name: 'until', description: 'End of the period, Unix seconds (default now).', schema: { type: 'string', pattern: '^\\d{1,11}$' } },
      { name: 'format', description: 'csv (default) or json.', schema: { type: 'string', enum: ['csv', 'json'] } },
    ],
    success: { status: 200, schema: 'Refund', description: 'The rows of the period, oldest first (docs/operations.md "Exports").' },
    successContent: {
      'text/csv': { schema: { type: 'string' } },
      'application/json': { schema: { type: 'array', items: { type: 'object' } } },
    },
  },
];
