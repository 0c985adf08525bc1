import { buildConsoleOpenApiDocumentNow } from '../../src/console/openapi/build.js';
import { type DocumentChecker, documentChecker } from './openapi-check.js';

// The console API's responses against its own OpenAPI document (src/console/openapi/, docs/openapi.md): the console
// test clients (console-harness.ts, console-auth-app.ts) check every answer they receive, so a route answering a shape,
// status or error code its document does not describe fails the test that met it.

const checkers = new Map<string, Promise<DocumentChecker>>();

/** The checker of the console API served under `prefix` (e.g. /api, or /console/api under a CONSOLE_PATH). */
export function consoleDocumentChecker(prefix: string): Promise<DocumentChecker> {
  let c = checkers.get(prefix);
  if (!c) {
    c = buildConsoleOpenApiDocumentNow().then((doc) => documentChecker(doc, { bases: [prefix], outside: 'problem' }));
    checkers.set(prefix, c);
  }
  return c;
}

/** Throws when a console API response does not match the console's document. */
export function assertConsoleResponse(
  checker: DocumentChecker,
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  text: string,
): void {
  const problems = checker.responseProblems(method, url, status, contentType, text);
  if (problems.length > 0) {
    throw new Error(
      `response does not match the console API's OpenAPI document (docs/openapi.md):\n${problems.join('\n')}\nbody: ${text.slice(0, 1000)}`,
    );
  }
}
