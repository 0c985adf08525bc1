export { StablepayClient, type ClientOptions } from './client.js';
export { StablepayConnectionError, StablepayError, WebhookVerificationError } from './errors.js';
export { signature, signedHeaders } from './sign.js';
export { verifyWebhook, type HeaderBag, type VerifyOptions } from './webhooks.js';
export type * from './types.js';
