export { paymentEventObject, PAYMENT_EVENT_TYPE, type PaymentEventType, type PaymentOutcome, type PaymentEventSession } from './payment.js';
export { refundEventObject, REFUND_EVENT_TYPE, type RefundEventInput, type RefundEventType } from './refund.js';
export {
  subscriptionEventObject,
  SUBSCRIPTION_EVENT_TYPES,
  SUBSCRIPTION_STATUS_EVENT,
  type SubscriptionEventInput,
  type SubscriptionEventType,
} from './subscription.js';
export { invoiceEventObject, INVOICE_EVENT_TYPES, type InvoiceEventInput, type InvoiceEventType } from './invoice.js';
export { EVENT_OBJECT_SCHEMAS, WEBHOOK_EVENT_TYPES, validateEventEnvelope, type WebhookEventType } from './catalog.js';
