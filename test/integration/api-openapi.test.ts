import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { findReferenceBundleFile, loadReferenceBundle, REFERENCE_CSP, registerOpenApiRoutes } from '../../src/api/openapi/routes.js';
import { startApiHarness, type ApiHarness } from '../support/api-harness.js';

// GET /openapi.json on the real server, and the document against the routes the server actually registers: every
// signed route is documented and every documented operation exists, under /api/v1 and /v1 (docs/openapi.md).
let h: ApiHarness;

beforeAll(async () => {
  h = await startApiHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('GET /openapi.json', () => {
  it('serves the generated document, public and cacheable, with an ETag that answers 304', async () => {
    const res = await fetch(`${h.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(await res.json()).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
    const again = await fetch(`${h.baseUrl}/openapi.json`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('documents exactly the signed routes the server registers', async () => {
    const doc = buildOpenApiDocument() as { paths: Record<string, Record<string, unknown>> };
    // Fastify's route tree: a child line is indented 4 characters per level and continues its parent's path.
    const routes = new Set<string>();
    const stack: string[] = [];
    for (const line of h.app.printRoutes({ commonPrefix: false }).split('\n')) {
      const m = /^([│ ]*)[├└]── (\/\S*) \(([A-Z, ]+)\)/.exec(line);
      if (!m) continue;
      const depth = m[1]!.length / 4;
      stack.length = depth;
      stack.push(m[2]!);
      for (const method of m[3]!.split(', ')) if (method !== 'HEAD') routes.add(`${method} ${stack.join('')}`);
    }
    expect(routes.size).toBeGreaterThan(30);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item).filter((k) => ['get', 'post'].includes(k))) {
        const fastifyPath = path.replace(/\{([^}]+)\}/g, ':$1');
        if ((item as { servers?: unknown }).servers) documented.add(`${method.toUpperCase()} ${fastifyPath}`);
        else for (const base of ['/api/v1', '/v1']) documented.add(`${method.toUpperCase()} ${base}${fastifyPath}`);
      }
    }
    expect([...routes].filter((r) => r.includes(' /api/v1/') || r.includes(' /v1/')).sort()).toEqual(
      [...documented].filter((r) => r.includes(' /api/v1/') || r.includes(' /v1/')).sort(),
    );
    for (const r of documented) expect(routes, r).toContain(r);
  });

  it('serves the reference page and the bundle of the installed package at a content-hashed path', async () => {
    const bundle = loadReferenceBundle();
    expect(bundle?.file).toMatch(/node_modules\/@scalar\/api-reference\/dist\/browser\/standalone\.js$/);
    expect(bundle?.urlPath).toMatch(/^\/docs\/api\/reference\.[A-Za-z0-9_-]{16}\.js$/);
    const page = await fetch(`${h.baseUrl}/docs/api`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(REFERENCE_CSP);
    expect(REFERENCE_CSP).not.toMatch(/https?:|\*|'unsafe-eval'/); // this origin only, nothing evaluated
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    expect(html).toContain(`<script src="${bundle!.urlPath}"></script>`);
    expect(html).toContain('data-url="/openapi.json"');
    expect(html).not.toMatch(/<script>|https?:\/\//); // no inline script, no other origin
    const config = JSON.parse(/data-configuration="([^"]*)"/.exec(html)![1]!.replaceAll('&quot;', '"').replaceAll('&amp;', '&'));
    expect(config).toMatchObject({ telemetry: false, withDefaultFonts: false, hideClientButton: true, agent: { disabled: true } });

    const script = await fetch(`${h.baseUrl}${bundle!.urlPath}`);
    expect(script.status).toBe(200);
    expect(Buffer.from(await script.arrayBuffer()).equals(readFileSync(bundle!.file))).toBe(true);
    const other = await fetch(`${h.baseUrl}/docs/api/reference.AAAAAAAAAAAAAAAA.js`);
    expect(other.status).toBe(404);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe('resource_not_found');
  });

  it('finds the bundle from the compiled module location too; serves the document without the page when the package is not installed', async () => {
    expect(findReferenceBundleFile(new URL('file:///nonexistent/dir/x.js'))).toBeUndefined();
    // From where the compiled module runs (dist/src/api/openapi/), the lookup finds the same installed bundle.
    const compiled = new URL('../../dist/src/api/openapi/routes.js', import.meta.url);
    expect(findReferenceBundleFile(compiled)).toBe(findReferenceBundleFile());
    const app = Fastify();
    registerOpenApiRoutes(app, null);
    expect((await app.inject({ method: 'GET', url: '/docs/api' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/openapi.json' })).statusCode).toBe(200);
    await app.close();
  });
});
