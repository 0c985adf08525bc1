import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { openApiDocument } from './document.js';

// GET /openapi.json (public, cacheable, ETag) and the rendered API reference page GET /docs/api, drawn by Scalar's
// standalone browser bundle from the installed package REFERENCE_PACKAGE (a production dependency): no CDN. The bundle
// is served at a content-hashed path (/docs/api/reference.<hash>.js, cached as immutable). Without the package the page
// is not registered (404) and the document is still served (docs/openapi.md).

export const REFERENCE_PACKAGE = '@scalar/api-reference';
export const REFERENCE_PAGE_PATH = '/docs/api';
// The package's exports map does not expose its browser build, so it is found on Node's module search path instead of
// through require.resolve: the same lookup from src/ (tsx) and from dist/src/ (the compiled build and the image).
const BUNDLE_IN_PACKAGE = join('dist', 'browser', 'standalone.js');

/**
 * The page's own Content-Security-Policy: everything from this origin only. The bundle adds its stylesheet as a
 * <style> element carrying the nonce it reads from `<meta property="csp-nonce">`, and its components set inline style
 * attributes, hence `style-src 'self' 'unsafe-inline'` (styles only: no script is inline and nothing is evaluated).
 * Its own fonts are off (`withDefaultFonts: false`), fetches go to this origin only (the document), and no frame,
 * form target or base URL is allowed.
 */
export const REFERENCE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * Scalar's settings (its `data-configuration` HTML API, so the page needs no inline script): no telemetry, no
 * third-party fonts, no "test request" client or developer tools (they would send requests through Scalar's proxy),
 * no AI agent or MCP generator (Scalar's services), operation ids shown beside the summaries.
 */
const REFERENCE_CONFIGURATION = {
  telemetry: false,
  withDefaultFonts: false,
  hideClientButton: true,
  hideTestRequestButton: true,
  showDeveloperTools: 'never',
  showOperationId: true,
  agent: { disabled: true },
  mcp: { disabled: true },
  documentDownloadType: 'json',
  metaData: { title: 'Stablepay API reference' },
};

export interface ReferenceBundle {
  /** The bundle's file on disk. */
  file: string;
  /** The URL path the page loads it from: content-hashed, so it can be cached as immutable. */
  urlPath: string;
}

/** Where the installed package's browser bundle is, or undefined when the package is not installed. */
export function findReferenceBundleFile(from: string | URL = import.meta.url): string | undefined {
  const dirs = createRequire(from).resolve.paths(REFERENCE_PACKAGE) ?? [];
  return dirs.map((dir) => join(dir, REFERENCE_PACKAGE, BUNDLE_IN_PACKAGE)).find((file) => existsSync(file));
}

/** The bundle to serve, hashed once at start-up (the file is streamed from disk, not kept in memory). */
export function loadReferenceBundle(file: string | undefined = findReferenceBundleFile()): ReferenceBundle | undefined {
  if (!file) return undefined;
  const hash = createHash('sha256').update(readFileSync(file)).digest('base64url').slice(0, 16);
  return { file, urlPath: `${REFERENCE_PAGE_PATH}/reference.${hash}.js` };
}

const escapeAttribute = (s: string) => s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');

export function referencePage(bundle: ReferenceBundle): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Stablepay API reference</title><link rel="icon" href="data:,"></head>
<body>
<noscript>The API reference needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script id="api-reference" data-url="/openapi.json" data-configuration="${escapeAttribute(JSON.stringify(REFERENCE_CONFIGURATION))}"></script>
<script src="${bundle.urlPath}"></script>
</body>
</html>
`;
}

function pageHeaders(reply: FastifyReply): FastifyReply {
  return reply
    .header('Content-Security-Policy', REFERENCE_CSP)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

/** `bundle`: null serves the document only (as without the package). */
export function registerOpenApiRoutes(app: FastifyInstance, bundle: ReferenceBundle | null = loadReferenceBundle() ?? null): void {
  app.get('/openapi.json', async (req, reply) => {
    const { body, etag } = openApiDocument();
    reply.header('Cache-Control', 'public, max-age=300').header('ETag', etag).header('Access-Control-Allow-Origin', '*');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json').send(body);
  });
  if (!bundle) return;
  const page = referencePage(bundle);
  app.get(REFERENCE_PAGE_PATH, async (_req, reply) =>
    pageHeaders(reply).header('Cache-Control', 'public, max-age=300').type('text/html; charset=utf-8').send(page),
  );
  app.get(bundle.urlPath, async (_req, reply) =>
    pageHeaders(reply)
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .type('text/javascript; charset=utf-8')
      .send(createReadStream(bundle.file)),
  );
}
