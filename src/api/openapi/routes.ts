import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { openApiDocument } from './document.js';

// GET /openapi.json (public, cacheable, ETag) and the rendered reference page GET /docs/api, served from a locally
// installed bundle: no CDN. The page needs the package REFERENCE_PACKAGE; without it /docs/api is not registered
// (404), and the document is still served (docs/openapi.md).

export const REFERENCE_PACKAGE = '@scalar/api-reference';
const REFERENCE_BUNDLE = `${REFERENCE_PACKAGE}/dist/browser/standalone.js`;

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Stablepay API reference</title></head>
<body>
<script id="api-reference" data-url="/openapi.json"></script>
<script src="/docs/api/reference.js"></script>
</body>
</html>
`;

/** The reference page's script from node_modules, or undefined when the package is not installed. */
export function loadReferenceBundle(): Buffer | undefined {
  try {
    return readFileSync(createRequire(import.meta.url).resolve(REFERENCE_BUNDLE));
  } catch {
    return undefined;
  }
}

export function registerOpenApiRoutes(app: FastifyInstance, bundle: Buffer | undefined = loadReferenceBundle()): void {
  app.get('/openapi.json', async (req, reply) => {
    const { body, etag } = openApiDocument();
    reply.header('Cache-Control', 'public, max-age=300').header('ETag', etag).header('Access-Control-Allow-Origin', '*');
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json').send(body);
  });
  if (!bundle) return;
  app.get('/docs/api', async (_req, reply) =>
    reply
      .header('Cache-Control', 'public, max-age=300')
      .header(
        'Content-Security-Policy',
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:",
      )
      .type('text/html; charset=utf-8')
      .send(PAGE),
  );
  app.get('/docs/api/reference.js', async (_req, reply) =>
    reply.header('Cache-Control', 'public, max-age=3600').type('text/javascript; charset=utf-8').send(bundle),
  );
}
