// Compares an answer of the fake java-tron with a real java-tron answer to the same call (test/fixtures/java-tron),
// form for form rather than value for value: the same keys, the same JSON types, and for strings the same form
// (64-hex id without 0x, 41-hex address, 20-byte hex, base58 T-address, hex-encoded UTF-8 text, plain hex, 0x data,
// JSON text). UPPER_CASE words (contractRet, code, receipt.result, resource, "FAILED") and booleans must be equal,
// integers that are millisecond timestamps in the real answer must be millisecond timestamps in the fake's.
//
// Protobuf JSON leaves out zero and empty fields, so a real capture and a fake answer to a different scenario can
// legitimately differ in which of them are present: a fixture lists those paths (`mayOmit`: in the capture, absent
// here; `mayAdd`: absent from the capture, printed here). Paths are `$.a.b`, arrays `$.a[].b`.

export type Form = 'empty' | 'word' | 'id64' | 'hex41' | 'base58' | 'hexText' | 'hex' | '0xaddress' | '0xhash' | '0xhex' | 'json' | 'text';

export interface CompareOptions {
  mayOmit?: string[];
  mayAdd?: string[];
  /** The fixture was printed with visible=true: base58 addresses and plain text stand for 41-hex and hex text. */
  visible?: boolean;
  /** Exact texts at these paths (hex-encoded text is decoded first). */
  sameText?: Record<string, string>;
  /** Extra keys in the fake's objects are not differences (JSON-RPC: Anvil adds fields java-tron lacks). */
  open?: boolean;
}

const kind = (v: unknown): string =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v;

function hexText(s: string): string | null {
  if (!/^([0-9a-f]{2}){3,}$/i.test(s)) return null;
  const text = Buffer.from(s, 'hex').toString('utf8');
  return /^[\x20-\x7e]+$/.test(text) ? text : null;
}

export function formOf(s: string): Form {
  if (s === '') return 'empty';
  if (/^[A-Z][A-Z0-9_]*$/.test(s) && !/^[0-9A-F]+$/.test(s)) return 'word';
  if (/^0x[0-9a-f]{40}$/i.test(s)) return '0xaddress';
  if (/^0x[0-9a-f]{64}$/i.test(s)) return '0xhash';
  if (/^0x[0-9a-f]*$/i.test(s)) return '0xhex';
  if (/^41[0-9a-f]{40}$/.test(s)) return 'hex41';
  if (/^[0-9a-f]{64}$/.test(s)) return 'id64';
  if (/^T[1-9A-HJ-NP-Za-km-z]{33}$/.test(s)) return 'base58';
  if (hexText(s) !== null) return 'hexText';
  if (/^[0-9a-f]+$/.test(s)) return 'hex';
  if (/^[{[]/.test(s)) {
    try {
      JSON.parse(s);
      return 'json';
    } catch {
      return 'text';
    }
  }
  return 'text';
}

const VISIBLE_EQUIVALENT: Partial<Record<Form, Form>> = { base58: 'hex41', text: 'hexText', word: 'word' };
const isMsTimestamp = (n: number) => n >= 1e12 && n < 1e14;
const pattern = (path: string) => path.replace(/\[\d+\]/g, '[]');

/** Every difference between `actual` (the fake) and `real` (the fixture), one line each; [] when they agree. */
export function compareToReal(actual: unknown, real: unknown, o: CompareOptions = {}, path = '$'): string[] {
  const omit = new Set(o.mayOmit ?? []);
  const add = new Set(o.mayAdd ?? []);
  const out: string[] = [];
  const expectText = o.sameText?.[pattern(path)];
  if (expectText !== undefined) {
    const text = typeof actual === 'string' ? (hexText(actual) ?? actual) : undefined;
    if (text !== expectText) out.push(`${path}: text ${JSON.stringify(text)}, java-tron says ${JSON.stringify(expectText)}`);
  }
  const [ka, kr] = [kind(actual), kind(real)];
  if (ka !== kr) return [...out, `${path}: ${ka} ${JSON.stringify(actual)?.slice(0, 80)}, java-tron answers ${kr}`];
  switch (kr) {
    case 'boolean':
      if (actual !== real) out.push(`${path}: ${actual}, java-tron answers ${real}`);
      return out;
    case 'integer':
      if (isMsTimestamp(real as number) && !isMsTimestamp(actual as number))
        out.push(`${path}: ${actual} is not a millisecond timestamp like java-tron's ${real}`);
      return out;
    case 'string': {
      const fr = formOf(real as string);
      const fa = formOf(actual as string);
      const want = o.visible ? (VISIBLE_EQUIVALENT[fr] ?? fr) : fr;
      // Hex that happens to decode to printable text is still hex: hex and hexText differ only by content (a 64-hex
      // word is plain hex where the capture shows plain hex, e.g. a truncated data field).
      const hexish = (f: Form) => f === 'hex' || f === 'hexText';
      // 0x data of any length stands for 0x data of a given length (logs' data, java-tron's empty stateRoot "0x").
      const sameForm =
        fa === want || (hexish(fa) && hexish(want)) || (want === 'hex' && fa === 'id64') || (want === '0xhex' && fa.startsWith('0x'));
      if (!sameForm) out.push(`${path}: ${fa} ${JSON.stringify(actual)?.slice(0, 80)}, java-tron answers ${want}`);
      else if (fr === 'word' && actual !== real) out.push(`${path}: ${JSON.stringify(actual)}, java-tron answers ${JSON.stringify(real)}`);
      return out;
    }
    case 'array': {
      const ra = real as unknown[];
      (actual as unknown[]).forEach((v, i) => {
        if (ra.length > 0) out.push(...compareToReal(v, ra[Math.min(i, ra.length - 1)], o, `${path}[${i}]`));
      });
      return out;
    }
    case 'object': {
      const a = actual as Record<string, unknown>;
      const r = real as Record<string, unknown>;
      for (const key of Object.keys(r)) {
        const p = `${path}.${key}`;
        if (key in a) out.push(...compareToReal(a[key], r[key], o, p));
        else if (!omit.has(pattern(p))) out.push(`${p}: missing (java-tron answers ${JSON.stringify(r[key])?.slice(0, 60)})`);
      }
      if (!o.open)
        for (const key of Object.keys(a)) {
          const p = `${path}.${key}`;
          if (!(key in r) && !add.has(pattern(p))) out.push(`${p}: not in java-tron's answer`);
        }
      return out;
    }
    default:
      return out;
  }
}
