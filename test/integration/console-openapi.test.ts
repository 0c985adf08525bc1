import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsoleOpenApiDocumentNow } from '../../src/console/openapi/build.js';
import { openApiPath } from '../../src/console/openapi/document.js';
import { BASE, type ConsoleApp, startConsoleApp } from '../support/console-auth-app.js';
import { consoleDocumentChecker } from '../support/console-openapi-check.js';

// The console API's own OpenAPI document (docs/openapi.md, "The console's document"): every route the whole console
// registers on its Fastify instance (counted by Fastify's onRoute hook, not by the document's own bookkeeping) is in
// the document with its method, and every documented operation is a route; mutations need the session cookie and the
// CSRF header; it is served to signed-in users only; and the response check the console test clients run on every
// answer (console-openapi-check.ts) refuses a body, a status or an error code the document does not describe.

type Json = Record<string, any>;
let c: ConsoleApp;
let doc: Json;
const PREFIX = `${BASE}/api`;
const METHODS = ['get', 'post', 'put', 'delete', 'patch'];

beforeAll(async () => {
  c = await startConsoleApp();
  doc = await buildConsoleOpenApiDocumentNow();
}, 60_000);
afterAll(async () => c?.close());

const documented = (d: Json) =>
  Object.entries(d.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.keys(item)
      .filter((m) => METHODS.includes(m))
      .map((m) => `${m.toUpperCase()} ${path}`),
  );

describe("the console API's OpenAPI document", () => {
  it('has every route of the console API registered on the Fastify instance, and nothing else', () => {
    const registered = c.routes
      .filter((r) => r.url.startsWith(`${PREFIX}/`))
      .map((r) => `${r.method} ${openApiPath(r.url.slice(PREFIX.length))}`)
      .sort();
    expect(registered.length).toBeGreaterThan(50);
    expect(registered).toContain('POST /auth/login');
    expect(registered).toContain('GET /live');
    expect(registered).toContain('GET /exports/{kind}');
    expect(documented(doc).sort()).toEqual(registered);
  });

  it('describes each operation: its path parameters, its success response and error responses with their codes', () => {
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item).filter(([m]) => METHODS.includes(m)) as Array<[string, Json]>) {
        const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        const pathParams = (op.parameters ?? []).filter((p: Json) => p.in === 'path').map((p: Json) => p.name);
        expect(pathParams, `${method} ${path}`).toEqual(names);
        expect(op.summary, `${method} ${path}`).toMatch(/^[A-Z]/);
        const statuses = Object.keys(op.responses);
        expect(
          statuses.some((s) => s.startsWith('2')),
          `${method} ${path}`,
        ).toBe(true);
        expect(statuses, `${method} ${path}`).toContain('500');
        for (const s of statuses.filter((x) => Number(x) >= 400)) {
          expect(op.responses[s].content['application/json'].schema.allOf[1].properties.error.properties.code.enum.length).toBeGreaterThan(
            0,
          );
        }
      }
    }
    const refund = doc.paths['/payments/{id}/refund'].post;
    expect(Object.keys(refund.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '403', '429']));
    expect(refund.responses['400'].description).toContain('REFUND_AMOUNT_EXCEEDED');
    expect(refund.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/PostPaymentsIdRefundRequest' });
    expect(doc.components.schemas.PostPaymentsIdRefundRequest.properties).toHaveProperty('refund_id');
    expect(doc.paths['/payments'].get.parameters.map((p: Json) => p.name)).toEqual(
      expect.arrayContaining(['limit', 'cursor', 'status', 'network', 'q']),
    );
    // A file and a stream: their media types.
    expect(Object.keys(doc.paths['/exports/{kind}'].get.responses['200'].content).sort()).toEqual(['application/json', 'text/csv']);
    expect(Object.keys(doc.paths['/live'].get.responses['200'].content)).toEqual(['text/event-stream']);
  });

  it('names the console session as the only authentication: the cookie, plus X-CSRF-Token on every mutation; none for the sign-in', () => {
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['CsrfToken', 'SessionCookie']);
    expect(doc.components.securitySchemes.SessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'sp_console' });
    expect(doc.components.securitySchemes.CsrfToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item).filter(([m]) => METHODS.includes(m)) as Array<[string, Json]>) {
        const expected = path === '/auth/login' ? [] : method === 'get' ? [{ SessionCookie: [] }] : [{ SessionCookie: [], CsrfToken: [] }];
        expect(op.security, `${method} ${path}`).toEqual(expected);
        if (method !== 'get' && path !== '/auth/login') expect(op.responses['403'].description).toContain('csrf_token_invalid');
      }
    }
  });

  it('has an entry in docs/errors.md for every error code it documents', () => {
    const errorsDoc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const codes = new Set<string>();
    for (const item of Object.values(doc.paths as Record<string, Json>)) {
      for (const op of Object.values(item) as Json[]) {
        for (const [status, r] of Object.entries(op.responses ?? {}) as Array<[string, Json]>) {
          if (Number(status) >= 400)
            for (const code of r.content['application/json'].schema.allOf[1].properties.error.properties.code.enum) codes.add(code);
        }
      }
    }
    expect(codes.size).toBeGreaterThan(30);
    expect([...codes].filter((code) => !errorsDoc.includes(`<a id="${code.toLowerCase()}"></a>`))).toEqual([]);
  });

  it('is served at <prefix>/openapi.json to signed-in users only, with the prefix it is served under', async () => {
    const anonymous = await c.call('GET', '/openapi.json');
    expect(anonymous.status).toBe(401);
    expect(anonymous.json.error.code).toBe('not_signed_in');
    const merchantUser = await c.user('merchant', await c.merchant());
    const signed = await c.login(merchantUser.email, merchantUser.password);
    const served = await c.call('GET', '/openapi.json', { cookie: signed.cookie! });
    expect(served.status).toBe(200);
    expect(served.headers['cache-control']).toBe('no-store');
    expect(served.json.servers).toEqual([expect.objectContaining({ url: PREFIX })]);
    expect({ ...served.json, servers: doc.servers }).toEqual(doc);
  });
});

