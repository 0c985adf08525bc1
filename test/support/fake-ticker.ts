/**
 * A fake of two public exchange tickers on 127.0.0.1 (random port), answering in their documented shapes:
 * - Coinbase `GET /v2/exchange-rates?currency=EUR` → {"data":{"currency":"EUR","rates":{"USDT":"1.0841",...}}};
 *   an unknown currency → 400 {"errors":[{"id":"invalid_request","message":"Invalid currency"}]}.
 * - Binance `GET /api/v3/ticker/price?symbol=EURUSDT` → {"symbol":"EURUSDT","price":"1.08410000"};
 *   an unknown symbol → 400 {"code":-1121,"msg":"Invalid symbol."}.
 * `mode` makes it misbehave: hang (never answers), 500, malformed JSON, or answer after a delay.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type FakeTickerMode = 'ok' | 'hang' | 'error500' | 'malformed' | { delayMs: number };

export interface FakeTickerOptions {
  /** base currency → (currency → decimal text), the Coinbase table. */
  coinbaseRates?: Record<string, Record<string, string>>;
  /** symbol → decimal text, the Binance table. */
  binancePrices?: Record<string, string>;
  /** Emit Coinbase rates / Binance prices as bare JSON numbers instead of strings. */
  numbersUnquoted?: boolean;
  /** Answer Coinbase requests with this `data.currency` instead of the requested base (a misrouted answer). */
  coinbaseAnswerBase?: string;
}

export interface FakeTicker {
  readonly url: string;
  /** Every request path + query received, in order. */
  readonly requests: string[];
  mode: FakeTickerMode;
  options: FakeTickerOptions;
  close(): Promise<void>;
}

export const DEFAULT_COINBASE_RATES: Record<string, Record<string, string>> = {
  EUR: { USDT: '1.0841', USDC: '1.08395', USD: '1.0843', JPY: '162.9' },
  JPY: { USDT: '0.006653', USDC: '0.0066525' },
  KWD: { USDT: '3.2541', USDC: '3.2539' },
  GBP: { USDC: '1.2712' }, // deliberately no USDT entry
};

export const DEFAULT_BINANCE_PRICES: Record<string, string> = {
  EURUSDT: '1.08410000',
  EURUSDC: '1.08390000',
};

export async function startFakeTicker(options: FakeTickerOptions = {}): Promise<FakeTicker> {
  const requests: string[] = [];
  const state = { mode: 'ok' as FakeTickerMode, options };

  const json = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(body);
  };
  const dec = (text: string): string => (state.options.numbersUnquoted ? text : JSON.stringify(text));

  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://fake');
    if (state.mode === 'error500') return json(res, 500, '{"errors":[{"id":"internal_server_error","message":"boom"}]}');
    if (state.mode === 'malformed') return json(res, 200, '{"data":{"currency":"EUR","rates":{"USDT":"1.08');
    if (req.method === 'GET' && url.pathname === '/v2/exchange-rates') {
      const base = (url.searchParams.get('currency') ?? 'USD').toUpperCase();
      const table = (state.options.coinbaseRates ?? DEFAULT_COINBASE_RATES)[base];
      if (!table) return json(res, 400, '{"errors":[{"id":"invalid_request","message":"Invalid currency"}]}');
      const rates = Object.entries(table)
        .map(([k, v]) => `${JSON.stringify(k)}:${dec(v)}`)
        .join(',');
      const answered = state.options.coinbaseAnswerBase ?? base;
      return json(res, 200, `{"data":{"currency":${JSON.stringify(answered)},"rates":{${rates}}}}`);
    }
    if (req.method === 'GET' && url.pathname === '/api/v3/ticker/price') {
      const symbol = url.searchParams.get('symbol') ?? '';
      const price = (state.options.binancePrices ?? DEFAULT_BINANCE_PRICES)[symbol];
      if (price === undefined) return json(res, 400, '{"code":-1121,"msg":"Invalid symbol."}');
      return json(res, 200, `{"symbol":${JSON.stringify(symbol)},"price":${dec(price)}}`);
    }
    return json(res, 404, '{"errors":[{"id":"not_found","message":"Not found"}]}');
  };

  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const mode = state.mode;
    if (mode === 'hang') return; // never answers; close() tears the socket down
    if (typeof mode === 'object') {
      const t = setTimeout(() => answer(req, res), mode.delayMs);
      res.on('close', () => clearTimeout(t));
      return;
    }
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(m: FakeTickerMode) {
      state.mode = m;
    },
    get options() {
      return state.options;
    },
    set options(o: FakeTickerOptions) {
      state.options = o;
    },
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((e) => (e ? reject(e) : resolve()));
      }),
  };
}
