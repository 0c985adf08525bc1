// Checks a JSON answer against a documented response shape (test/fixtures/rpc-shapes/*.json) and lists every
// difference: a missing documented field, a wrong type, a null where the docs allow none, a field the docs do not name.
//
// Shape language: "string" | "integer" | "number" | "boolean" | "null" | "any";
// { "nullable": S }; { "oneOf": [S, ...] }; { "enum": [v, ...] }; { "array": S }; { "tuple": [S, ...] };
// { "object": { field: S }, "optional": [field, ...], "open": true } (open: extra fields are not differences);
// { "map": S } (an object whose every value is S); { "ref": name } (a shape of the fixture's `definitions`);
// { "pattern": regex } (a string matching it).

export type Shape =
  | 'string'
  | 'integer'
  | 'number'
  | 'boolean'
  | 'null'
  | 'any'
  | { nullable: Shape }
  | { oneOf: Shape[] }
  | { enum: Array<string | number | boolean | null> }
  | { array: Shape }
  | { tuple: Shape[] }
  | { object: Record<string, Shape>; optional?: string[]; open?: boolean }
  | { map: Shape }
  | { ref: string }
  | { pattern: string };

const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function shapeDiffs(value: unknown, shape: Shape, path = '$', defs: Record<string, Shape> = {}): string[] {
  const sub = (v: unknown, s: Shape, p: string) => shapeDiffs(v, s, p, defs);
  if (typeof shape === 'string') {
    switch (shape) {
      case 'any':
        return [];
      case 'integer':
        return typeof value === 'number' && Number.isInteger(value)
          ? []
          : [`${path}: expected integer, got ${kind(value)} ${JSON.stringify(value)}`];
      case 'null':
        return value === null ? [] : [`${path}: expected null, got ${kind(value)}`];
      default:
        return kind(value) === shape ? [] : [`${path}: expected ${shape}, got ${kind(value)}`];
    }
  }
  if ('ref' in shape) {
    const def = defs[shape.ref];
    if (!def) throw new Error(`no definition ${shape.ref}`);
    return sub(value, def, path);
  }
  if ('pattern' in shape)
    return typeof value === 'string' && new RegExp(shape.pattern).test(value)
      ? []
      : [`${path}: ${JSON.stringify(value)} does not match /${shape.pattern}/`];
  if ('nullable' in shape) return value === null ? [] : sub(value, shape.nullable, path);
  if ('oneOf' in shape) {
    const each = shape.oneOf.map((s) => sub(value, s, path));
    return each.some((d) => d.length === 0)
      ? []
      : [`${path}: matches none of ${shape.oneOf.length} documented forms (${each.map((d) => d[0]).join(' | ')})`];
  }
  if ('enum' in shape)
    return shape.enum.includes(value as string) ? [] : [`${path}: ${JSON.stringify(value)} is not one of ${JSON.stringify(shape.enum)}`];
  if ('array' in shape) {
    if (!Array.isArray(value)) return [`${path}: expected array, got ${kind(value)}`];
    return value.flatMap((v, i) => sub(v, shape.array, `${path}[${i}]`));
  }
  if ('tuple' in shape) {
    if (!Array.isArray(value) || value.length !== shape.tuple.length)
      return [`${path}: expected a ${shape.tuple.length}-element array, got ${JSON.stringify(value)}`];
    return shape.tuple.flatMap((s, i) => sub(value[i], s, `${path}[${i}]`));
  }
  if ('map' in shape) {
    if (kind(value) !== 'object') return [`${path}: expected object, got ${kind(value)}`];
    return Object.entries(value as Record<string, unknown>).flatMap(([k, v]) => sub(v, shape.map, `${path}.${k}`));
  }
  if (kind(value) !== 'object') return [`${path}: expected object, got ${kind(value)}`];
  const obj = value as Record<string, unknown>;
  const optional = new Set(shape.optional ?? []);
  const out: string[] = [];
  for (const [field, s] of Object.entries(shape.object)) {
    if (!(field in obj)) {
      if (!optional.has(field)) out.push(`${path}.${field}: documented, missing`);
      continue;
    }
    out.push(...sub(obj[field], s, `${path}.${field}`));
  }
  if (!shape.open) for (const field of Object.keys(obj)) if (!(field in shape.object)) out.push(`${path}.${field}: not documented`);
  return out;
}