describe("the console test clients' response check", () => {
  it('refuses a body the document does not describe: a field missing, a field added, a wrong type', async () => {
    const check = await consoleDocumentChecker('/api');
    const ok = { ok: true };
    expect(check.responseProblems('POST', '/api/auth/logout', 200, 'application/json', JSON.stringify(ok))).toEqual([]);
    expect(check.responseProblems('POST', '/api/auth/logout', 200, 'application/json', '{}').join()).toContain("required property 'ok'");
    expect(
      check.responseProblems('POST', '/api/auth/logout', 200, 'application/json', JSON.stringify({ ok: true, extra: 1 })).join(),
    ).toContain('additional properties');
    expect(check.responseProblems('GET', '/api/networks', 200, 'application/json', JSON.stringify({ data: 'x' })).join()).toContain(
      'must be array',
    );
  });

  it('refuses an undocumented status or error code, an unknown route answering 200, and a path outside the prefix', async () => {
    const check = await consoleDocumentChecker('/api');
    const error = (code: string) =>
      JSON.stringify({
        error: { type: 'invalid_request_error', code, message: 'm', param: '', doc_url: 'd' },
        request_id: 'r',
        timestamp: 1,
      });
    expect(check.responseProblems('POST', '/api/refunds/re_1/retry', 400, 'application/json', error('refund_not_failed'))).toEqual([]);
    expect(check.responseProblems('POST', '/api/refunds/re_1/retry', 400, 'application/json', error('totp_invalid')).join()).toContain(
      'allowed values',
    );
    expect(check.responseProblems('GET', '/api/networks', 409, 'application/json', error('network_not_configured')).join()).toContain(
      'status 409 is not documented',
    );
    expect(check.responseProblems('GET', '/api/no-such-thing', 404, 'application/json', error('resource_not_found'))).toEqual([]);
    expect(check.responseProblems('GET', '/api/no-such-thing', 200, 'application/json', '{}').join()).toContain('no operation documents');
    expect(check.responseProblems('GET', '/elsewhere', 200, 'text/html', '').join()).toContain('outside');
    expect(check.responseProblems('GET', '/api/exports/refunds', 200, 'text/csv; charset=utf-8', 'a,b\r\n')).toEqual([]);
    expect(check.responseProblems('GET', '/api/exports/refunds', 200, 'text/plain', 'a,b').join()).toContain('not documented');
  });
});
