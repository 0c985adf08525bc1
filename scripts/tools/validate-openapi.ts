import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { buildConsoleOpenApiDocumentNow } from '../../src/console/openapi/build.js';
import { checkWithOpenApiParser } from './openapi-parser-check.js';

// Validates the generated OpenAPI documents (docs/openapi.md), the public API's and the console API's, each: against the OpenAPI Initiative's 3.1 JSON Schema
// (vendored in test/fixtures/openapi/) with Ajv; and with the standard OpenAPI parser PARSER_PACKAGE (reference
// resolution and the spec's rules beyond the schema, scripts/tools/openapi-parser-check.ts). Any error or warning of
// either exits 1 with the parser's report. `--out file` also writes the public document and `--console-out file` the
// console's; `--in file` checks that document instead of the generated public one.
//   npm run openapi:validate [-- --out openapi.json --console-out console-openapi.json | --in other-openapi.json]

const PARSER_PACKAGE = '@readme/openapi-parser';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

function argument(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : undefined;
}

async function validateDocument(name: string, doc: object): Promise<void> {
  // Ajv resolves the meta-schema's `$dynamicRef: "#meta"` to the wrong anchor; it means the plain $ref below here.
  const text = readFileSync(new URL('../../test/fixtures/openapi/oas-3.1-schema-2022-10-07.json', import.meta.url), 'utf8');
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addFormat('media-range', true);
  const validate = ajv.compile(JSON.parse(text.replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"')));
  if (!validate(doc)) throw new Error(`OpenAPI 3.1 meta-schema (${name}): ${JSON.stringify(validate.errors?.slice(0, 5))}`);
  for (const [key, schema] of Object.entries((doc as { components: { schemas: Record<string, object> } }).components.schemas)) {
    if (!ajv.validateSchema(schema)) throw new Error(`(${name}) components.schemas.${key} is not a JSON Schema 2020-12 schema`);
  }
  process.stdout.write(`${name}: OpenAPI 3.1 meta-schema (OpenAPI Initiative, 2022-10-07): valid\n`);

  const verdict = await checkWithOpenApiParser(doc);
  if (!verdict.ok)
    throw new Error(
      `${PARSER_PACKAGE} (${name}): ${verdict.problems.length} problem(s)\n${verdict.report}\n${verdict.problems.join('\n')}`,
    );
  process.stdout.write(`${name}: ${PARSER_PACKAGE}: valid (references resolved, operationIds unique, path parameters declared)\n`);
}

async function main(): Promise<void> {
  const input = argument('--in');
  const doc: object = input ? (JSON.parse(readFileSync(input, 'utf8')) as object) : buildOpenApiDocument();
  const out = argument('--out');
  if (out) writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
  await validateDocument(input ? input : 'public API', doc);
  if (input) return;

  const consoleDoc = await buildConsoleOpenApiDocumentNow();
  const consoleOut = argument('--console-out');
  if (consoleOut) writeFileSync(consoleOut, `${JSON.stringify(consoleDoc, null, 2)}\n`);
  await validateDocument('console API', consoleDoc);
}

main().catch((err: unknown) => {
  process.stderr.write(`openapi:validate FAILED: ${(err as Error).message}\n`);
  process.exit(1);
});
