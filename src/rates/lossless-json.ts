/**
 * A JSON parser that keeps numbers as their raw source text, so a ticker's `1.08410000000000000001` reaches
 * parseRate untouched (JSON.parse would round it to a double; Node 20's reviver has no access to the source text).
 * Strings are decoded by JSON.parse on their exact slice, so escapes behave as in the standard parser.
 */
export class JsonNumber {
  constructor(readonly raw: string) {}
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue };

export class MalformedJsonError extends Error {
  override readonly name = 'MalformedJsonError';
}

const MAX_DEPTH = 64;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y;
const WS = /[ \t\n\r]*/y;

export function parseLosslessJson(text: string): JsonValue {
  let pos = 0;

  const fail = (what: string): never => {
    throw new MalformedJsonError(`${what} at offset ${pos}`);
  };
  const skipWs = (): void => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };
  const readString = (): string => {
    STRING.lastIndex = pos;
    const m = STRING.exec(text);
    if (!m) return fail('invalid string');
    pos = STRING.lastIndex;
    return JSON.parse(m[0]) as string;
  };

  const value = (depth: number): JsonValue => {
    if (depth > MAX_DEPTH) fail('nesting too deep');
    skipWs();
    const c = text[pos];
    if (c === '{') {
      pos++;
      const obj: { [key: string]: JsonValue } = Object.create(null) as { [key: string]: JsonValue };
      skipWs();
      if (text[pos] === '}') {
        pos++;
        return obj;
      }
      for (;;) {
        skipWs();
        if (text[pos] !== '"') fail('expected key');
        const key = readString();
        skipWs();
        if (text[pos] !== ':') fail('expected ":"');
        pos++;
        obj[key] = value(depth + 1);
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === '}') {
          pos++;
          return obj;
        }
        fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      pos++;
      const arr: JsonValue[] = [];
      skipWs();
      if (text[pos] === ']') {
        pos++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        skipWs();
        if (text[pos] === ',') {
          pos++;
          continue;
        }
        if (text[pos] === ']') {
          pos++;
          return arr;
        }
        fail('expected "," or "]"');
      }
    }
    if (c === '"') return readString();
    if (text.startsWith('true', pos)) {
      pos += 4;
      return true;
    }
    if (text.startsWith('false', pos)) {
      pos += 5;
      return false;
    }
    if (text.startsWith('null', pos)) {
      pos += 4;
      return null;
    }
    NUMBER.lastIndex = pos;
    const m = NUMBER.exec(text);
    if (!m) return fail('unexpected token');
    pos = NUMBER.lastIndex;
    return new JsonNumber(m[0]);
  };

  const result = value(0);
  skipWs();
  if (pos !== text.length) fail('trailing characters');
  return result;
}

export function isJsonObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** The raw decimal text of a JSON string or number field; undefined for anything else. */
export function decimalText(v: JsonValue | undefined): string | undefined {
  if (typeof v === 'string') return v;
  if (v instanceof JsonNumber) return v.raw;
  return undefined;
}
