import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ApiError, invalidAmount, parameterInvalid, parameterMissing, parameterUnknown } from '../domain/errors.js';

// Bodies are captured as raw bytes (signatures cover the exact bytes), then parsed here after authentication.

declare module 'fastify' {
  interface FastifyRequest {
    rawBody?: Buffer;
  }
}

declare global {
  interface String {
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/** Arrays and objects nested in total deeper than this are refused before JSON.parse (no walk ever sees them). */
export const MAX_JSON_DEPTH = 32;

const invalidJson = (message: string): ApiError => new ApiError(400, 'invalid_request_error', 'INVALID_JSON', message);

/** The body as a JSON object; an empty body counts as {} (the cancel operations send none or `{}`). */
export function jsonObjectBody(req: FastifyRequest): Record<string, unknown> {
  const raw = req.rawBody;
  if (!raw || raw.length === 0) return {};
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\s*(;|$)/i.test(type)) throw invalidJson('Content-Type must be application/json.');
  const parsed = parseJsonText(raw);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalidJson('The request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

/**
 * Parses request bytes as JSON, refusing in this order: nesting deeper than MAX_JSON_DEPTH (INVALID_JSON), bytes that
 * are not UTF-8 (parameter_invalid), text that is not JSON (INVALID_JSON), and any key or string refused by
 * refuseBadStrings. What it returns is safe to walk and to store.
 */
export function parseJsonText(raw: Uint8Array): unknown {
  if (nestingExceeds(raw, MAX_JSON_DEPTH)) throw invalidJson(`The request body is nested deeper than ${MAX_JSON_DEPTH} levels.`);
  let text: string;
  try {
    text = strictUtf8.decode(raw);
  } catch {
    throw invalidUtf8(raw);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw invalidJson('The request body is not valid JSON.');
  }
  refuseBadStrings(parsed);
  return parsed;
}

// ignoreBOM keeps a leading BOM in the text, so JSON.parse refuses it as before (a BOM is not JSON).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lossyUtf8 = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });

/** True when arrays/objects nest deeper than `limit` outside strings. Bytes ≥ 0x80 never equal the ASCII tokens. */
export function nestingExceeds(raw: Uint8Array, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (inString) {
      if (b === 0x5c)
        i++; // the escaped character cannot end the string
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      if (++depth > limit) return true;
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return false;
}

/** Offset of the first byte that starts an ill-formed UTF-8 sequence (RFC 3629: no overlongs, no surrogates), or -1. */
export function firstInvalidUtf8(raw: Uint8Array): number {
  const cont = (i: number, lo = 0x80, hi = 0xbf) => i < raw.length && raw[i]! >= lo && raw[i]! <= hi;
  let i = 0;
  while (i < raw.length) {
    const b = raw[i]!;
    if (b < 0x80) i += 1;
    else if (b >= 0xc2 && b <= 0xdf && cont(i + 1)) i += 2;
    else if (b === 0xe0 && cont(i + 1, 0xa0) && cont(i + 2)) i += 3;
    else if (((b >= 0xe1 && b <= 0xec) || b === 0xee || b === 0xef) && cont(i + 1) && cont(i + 2)) i += 3;
    else if (b === 0xed && cont(i + 1, 0x80, 0x9f) && cont(i + 2)) i += 3;
    else if (b === 0xf0 && cont(i + 1, 0x90) && cont(i + 2) && cont(i + 3)) i += 4;
    else if (b >= 0xf1 && b <= 0xf3 && cont(i + 1) && cont(i + 2) && cont(i + 3)) i += 4;
    else if (b === 0xf4 && cont(i + 1, 0x80, 0x8f) && cont(i + 2) && cont(i + 3)) i += 4;
    else return i;
  }
  return -1;
}

/**
 * The refusal of a body that is not UTF-8, naming the key or string whose bytes hold the first bad sequence: a marker
 * no UTF-8 text can produce by accident is put where the bad bytes start, and the parsed value is searched for it.
 */
function invalidUtf8(raw: Uint8Array): ApiError {
  const whole = parameterInvalid('', 'The request body is not valid UTF-8.');
  const at = firstInvalidUtf8(raw);
  if (at < 0) return whole;
  const marker = `\ue000${randomUUID()}\ue000`;
  let parsed: unknown;
  try {
    parsed = JSON.parse(strictUtf8.decode(raw.subarray(0, at)) + marker + lossyUtf8.decode(raw.subarray(at)));
  } catch {
    return whole;
  }
  const path = findString(parsed, (s) => s.includes(marker));
  if (!path) return whole;
  const param = paramPath(path.map((p) => (typeof p === 'string' ? p.replace(marker, '').toWellFormed() : p)));
  return parameterInvalid(param, `Invalid ${param || 'body'}: the bytes are not valid UTF-8.`);
}

type Frame = { value: unknown; key: string | number | undefined; parent: Frame | undefined };

function pathOf(f: Frame | undefined, tail: Array<string | number> = []): Array<string | number> {
  const up: Array<string | number> = [];
  for (let p = f; p && p.key !== undefined; p = p.parent) up.push(p.key);
  return [...up.reverse(), ...tail];
}

/**
 * Walks a parsed value without recursion and without copying paths (a path is rebuilt from parent links only to
 * report), in document order; returns the path of the first key or string value `bad` accepts.
 */
function findString(root: unknown, bad: (s: string, isKey: boolean) => boolean): Array<string | number> | undefined {
  const stack: Frame[] = [{ value: root, key: undefined, parent: undefined }];
  while (stack.length > 0) {
    const f = stack.pop()!;
    const v = f.value;
    if (typeof v === 'string') {
      if (bad(v, false)) return pathOf(f);
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], key: i, parent: f });
    } else if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      for (const k of keys) if (bad(k, true)) return pathOf(f, [k]);
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ value: (v as Record<string, unknown>)[keys[i]!], key: keys[i]!, parent: f });
    }
  }
  return undefined;
}

/**
 * Refuses (400 parameter_invalid, naming the param) any key or string value PostgreSQL or a JS object would not keep
 * as sent: U+0000 (text cannot hold it), an unpaired UTF-16 surrogate (jsonb refuses it, text turns it into U+FFFD),
 * and the key `__proto__` (assigning it sets an object's prototype instead of a property, so it would be dropped).
 * `constructor` and `prototype` are plain data in every object built here and are kept.
 */
export function refuseBadStrings(value: unknown, prefix: readonly PropertyKey[] = []): void {
  let reason = '';
  const path = findString(value, (s, isKey) => {
    if (isKey && s === '__proto__') reason = '"__proto__" is not allowed as a key';
    else if (s.includes('\u0000')) reason = 'contains a NUL character';
    else if (!s.isWellFormed()) reason = 'contains an unpaired UTF-16 surrogate (not well-formed Unicode)';
    else return false;
    return true;
  });
  if (!path) return;
  const param = paramPath([...prefix, ...path].map((p) => (typeof p === 'string' ? p.toWellFormed() : p)));
  throw parameterInvalid(param, `Invalid ${param || 'body'}: ${reason}.`);
}

/** For bodies that take no field (the cancel operations): the first key is refused as unknown. */
export function refuseAnyField(body: Record<string, unknown>): void {
  const first = Object.keys(body)[0];
  if (first !== undefined) throw parameterUnknown(first);
}

/** Stripe-style parameter path: line_items[0][price_data][unit_amount]. */
function paramPath(path: readonly PropertyKey[]): string {
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
