import { createHash } from 'node:crypto';
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

interface Route {
  pattern: RegExp;
  template: string;
  item: Json;
}

export interface DocumentCheckOptions {
  /** The base paths the document's paths are under; default its servers (and each path item's own servers). */
  bases?: string[];
  /**
   * A path under none of the bases: ignored (the public API's hosted pages, outside its contract), or a problem (the
   * console API: everything under its prefix is in its document, and nothing else is asked of this checker).
   */
  outside: 'ignore' | 'problem';
}

export interface DocumentChecker {
  doc: Json;
  /** Problems of a response with the document; empty when it matches. */
  responseProblems(method: string, url: string, status: number, contentType: string | null, text: string): string[];
  validatorAt(pointer: string): ValidateFunction;
}

/** A checker of responses against one OpenAPI document (each schema compiled once, at its first use). */
export function documentChecker(doc: Json, o: DocumentCheckOptions): DocumentChecker {
  const id = `https://stablepay.invalid/${createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16)}.json`;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, id);
  const routes: Route[] = [];
  const serversOf = (item: Json) =>
    (o.bases ?? ((item.servers ?? doc.servers) as Array<{ url: string }>).map((s) => s.url)).map((b) => b.replace(/\/$/, ''));
  for (const [template, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const base of serversOf(item)) {
      const path = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      routes.push({ pattern: new RegExp(`^${base}${path}$`), template, item });
    }
  }
  const bases = o.bases ?? (doc.servers as Array<{ url: string }>).map((s) => s.url);
  const apiBases = bases.map((b) => b.replace(/\/$/, ''));
  const compiled = new Map<string, ValidateFunction>();
  const validatorAt = (path: string): ValidateFunction => {
    let v = compiled.get(path);
    if (!v) {
      v = ajv.compile({ $ref: `${id}#/${path}` });
      compiled.set(path, v);
    }
    return v;
  };

  function responseProblems(method: string, url: string, status: number, contentType: string | null, text: string): string[] {
    let path = new URL(url, 'http://x').pathname;
    if (path.length > 1) path = path.replace(/\/$/, ''); // the server ignores one trailing slash
    const label = `${method} ${path} → ${status}`;
    const route = routes.find((r) => r.pattern.test(path));
    const op = route?.item[method.toLowerCase()] as Json | undefined;
    let schemaPath: string;
    if (!route && !apiBases.some((b) => path === b || path.startsWith(`${b}/`))) {
      // Outside the document: for the public API, the hosted pages and their JSON endpoints (/pay/...,
      // /checkout/sessions/{id}/select, /subscribe/...) are not part of the merchant API contract (docs/openapi.md).
      return o.outside === 'ignore' ? [] : [`${label}: outside the document's base paths ${apiBases.join(', ')}`];
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

  return { doc, responseProblems, validatorAt };
}

const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** The public API's checker, made at its first use. */
const publicChecker: { value?: DocumentChecker } = {};
const init = (): DocumentChecker => {
  publicChecker.value ??= documentChecker(buildOpenApiDocument(), { outside: 'ignore' });
  return publicChecker.value;
};
const validatorAt = (path: string) => init().validatorAt(path);

/** Problems of a response with the public API's document; empty when it matches. */
export function responseProblems(method: string, url: string, status: number, contentType: string | null, text: string): string[] {
  return init().responseProblems(method, url, status, contentType, text);
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
