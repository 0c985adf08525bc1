import { z } from 'zod';
import { EVENT_OBJECT_SCHEMAS, eventEnvelopeSchema, WEBHOOK_EVENT_TYPES } from '../../domain/events/catalog.js';
import { errorBodySchema } from '../errors.js';
import {
  componentSchemas,
  errorResponses,
  type Json,
  jsonContent,
  objectParameters,
  REQUEST_ID,
  ref,
  servedDocument,
  type ServedDocument,
} from './schema-helpers.js';
import { errorCodesOf, OPERATION_ERRORS, PUBLIC_COMMON, SIGNED_COMMON, type ErrorCodesByStatus } from './error-catalog.js';
import { OPERATIONS, REQUEST_SCHEMAS, RESPONSE_SCHEMAS, type OperationSpec } from './operations.js';

// The OpenAPI 3.1 document of the API (docs/openapi.md), generated from the zod schemas the routes validate with and
// the serializers declare: a change to a route's schema changes the document, and the test client checks every
// response it receives against this document.

export const API_SERVERS = [
  { url: '/api/v1', description: 'The signed API.' },
  { url: '/v1', description: 'Alias of /api/v1.' },
];
const ROOT_SERVER = [{ url: '/', description: 'Public endpoints, outside the signed API.' }];

const healthSchema = z.strictObject({ status: z.literal('ok') });
const readinessSchema = z.strictObject({
  status: z.enum(['ready', 'unavailable']),
  checks: z.strictObject({ postgres: z.enum(['ok', 'unreachable']), redis: z.enum(['ok', 'unreachable']) }),
});

function signedOperation(op: OperationSpec): Json {
  const parameters: Json[] = [{ $ref: '#/components/parameters/MerchantId' }];
  if (op.pathParam) {
    parameters.push({
      name: op.pathParam.name,
      in: 'path',
      required: true,
      description: op.pathParam.description,
      schema: { type: 'string', minLength: 1, maxLength: 255, ...(op.pathParam.pattern ? { pattern: op.pathParam.pattern } : {}) },
    });
  }
  if (op.idempotencyKey) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  parameters.push(...objectParameters(op.query?.shape, 'query'));
  for (const q of op.extraQuery ?? [])
    parameters.push({ name: q.name, in: 'query', required: false, description: q.description, schema: q.schema });

  const successHeaders =
    op.idempotencyKey || op.id === 'createRefund'
      ? { ...REQUEST_ID, 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' } }
      : REQUEST_ID;
  return {
    operationId: op.id,
    tags: [op.tag],
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    parameters,
    ...(op.body ? { requestBody: { required: op.body.required, content: jsonContent(ref(op.body.schema)) } } : {}),
    responses: {
      [String(op.success.status)]: {
        description: op.success.description,
        headers: successHeaders,
        content: op.successContent ?? jsonContent(ref(op.success.schema)),
      },
      ...errorResponses(errorCodesOf(OPERATION_ERRORS[op.id] as ErrorCodesByStatus, SIGNED_COMMON)),
    },
  };
}

function publicOperation(id: string, summary: string, description: string, responses: Record<string, Json>): Json {
  return {
    servers: ROOT_SERVER,
    get: {
      operationId: id,
      tags: ['Service'],
      summary,
      description,
      security: [],
      responses: { ...responses, ...errorResponses(errorCodesOf({}, PUBLIC_COMMON)) },
    },
  };
}

function webhooks(): Record<string, Json> {
  const header = (name: string, description: string, required = true) => ({
    name,
    in: 'header',
    required,
    description,
    schema: { type: 'string' },
  });
  const out: Record<string, Json> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    out[type] = {
      post: {
        operationId: `webhook.${type}`,
        tags: ['Webhooks'],
        summary: `${type} event`,
        description:
          'POSTed to the merchant webhook URL, at least once (deduplicate on `id`). Verify `X-Service-Signature` = hex HMAC-SHA256(webhook secret, `<X-Service-Timestamp>.<X-Service-Nonce>.<raw body>`) in constant time, refuse old timestamps, and during a secret rotation accept `X-Service-Signature-Previous` made with the previous secret (docs/webhooks.md).',
        security: [],
        parameters: [
          header('X-Service-Signature', 'hex HMAC-SHA256 with the newest webhook secret.'),
          header(
            'X-Service-Signature-Previous',
            'Extension, during a secret rotation only: the same HMAC with the previous secret.',
            false,
          ),
          header('X-Service-Timestamp', 'Unix seconds at signing.'),
          header('X-Service-Nonce', 'A UUID v4, fresh for every attempt.'),
          header('X-Service-Event-Type', "The body's `type`."),
          header('X-Service-Event-ID', "The body's `id`."),
        ],
        requestBody: { required: true, content: jsonContent(ref(`Event.${type}`)) },
        responses: {
          '2XX': {
            description: 'Delivered. A network error, timeout, 429 or 5xx is retried (1, 2, 4, 8, 16 s); any other answer is final.',
          },
        },
      },
    };
  }
  return out;
}

