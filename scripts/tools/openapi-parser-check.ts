import { compileErrors, validate } from '@readme/openapi-parser';

// The generated OpenAPI document through a standard OpenAPI parser, @readme/openapi-parser (a maintained fork of
// swagger-parser with OpenAPI 3.1 and `webhooks` support): it resolves every $ref and applies the specification's rules
// that its JSON Schema cannot express (unique operationIds, path parameters declared and required, unique parameters,
// component names, arrays with items, security scheme fields). Used by `npm run openapi:validate` and
// test/unit/openapi-parser.test.ts (docs/openapi.md). Warnings count as failures: the document must be clean.

export interface ParserVerdict {
  ok: boolean;
  /** What the parser said, one entry per error or warning. */
  problems: string[];
  /** The parser's own readable report (with the place in the document), empty when ok. */
  report: string;
}

export async function checkWithOpenApiParser(doc: object): Promise<ParserVerdict> {
  // The parser dereferences in place: give it a copy.
  const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
  const problems = [
    ...(result.valid ? [] : result.errors.map((e) => `error: ${e.message}`)),
    ...result.warnings.map((w) => `warning: ${w.message}`),
  ];
  if (!result.valid && result.additionalErrors > 0) problems.push(`error: and ${result.additionalErrors} more`);
  const ok = problems.length === 0;
  return { ok, problems, report: ok ? '' : compileErrors(result) };
}
