import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { MAX_JSON_DEPTH, firstInvalidUtf8, nestingExceeds, parseJsonText, refuseBadStrings } from '../../src/api/json-body.js';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const nested = (levels: number, open = '[', close = ']') => open.repeat(levels) + close.repeat(levels);

function refusal(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('not refused');
}

describe('nesting depth', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}, arrays and objects counted together`, () => {
    expect(MAX_JSON_DEPTH).toBe(32);
    expect(nestingExceeds(bytes(nested(32)), 32)).toBe(false);
    expect(nestingExceeds(bytes(nested(33)), 32)).toBe(true);
    const mixed = (n: number) => '{"a":['.repeat(n / 2) + ']}'.repeat(n / 2);
    expect(parseJsonText(bytes(mixed(32)))).toBeTypeOf('object');
    const e = refusal(() => parseJsonText(bytes(mixed(34))));
    expect(e).toMatchObject({ status: 400, code: 'INVALID_JSON', message: expect.stringContaining('nested deeper than 32 levels') });
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    const deepInString = `{"description":"${'['.repeat(5000)}\\"${'{'.repeat(5000)}"}`;
    expect(nestingExceeds(bytes(deepInString), 32)).toBe(false);
    expect(parseJsonText(bytes(deepInString))).toMatchObject({ description: expect.stringMatching(/^\[+"\{+$/) });
  });

  it("refuses the issue's 2,600 nested arrays in description, and 8,000 nested objects, quickly", () => {
    const arrays = `{"amount":"1","currency":"USD","order_id":"x","description":${nested(2600)}}`;
    const objects = `{"a":${'{"a":'.repeat(8000)}1${'}'.repeat(8000)}}`;
    const start = performance.now();
    for (let i = 0; i < 20; i++) {
      expect(refusal(() => parseJsonText(bytes(arrays))).code).toBe('INVALID_JSON');
      expect(refusal(() => parseJsonText(bytes(objects))).code).toBe('INVALID_JSON');
    }
    expect(performance.now() - start).toBeLessThan(1000);
  });

  it('walks a value nested 200,000 levels deep without recursion', () => {
    let deep: unknown = 'ok';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(() => refuseBadStrings(deep)).not.toThrow();
    let bad: unknown = '\ud800';
    for (let i = 0; i < 200_000; i++) bad = { k: bad };
    const e = refusal(() => refuseBadStrings(bad));
    expect(e.code).toBe('parameter_invalid');
    expect(e.param).toBe(`k${'[k]'.repeat(199_999)}`);
  });
});

describe('strings', () => {
  it.each([
    ['a lone high surrogate in a metadata value', '{"metadata":{"k":"\\ud800"}}', 'metadata[k]'],
    ['a lone low surrogate in a text field', '{"description":"x\\udfffy"}', 'description'],
    ['a reversed pair', '{"order_id":"\\udc00\\ud800"}', 'order_id'],
    ['a lone surrogate in a key', '{"metadata":{"\\ud800":"v"}}', 'metadata[\ufffd]'],
    [
      'a lone surrogate in an array',
      '{"line_items":[{"price_data":{"product_data":{"name":"\\ud83d"}}}]}',
      'line_items[0][price_data][product_data][name]',
    ],
    ['a NUL character', '{"metadata":{"k":"a\\u0000"}}', 'metadata[k]'],
  ])('refuses %s with parameter_invalid naming it', (_n, text, param) => {
    const e = refusal(() => parseJsonText(bytes(text)));
    expect(e).toMatchObject({ status: 400, code: 'parameter_invalid', param });
  });

  it('keeps well-formed pairs, escaped or not, and U+FFFD sent on purpose', () => {
    expect(parseJsonText(bytes('{"a":"\\ud83d\\ude00","b":"😀","c":"\ufffd"}'))).toEqual({ a: '😀', b: '😀', c: '\ufffd' });
  });
});

describe('UTF-8', () => {
  it.each([
    ['a stray continuation byte', [0x80], 0],
    ['an overlong encoding', [0xc0, 0xaf], 0],
    ['an encoded surrogate', [0xed, 0xa0, 0x80], 0],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80], 0],
    ['a truncated sequence', [0x61, 0xe2, 0x82], 1],
    ['0xFF', [0x61, 0x62, 0xff], 2],
  ])('finds %s', (_n, b, at) => {
    expect(firstInvalidUtf8(Uint8Array.from(b))).toBe(at);
  });

  it('accepts every well-formed width', () => {
    expect(firstInvalidUtf8(bytes('aé€😀\u{10ffff}'))).toBe(-1);
  });

  it('refuses invalid bytes, naming the string or key that holds them', () => {
    const within = Buffer.concat([bytes('{"metadata":{"note":"ab'), Buffer.from([0xff, 0xfe]), bytes('cd"}}')]);
    expect(refusal(() => parseJsonText(within))).toMatchObject({
      code: 'parameter_invalid',
      param: 'metadata[note]',
      message: expect.stringContaining('UTF-8'),
    });
    const inKey = Buffer.concat([bytes('{"metadata":{"k'), Buffer.from([0xc0, 0xaf]), bytes('":"v"}}')]);
    expect(refusal(() => parseJsonText(inKey))).toMatchObject({ code: 'parameter_invalid', param: 'metadata[k\ufffd\ufffd]' });
    const between = Buffer.concat([bytes('{"a":"b"'), Buffer.from([0xff]), bytes('}')]);
    expect(refusal(() => parseJsonText(between))).toMatchObject({
      code: 'parameter_invalid',
      param: '',
      message: 'The request body is not valid UTF-8.',
    });
  });
});

describe('__proto__ and other prototype keys', () => {
  it.each([
    ['{"metadata":{"__proto__":{"x":"1"}}}', 'metadata[__proto__]'],
    ['{"metadata":{"__proto__":"s"}}', 'metadata[__proto__]'],
    ['{"metadata":{"__proto__":null}}', 'metadata[__proto__]'],
    ['{"__proto__":[]}', '__proto__'],
    ['{"line_items":[{"price_data":{"__proto__":1}}]}', 'line_items[0][price_data][__proto__]'],
  ])('refuses %s naming %s', (text, param) => {
    expect(refusal(() => parseJsonText(bytes(text)))).toMatchObject({ code: 'parameter_invalid', param });
  });

  it('keeps constructor and prototype as data', () => {
    const v = parseJsonText(bytes('{"metadata":{"constructor":"c","prototype":"p","toString":"t"}}')) as {
      metadata: Record<string, string>;
    };
    expect(Object.entries(v.metadata)).toEqual([
      ['constructor', 'c'],
      ['prototype', 'p'],
      ['toString', 't'],
    ]);
  });
});