function eventSchemas(): Record<string, z.ZodType> {
  const out: Record<string, z.ZodType> = {};
  for (const type of WEBHOOK_EVENT_TYPES) {
    out[`Event.${type}`] = eventEnvelopeSchema.extend({
      type: z.literal(type),
      data: z.strictObject({ object: EVENT_OBJECT_SCHEMAS[type] }),
    });
  }
  return out;
}

export function buildOpenApiDocument(): Json {
  const paths: Record<string, Json> = {};
  for (const op of OPERATIONS) paths[op.path] = { ...paths[op.path], [op.method]: signedOperation(op) };
  paths['/healthz'] = publicOperation('healthz', 'Liveness', 'The process answers.', {
    200: { description: 'Alive.', content: jsonContent(ref('Health')) },
  });
  paths['/readyz'] = publicOperation('readyz', 'Readiness', 'Postgres and Redis answer within 2 s.', {
    200: { description: 'Ready.', content: jsonContent(ref('Readiness')) },
    503: { description: 'A dependency does not answer.', content: jsonContent(ref('Readiness')) },
  });
  paths['/openapi.json'] = publicOperation('openapi', 'This document', "The OpenAPI 3.1 document, generated from the routes' schemas.", {
    200: { description: 'The document.', content: { 'application/json': { schema: { type: 'object' } } } },
  });

  return {
    openapi: '3.1.0',
    info: {
      title: 'Stablepay API',
      version: '1',
      summary: 'Self-hosted stablecoin payment gateway: USDT and USDC on TRON, Ethereum, BSC and Solana.',
      description:
        'Every request under /api/v1 (alias /v1) is signed: `Authorization: Bearer sk_test_…|sk_live_…`, `X-Service-Timestamp` (Unix seconds, within 300 s of server time), `X-Service-Nonce` (1 to 128 printable ASCII characters, once per key) and `X-Service-Signature` = hex HMAC-SHA256(API secret, `<timestamp>.<nonce>.<raw body bytes>`). An empty body signs as the empty string. Money: decimal strings on payment sessions, integer minor units (1 USDT = 100) on refunds, subscriptions and invoices. Every error has the `Error` shape.',
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    servers: API_SERVERS,
    security: [{ ApiKey: [], Timestamp: [], Nonce: [], Signature: [] }],
    tags: [
      { name: 'Payment sessions' },
      { name: 'Refunds' },
      { name: 'Subscriptions' },
      { name: 'Invoices' },
      { name: 'Payments' },
      { name: 'Payment methods' },
      { name: 'Service' },
      { name: 'Webhooks', description: 'Events the service POSTs to the merchant webhook URL.' },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: {
        ...componentSchemas({ ...RESPONSE_SCHEMAS, Error: errorBodySchema, Health: healthSchema, Readiness: readinessSchema }, 'output'),
        ...componentSchemas(REQUEST_SCHEMAS, 'input'),
        ...componentSchemas(eventSchemas(), 'output'),
      },
      securitySchemes: {
        ApiKey: { type: 'http', scheme: 'bearer', description: 'The API key: sk_test_… or sk_live_….' },
        Timestamp: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Timestamp',
          description: 'Unix seconds; at most 300 s from server time.',
        },
        Nonce: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Nonce',
          description: '1 to 128 printable ASCII characters, never reused with a key.',
        },
        Signature: {
          type: 'apiKey',
          in: 'header',
          name: 'X-Service-Signature',
          description: 'hex HMAC-SHA256(API secret, `<X-Service-Timestamp>.<X-Service-Nonce>.<raw body>`), 64 hex characters.',
        },
      },
      parameters: {
        MerchantId: {
          name: 'X-Merchant-Id',
          in: 'header',
          required: false,
          description: "Optional; when given it must be the key's merchant (else 401 merchant_mismatch).",
          schema: { type: 'string' },
        },
        IdempotencyKey: {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'At most 255 characters; a retry with the same key and body replays the first answer.',
          schema: { type: 'string', maxLength: 255 },
        },
      },
      headers: {
        RequestId: { description: 'The request id (also in error bodies and logs).', schema: { type: 'string' } },
        IdempotentReplayed: {
          description: '`true` when the answer is a replay of an earlier request.',
          schema: { type: 'string', enum: ['true'] },
        },
        RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'string' } },
      },
    },
  };
}

// Built once per process: a const holder, not a module-level `let` (no mutable module state beyond this memo).
const built: { value?: ServedDocument } = {};

/** The document, built once per process, with its serialized form and an ETag. */
export function openApiDocument(): ServedDocument {
  built.value ??= servedDocument(buildOpenApiDocument());
  return built.value;
}
