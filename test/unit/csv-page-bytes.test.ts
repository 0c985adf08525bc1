import { describe, expect, it } from 'vitest';
import { csvLine, csvPageBytes, exportEncoder } from '../../src/domain/export-format.js';

// A page of CSV is written as bytes, field by field (src/domain/export-format.ts csvPageBytes): they must be the UTF-8
// bytes of the page's text as csvLine writes it, whatever the characters and however wrong the first size guess.
type Row = (string | number | boolean | null)[];
const textBytes = (rows: Row[]) => Buffer.from(rows.map((r) => csvLine(r)).join(''), 'utf8');

const TRICKY: Row[] = [
  ['plain', 1, true, null, ''],
  ['comma, inside', 'quote " inside', 'line\nbreak', 'cr\rhere', '=SUM(A1)', '+1', '-2', '@x', '\tTab'],
  ['café', 'Ωmega', '日本語テキスト', '👍🏽 emoji', 'lone \ud800 surrogate', 'trailing \udc00', '"é,"'],
  ['x'.repeat(5000), 'é'.repeat(3000), '😀'.repeat(2000)],
  [null, null, null],
  [0, -1, 12345678901234, false],
  ['\rstart', 'a\tb', "'already", '\x7f', '\x80', 'ÿ', '0xabc', '-', '=', ''],
  // Every character of the first 256 alone, first and inside: the ASCII fast path and csvField must agree on each.
  Array.from({ length: 256 }, (_, c) => String.fromCharCode(c)),
  Array.from({ length: 256 }, (_, c) => `${String.fromCharCode(c)}x`),
  Array.from({ length: 256 }, (_, c) => `x${String.fromCharCode(c)}y`),
];

describe('csvPageBytes', () => {
  it('writes the UTF-8 bytes of the csvLine text, with a first guess far too small or large', () => {
    for (const guess of [0, 1, 3, 64, 256, 100_000]) {
      expect(Buffer.from(csvPageBytes(TRICKY, guess)).equals(textBytes(TRICKY))).toBe(true);
      for (const row of TRICKY) expect(Buffer.from(csvPageBytes([row], guess)).equals(textBytes([row]))).toBe(true);
    }
    expect(csvPageBytes([], 100).length).toBe(0);
  });

  it("the encoder's pages are the same bytes page after page, as its size guess follows the pages", () => {
    const enc = exportEncoder('csv', ['a', 'b', 'c']);
    const pages: Row[][] = [
      Array.from({ length: 1000 }, (_, i) => [`row-${i}`, i, 'short']),
      Array.from({ length: 10 }, (_, i) => [`long-${i}`, 'ü'.repeat(4000), '"q"']),
      Array.from({ length: 500 }, () => ['', null, 'x']),
    ];
    for (const p of pages) expect(Buffer.from(enc.page(p) as Uint8Array).equals(textBytes(p))).toBe(true);
  });
});
