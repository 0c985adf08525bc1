import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorBody } from '../../src/api/errors.js';
import { buildServer } from '../../src/api/server.js';
import { loadConfig } from '../../src/config.js';
import { ApiError } from '../../src/domain/errors.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { TEST_MASTER_KEY, testServerDeps } from '../support/api-harness.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { REDIS_URL } from '../support/env.js';

// Issue 17 item 9: `error.doc_url` points at something that exists. With DOCS_URL unset it is
// PUBLIC_BASE_URL/docs/errors#<code>, served by the service itself from docs/errors.md; every code the source can
// answer with has its entry there, and following its link gives 200 and the code's row.

const TYPES = 'invalid_request_error|authentication_error|permission_error|rate_limit_error|idempotency_error|api_error';
const PATTERNS = [
  new RegExp(`(?:new ApiError|super|err)\\(\\s*\\d+,\\s*'(?:${TYPES})',\\s*'([A-Za-z_]+)'`, 'g'),
  /(?:invalidRequest|authError)\(\s*'([A-Za-z_]+)'/g,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Every error code the service's source constructs. */
function codesInSource(): string[] {
  const codes = new Set<string>();
  for (const file of [...sourceFiles('src'), ...sourceFiles('chains')]) {
    const text = readFileSync(file, 'utf8');
    for (const re of PATTERNS) for (const m of text.matchAll(re)) codes.add(m[1]!);
  }
  return [...codes].sort();
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

let t: TestDatabase;
let redis: Redis;
let app: FastifyInstance;
let base: string;
let docsUrl: string;

beforeAll(async () => {
  t = await createTestDatabase();
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 2 });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // The configuration an operator gets with PUBLIC_BASE_URL set and DOCS_URL left alone.
  docsUrl = loadConfig({ MASTER_KEY: TEST_MASTER_KEY, PUBLIC_BASE_URL: base }).docsUrl;
  app = await buildServer({
    ...testServerDeps({ db: t.db, redis, box: new SecretBox(TEST_MASTER_KEY), redisPrefix: `sp_test_docs_${port}` }),
    docsUrl,
  });
  await app.listen({ host: '127.0.0.1', port });
});
afterAll(async () => {
  await app?.close();
  redis?.disconnect();
  await t?.destroy();
});

/** The page a doc_url names, and the element its fragment points at (the table row of the code). */
async function follow(docUrl: string): Promise<{ status: number; type: string | null; section: string | undefined }> {
  const [page, fragment] = docUrl.split('#');
  const res = await fetch(page!);
  const html = await res.text();
  const row = new RegExp(`<tr id="${fragment}">(.*?)</tr>`).exec(html);
  return { status: res.status, type: res.headers.get('content-type'), section: row?.[1] };
}

describe('error.doc_url', () => {
  it('defaults to the error page this service serves under PUBLIC_BASE_URL; DOCS_URL still overrides it', () => {
    expect(docsUrl).toBe(`${base}/docs/errors`);
    expect(loadConfig({ MASTER_KEY: TEST_MASTER_KEY }).docsUrl).toBe('http://localhost:3000/docs/errors');
    expect(loadConfig({ MASTER_KEY: TEST_MASTER_KEY, DOCS_URL: 'https://docs.example/e' }).docsUrl).toBe('https://docs.example/e');
  });

  it('every code the source can answer with has its entry in docs/errors.md', () => {
    const codes = codesInSource();
    // The scan itself must work: the spec's refund codes, the auth codes and the framework's own are all found.
    expect(codes).toEqual(
      expect.arrayContaining(['REFUND_AMOUNT_EXCEEDED', 'invalid_signature', 'request_header_too_large', 'internal_error']),
    );
    expect(codes.length).toBeGreaterThanOrEqual(40);
    const doc = readFileSync('docs/errors.md', 'utf8');
    const missing = codes.filter((c) => !doc.includes(`| <a id="${c.toLowerCase()}"></a>\`${c}\` |`));
    expect(missing).toEqual([]);
  });

  it("every code's doc_url is served (200, HTML) and lands on that code's row", async () => {
    const codes = codesInSource();
    for (const code of codes) {
      const { doc_url } = errorBody(new ApiError(400, 'invalid_request_error', code, 'x'), 'req_x', docsUrl).error;
      expect(doc_url.startsWith(`${base}/docs/errors#`), doc_url).toBe(true);
      const r = await follow(doc_url);
      expect(r.status, code).toBe(200);
      expect(r.type).toMatch(/^text\/html/);
      expect(r.section, `no row for ${code}`).toContain(`<code>${code}</code>`);
    }
  });

  it('the doc_url of real answers resolves too: an unknown route and an unsigned request', async () => {
    const notFound = await fetch(`${base}/api/v1/nothing-here`);
    const nf = (await notFound.json()) as { error: { code: string; doc_url: string } };
    expect(nf.error.code).toBe('resource_not_found');
    expect((await follow(nf.error.doc_url)).section).toContain('<code>resource_not_found</code>');

    const unsigned = await fetch(`${base}/api/v1/checkout/sessions/cs_x`);
    const un = (await unsigned.json()) as { error: { code: string; doc_url: string } };
    expect(unsigned.status).toBe(401);
    expect(un.error.doc_url).toBe(`${base}/docs/errors#${un.error.code.toLowerCase()}`);
    const r = await follow(un.error.doc_url);
    expect(r.status).toBe(200);
    expect(r.section).toContain(`<code>${un.error.code}</code>`);
  });

  it('serves the file itself at /docs/errors.md, and nothing of the page is script', async () => {
    const raw = await fetch(`${base}/docs/errors.md`);
    expect(raw.status).toBe(200);
    expect(await raw.text()).toBe(readFileSync('docs/errors.md', 'utf8'));
    const page = await fetch(`${base}/docs/errors`);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await page.text()).not.toMatch(/<script/i);
  });
});
