import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, invalidAmount, parameterInvalid, parameterMissing, parameterUnknown } from '../domain/errors.js';

// Bodies are captured as raw bytes (signatures cover the exact bytes), then parsed here after authentication.

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

const invalidJson = (message: string): ApiError => new ApiError(400, 'invalid_request_error', 'INVALID_JSON', message);

/** The body as a JSON object; an empty body counts as {} (the cancel operations send none or `{}`). */
export function jsonObjectBody(req: FastifyRequest): Record<string, unknown> {
  const raw = req.rawBody;
  if (!raw || raw.length === 0) return {};
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\s*(;|$)/i.test(type)) throw invalidJson('Content-Type must be application/json.');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalidJson('The request body is not valid JSON.');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidJson('The request body must be a JSON object.');
  }
  refuseNulCharacters(parsed, []);
  return parsed as Record<string, unknown>;
}

/** PostgreSQL text cannot hold U+0000: refuse it at the edge instead of failing in the database. */
export function refuseNulCharacters(value: unknown, path: PropertyKey[]): void {
  if (typeof value === 'string') {
    if (value.includes('\u0000')) throw parameterInvalid(paramPath(path), `Invalid ${paramPath(path) || 'body'}: contains a NUL character.`);
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => refuseNulCharacters(v, [...path, i]));
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      refuseNulCharacters(k, [...path, k]);
      refuseNulCharacters(v, [...path, k]);
    }
  }
}

/** Stripe-style parameter path: line_items[0][price_data][unit_amount]. */
export function paramPath(path: readonly PropertyKey[]): string {
  const [head, ...rest] = path.map(String);
  return `${head ?? ''}${rest.map((p) => `[${p}]`).join('')}`;
}

/** Validates with a strict zod schema and maps the first issue to the spec's codes. */
export function validate<T extends z.ZodType>(schema: T, input: unknown, amountParams: ReadonlySet<string> = new Set()): z.infer<T> {
  const r = schema.safeParse(input, { reportInput: true });
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  if (issue.code === 'unrecognized_keys') {
    return fail(parameterUnknown(paramPath([...issue.path, issue.keys[0] ?? ''])));
  }
  const param = paramPath(issue.path);
  const leaf = String(issue.path[issue.path.length - 1] ?? '');
  if (issue.code === 'invalid_type' && issue.input === undefined) return fail(parameterMissing(param));
  if (amountParams.has(leaf)) return fail(invalidAmount(param, issue.message));
  return fail(parameterInvalid(param, `Invalid ${param}: ${issue.message}.`));
}

function fail(e: ApiError): never {
  throw e;
}
