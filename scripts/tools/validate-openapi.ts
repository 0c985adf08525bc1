import { readFileSync, writeFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/api/openapi/document.js';
import { checkWithOpenApiParser } from './openapi-parser-check.js';

// Validates the generated OpenAPI document (docs/openapi.md): always against the OpenAPI Initiative's 3.1 JSON Schema
// (vendored in test/fixtures/openapi/) with Ajv; and with the standard OpenAPI parser PARSER_PACKAGE (reference
// resolution and the spec's rules beyond the schema, scripts/tools/openapi-parser-check.ts). Any error or warning of
// either exits 1 with the parser's report. `--out file` also writes the document; `--in file` checks that document
// instead of the generated one.
//   npm run openapi:validate [-- --out openapi.json | --in other-openapi.json]

const PARSER_PACKAGE = '@readme/openapi-parser';
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

async function main(): Promise<void> {
  const input = process.argv.indexOf('--in');
  const doc: object =
    input > 0 && process.argv[input + 1] ? (JSON.parse(readFileSync(process.argv[input + 1]!, 'utf8')) as object) : buildOpenApiDocument();
  const out = process.argv.indexOf('--out');
  if (out > 0 && process.argv[out + 1]) writeFileSync(process.argv[out + 1]!, `${JSON.stringify(doc, null, 2)}\n`);

  // Ajv resolves the meta-schema's `$dynamicRef: "#meta"` to the wrong anchor; it means the plain $ref below here.
  const text = readFileSync(new URL('../../test/fixtures/openapi/oas-3.1-schema-2022-10-07.json', import.meta.url), 'utf8');
  const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
  ajv.addFormat('media-range', true);
  const validate = ajv.compile(JSON.parse(text.replaceAll('"$dynamicRef": "#meta"', '"$ref": "#/$defs/schema"')));
  if (!validate(doc)) throw new Error(`OpenAPI 3.1 meta-schema: ${JSON.stringify(validate.errors?.slice(0, 5))}`);
  for (const [name, schema] of Object.entries((doc as { components: { schemas: Record<string, object> } }).components.schemas)) {
    if (!ajv.validateSchema(schema)) throw new Error(`components.schemas.${name} is not a JSON Schema 2020-12 schema`);
  }
  process.stdout.write('OpenAPI 3.1 meta-schema (OpenAPI Initiative, 2022-10-07): valid\n');

  const verdict = await checkWithOpenApiParser(doc);
  if (!verdict.ok)
    throw new Error(`${PARSER_PACKAGE}: ${verdict.problems.length} problem(s)\n${verdict.report}\n${verdict.problems.join('\n')}`);
  process.stdout.write(`${PARSER_PACKAGE}: valid (references resolved, operationIds unique, path parameters declared)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`openapi:validate FAILED: ${(err as Error).message}\n`);
  process.exit(1);
});
