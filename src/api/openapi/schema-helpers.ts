import { createHash } from 'node:crypto';
import { z } from 'zod';

// The generic pieces of an OpenAPI 3.1 document made from zod schemas, shared by the public API's document
// (document.ts) and the console's (src/console/openapi/): components from named schemas, a field's JSON Schema, the
// error responses narrowed to their codes, a query object's parameters, and the built-once memo with its ETag.

export type Json = Record<string, unknown>;

export const ref = (name: string): Json => ({ $ref: `#/components/schemas/${name}` });
export const jsonContent = (schema: Json): Json => ({ 'application/json': { schema } });
export const REQUEST_ID = { 'Request-Id': { $ref: '#/components/headers/RequestId' } };

/** The JSON Schemas of a set of named zod schemas, referring to each other through components.schemas. */
export function componentSchemas(named: Record<string, z.ZodType>, io: 'input' | 'output'): Record<string, Json> {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(named)) registry.add(schema, { id });
  const out = z.toJSONSchema(registry, { io, unrepresentable: 'any', uri: (id) => `#/components/schemas/${id}` }) as {
    schemas: Record<string, Json>;
  };
  for (const s of Object.values(out.schemas)) {
    delete s.$schema;
    delete s.$id;
  }
  return out.schemas;
}

export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const s = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  delete s.$schema;
  return s;
}

/** One OpenAPI parameter per field of a zod object (query or path), required where the field cannot be left out. */
export function objectParameters(shape: Record<string, unknown> | undefined, where: 'query' | 'path'): Json[] {
  const out: Json[] = [];
  for (const [name, field] of Object.entries(shape ?? {})) {
    const { description, ...schema } = jsonSchemaOf(field as z.ZodType);
    out.push({
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(typeof description === 'string' ? { description } : {}),
      schema,
    });
  }
  return out;
}

/** Error responses (the `Error` component) with `error.code` narrowed to each status's codes. */
export function errorResponses(codes: Map<number, string[]>): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const [status, list] of codes) {
    out[String(status)] = {
      description: `Error; \`error.code\` is one of ${list.map((c) => `\`${c}\``).join(', ')} (docs/errors.md).`,
      headers: status === 429 ? { ...REQUEST_ID, 'Retry-After': { $ref: '#/components/headers/RetryAfter' } } : REQUEST_ID,
      content: jsonContent({
        allOf: [ref('Error'), { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: list } } } } }],
      }),
    };
  }
  return out;
}

export interface ServedDocument {
  doc: Json;
  body: string;
  etag: string;
}

/** A document with its serialized form and an ETag (a strong one: a hash of the bytes). */
export function servedDocument(doc: Json): ServedDocument {
  const body = JSON.stringify(doc);
  return { doc, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}
