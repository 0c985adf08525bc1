import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';

// Checks an HTTP response against the OpenAPI document (src/api/openapi/): the operation its method and path name
// must document its status, and the body must match that response's schema. The shared test clients call it on
// every response they receive (signed-client.ts), so a response the document does not describe fails the test.
// A path under the API's base that the document does not know must answer the spec's error shape.

type Json = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const DOC_ID = 'https://stablepay.invalid/openapi.json';

let state: { doc: Json; ajv: Ajv2020; routes: Route[]; compiled: Map<string, ValidateFunction> } | undefined;

interface Route {
  pattern: RegExp;
  template: string;
  item: Json;
}

function init() {
  if (state) return state;
  const doc = buildOpenApiDocument();
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, DOC_ID);
  const routes: Route[] = [];
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    const servers = (item.servers ?? doc.servers) as Array<{ url: string }>;
    for (const s of servers) {
      const base = s.url.replace(/\/$/, '');
      const path = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      routes.push({ pattern: new RegExp(`^${base}${path}$`), template, item });
    }
  }
  state = { doc, ajv, routes, compiled: new Map() };
  return state;
}

/** The base paths of the signed API (the document's servers). */
const API_BASES = (doc: Json): string[] => (doc.servers as Array<{ url: string }>).map((s) => s.url.replace(/\/$/, ''));

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

function validatorAt(path: string): ValidateFunction {
  const s = init();
  let v = s.compiled.get(path);
  if (!v) {
    v = s.ajv.compile({ $ref: `${DOC_ID}#/${path}` });
    s.compiled.set(path, v);
  }
  return v;
}

/** Problems of a response with the document; empty when it matches. */
export function responseProblems(method: string, url: string, status: number, contentType: string | null, text: string): string[] {
  const s = init();
  let path = new URL(url, 'http://x').pathname;
  if (path.length > 1) path = path.replace(/\/$/, ''); // the server ignores one trailing slash
  const label = `${method} ${path} → ${status}`;
  const route = s.routes.find((r) => r.pattern.test(path));
  const op = route?.item[method.toLowerCase()] as Json | undefined;
  let schemaPath: string;
  if (!route && !API_BASES(s.doc).some((b) => path === b || path.startsWith(`${b}/`))) {
    // Outside the document: the hosted pages and their JSON endpoints (/pay/..., /checkout/sessions/{id}/select,
    // /subscribe/...) are not part of the merchant API contract it describes (docs/openapi.md).
    return [];
  }
  if (!route || !op) {
    // Under the API's base path but not an operation of the document: the answer must be the spec's error shape.
    if (status < 400) return [`${label}: no operation documents ${method} ${path}`];
    schemaPath = pointer('components', 'schemas', 'Error');
  } else {
    const key =
      String(status) in op.responses ? String(status) : `${String(status)[0]}XX` in op.responses ? `${String(status)[0]}XX` : 'default';
    const response = op.responses[key] as Json | undefined;
    if (!response) return [`${label}: status ${status} is not documented for ${method} ${route.template}`];
    if (!response.content) return text === '' ? [] : [`${label}: documented without a body, answered ${text.slice(0, 200)}`];
    // A documented non-JSON body (an export's CSV): the content type must be one the document lists.
    const mediaType = (contentType ?? '').split(';')[0]!.trim();
    if (mediaType !== 'application/json') {
      return mediaType in response.content ? [] : [`${label}: content-type ${contentType} is not documented`];
    }
    schemaPath = pointer('paths', route.template, method.toLowerCase(), 'responses', key, 'content', 'application/json', 'schema');
  }
  if (!/^application\/json\b/.test(contentType ?? '')) return [`${label}: content-type ${contentType}, documented application/json`];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [`${label}: body is not JSON: ${text.slice(0, 200)}`];
  }
  const validate = validatorAt(schemaPath);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${label}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
}

/** Throws when a response does not match the document (what the shared test clients call). */
export function assertResponseMatchesDocument(method: string, url: string, status: number, contentType: string | null, text: string): void {
  const problems = responseProblems(method, url, status, contentType, text);
  if (problems.length > 0) {
    throw new Error(
      `response does not match the OpenAPI document (docs/openapi.md):\n${problems.join('\n')}\nbody: ${text.slice(0, 1000)}`,
    );
  }
}

/**
 * Builds the document and compiles every webhook validator now, so the first check does not block the event loop
 * in the middle of a test (the webhook receiver calls it at start, before any delivery can time out on it).
 */
export function warmUpOpenApiCheck(): void {
  const s = init();
  for (const type of Object.keys(s.doc.webhooks as Json)) validatorAt(pointer('components', 'schemas', `Event.${type}`));
}

/** The document's schema of one webhook event type's body, as a validator. */
export function webhookProblems(body: unknown): string[] {
  const type = (body as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !(init().doc.webhooks as Json)[type]) return [`webhook: type ${String(type)} is not in the document`];
  const validate = validatorAt(pointer('components', 'schemas', `Event.${type}`));
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `webhook ${type}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`);
}
