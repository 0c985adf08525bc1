import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { OPERATION_ERRORS } from '../../src/api/openapi/error-catalog.js';
import { OPERATIONS } from '../../src/api/openapi/operations.js';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/events/catalog.js';
import { responseProblems, webhookProblems } from '../support/openapi-check.js';

// The generated OpenAPI document against the OpenAPI Initiative's 3.1 meta-schema (vendored, test/fixtures/openapi),
// every schema in it against JSON Schema 2020-12, and the response checker the test clients use against known-bad
// answers (so a passing suite means something).

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const doc = buildOpenApiDocument() as Record<string, any>;
const metaText = readFileSync(new URL('../fixtures/openapi/oas-3.1-schema-2022-10-07.json', import.meta.url), 'utf8');
// The meta-schema points at Schema Objects with `$dynamicRef: "#meta"`, whose only anchor is `$defs/schema`; Ajv
// resolves that dynamic reference to the enclosing definition instead, so it is read as the plain `$ref` it amounts to
// here. What a Schema Object must be is then checked by the JSON Schema 2020-12 meta-schema (third test).
const metaSchema = JSON.parse(metaText.replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"'));
const newAjv = (allErrors = false) => {
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors }));
  ajv.addFormat('media-range', true); // OpenAPI's own format name for media types: any string
  return ajv;
};

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document (the OpenAPI Initiative meta-schema)', () => {
    const validate = newAjv(true).compile(metaSchema);
    const ok = validate(doc);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it('the meta-schema catches a broken document (the check is not vacuous)', () => {
    const validate = newAjv().compile(metaSchema);
    const broken = structuredClone(doc);
    broken.paths['/refunds'].get.responses['200'] = { content: {} }; // a response without its required description
    expect(validate(broken)).toBe(false);
  });

  it('every component schema is a valid JSON Schema 2020-12 schema', () => {
    const ajv = newAjv();
    for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, object>)) {
      expect(ajv.validateSchema(schema), name).toBe(true);
    }
  });

  it('documents every operation with its error codes, and every webhook event type', () => {
    expect(OPERATIONS.map((o) => o.id).sort()).toEqual(Object.keys(OPERATION_ERRORS).sort());
    for (const op of OPERATIONS) {
      const documented = doc.paths[op.path][op.method];
      expect(documented.operationId).toBe(op.id);
      expect(Object.keys(documented.responses)).toContain('401');
      expect(documented.responses['401'].content['application/json'].schema.allOf[1].properties.error.properties.code.enum).toContain(
        'invalid_signature',
      );
    }
    expect(
      doc.paths['/refunds/create'].post.responses['404'].content['application/json'].schema.allOf[1].properties.error.properties.code.enum,
    ).toEqual(['DEPOSIT_NOT_FOUND', 'SESSION_NOT_FOUND', 'resource_not_found']);
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    expect(doc.components.securitySchemes.Signature).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-Service-Signature' });
  });

  it('the response checker refuses what the document does not describe', () => {
    const session = {
      id: 'cs_1',
      amount_total: '1.00',
      currency: 'usd',
      payment_status: 'unpaid',
      status: 'open',
      created: 1,
      expires_at: 2,
      url: 'http://x/pay/cs_1',
      metadata: { order_id: 'o' },
    };
    const json = 'application/json; charset=utf-8';
    expect(responseProblems('GET', '/api/v1/checkout/sessions/cs_1', 200, json, JSON.stringify(session))).toEqual([]);
    expect(responseProblems('GET', '/v1/checkout/sessions/cs_1/', 200, json, JSON.stringify(session))).toEqual([]);
    // A field the serializer does not declare, a missing one, a wrong type, an undocumented status, an unlisted code.
    expect(responseProblems('GET', '/api/v1/checkout/sessions/cs_1', 200, json, JSON.stringify({ ...session, extra: 1 }))).not.toEqual([]);
    const { id: _id, ...noId } = session;
    expect(responseProblems('GET', '/api/v1/checkout/sessions/cs_1', 200, json, JSON.stringify(noId))).not.toEqual([]);
    expect(responseProblems('GET', '/api/v1/checkout/sessions/cs_1', 200, json, JSON.stringify({ ...session, created: '1' }))).not.toEqual(
      [],
    );
    expect(responseProblems('GET', '/api/v1/checkout/sessions/cs_1', 201, json, JSON.stringify(session))).not.toEqual([]);
    const error = (code: string) =>
      JSON.stringify({
        error: { type: 'invalid_request_error', code, message: 'm', param: '', doc_url: 'u' },
        request_id: 'req_1',
        timestamp: 1,
      });
    expect(responseProblems('POST', '/api/v1/refunds/r1/cancel', 400, json, error('CANNOT_CANCEL_REFUND'))).toEqual([]);
    expect(responseProblems('POST', '/api/v1/refunds/r1/cancel', 400, json, error('order_id_conflict'))).not.toEqual([]);
    expect(responseProblems('GET', '/api/v1/nowhere', 404, json, error('resource_not_found'))).toEqual([]);
    expect(responseProblems('GET', '/api/v1/nowhere', 200, json, '{}')).not.toEqual([]);
  });

  it('webhook bodies are checked against the webhooks section', () => {
    const body = {
      id: 'evt_1',
      type: 'payment.completed',
      created_at: 1,
      data: {
        object: {
          amount: '1.00',
          status: 'completed',
          currency: 'USDT',
          exchange_rate: '1',
          order_id: 'o',
          session_id: 'cs_1',
          source: 'api',
        },
      },
    };
    expect(webhookProblems(body)).toEqual([]);
    expect(webhookProblems({ ...body, data: { object: { ...body.data.object, status: 'failed' } } })).not.toEqual([]);
    expect(webhookProblems({ ...body, type: 'payment.unknown' })).not.toEqual([]);
  });
});
