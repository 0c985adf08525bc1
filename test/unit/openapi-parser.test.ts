import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { checkWithOpenApiParser } from '../../scripts/tools/openapi-parser-check.js';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { buildConsoleOpenApiDocumentNow } from '../../src/console/openapi/build.js';

// The generated document through the standard OpenAPI parser (@readme/openapi-parser), as `npm run openapi:validate`
// runs it (docs/openapi.md): the document passes, and documents broken in ways the OpenAPI JSON Schema cannot see (a
// dangling $ref, a duplicate operationId, an undeclared path parameter) are refused, by the parser and by the script's
// exit status.
// biome-ignore lint/suspicious/noExplicitAny: the tests reach into the document by path to break it
type Doc = Record<string, any>;
const doc = buildOpenApiDocument() as Doc;
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const metaText = readFileSync(new URL('../fixtures/openapi/oas-3.1-schema-2022-10-07.json', import.meta.url), 'utf8');
const ajv = addFormats(new Ajv2020({ strict: false }));
ajv.addFormat('media-range', true);
const metaSchema = ajv.compile(JSON.parse(metaText.replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"')));

const broken = {
  'a dangling $ref': (d: Doc) => {
    d.paths['/refunds'].get.responses['200'].content['application/json'].schema = { $ref: '#/components/schemas/NoSuchSchema' };
  },
  'a dangling $ref in a webhook': (d: Doc) => {
    const [event] = Object.keys(d.webhooks);
    d.webhooks[event!].post.requestBody = { $ref: '#/components/requestBodies/Missing' };
  },
  'a duplicate operationId': (d: Doc) => {
    d.paths['/refunds'].get.operationId = d.paths['/refunds/create'].post.operationId;
  },
  'a path parameter not declared': (d: Doc) => {
    d.paths['/refunds/{refund_id}'].get.parameters = [];
  },
} as const;

const dir = mkdtempSync(join(tmpdir(), 'openapi-parser-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const run = promisify(execFile);

describe('the standard OpenAPI parser', () => {
  it('accepts the generated document, with no error and no warning', async () => {
    expect(await checkWithOpenApiParser(doc)).toEqual({ ok: true, problems: [], report: '' });
  });

  it("accepts the console API's document too, with no error and no warning", async () => {
    const consoleDoc = (await buildConsoleOpenApiDocumentNow()) as Doc;
    expect(metaSchema(consoleDoc)).toBe(true);
    expect(await checkWithOpenApiParser(consoleDoc)).toEqual({ ok: true, problems: [], report: '' });
  });

  for (const [what, breakIt] of Object.entries(broken)) {
    it(`refuses ${what}, which the OpenAPI JSON Schema lets through`, async () => {
      const d = structuredClone(doc);
      breakIt(d);
      expect(metaSchema(d)).toBe(true); // the meta-schema alone would not see it
      const verdict = await checkWithOpenApiParser(d);
      expect(verdict.ok).toBe(false);
      expect(verdict.problems.length).toBeGreaterThan(0);
      expect(verdict.report).not.toBe('');
    });
  }

  it('the parser names the problem: the missing pointer, the duplicated operationId', async () => {
    const dangling = structuredClone(doc);
    broken['a dangling $ref'](dangling);
    expect((await checkWithOpenApiParser(dangling)).problems.join('\n')).toContain('#/components/schemas/NoSuchSchema');
    const duplicate = structuredClone(doc);
    broken['a duplicate operationId'](duplicate);
    expect((await checkWithOpenApiParser(duplicate)).problems).toEqual([
      'error: The operationId `createRefund` is duplicated and must be made unique.',
    ]);
  });

  it('npm run openapi:validate exits 1 with the report on a broken document', async () => {
    // Its exit 0 on the generated documents is CI's own `openapi` step (.ci/run): a failure there fails the build.
    const file = join(dir, 'broken.json');
    const d = structuredClone(doc);
    broken['a duplicate operationId'](d);
    writeFileSync(file, JSON.stringify(d));
    const failed = await run('npx', ['tsx', 'scripts/tools/validate-openapi.ts', '--in', file]).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr).toContain('openapi:validate FAILED: @readme/openapi-parser');
    expect(failed?.stderr).toContain('createRefund');
  }, 120_000);
});
