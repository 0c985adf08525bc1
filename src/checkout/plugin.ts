import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Kysely } from 'kysely';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { KeyDeriver } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import { resourceNotFound } from '../domain/errors.js';
import { formatMinor, stablecoinMinorToBase } from '../domain/money.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import { lockedQuote } from '../ledger/payments/locked-quotes.js';
import { NETWORK_IDS, TOKEN_SYMBOLS } from '../../chains/types.js';
import { loadCheckoutAssets, type Asset } from './assets.js';
import { pickLanguage, isLang, type Lang } from './i18n.js';
import type { LiveStatus } from './live-status.js';
import { LiveHub } from './live-hub.js';
import { clientIpBucket } from '../api/client-ip.js';
import { RateLimitedError } from '../api/rate-limit-http.js';
import type { MessageKey } from './messages/en.js';
import {
  arrivedTransfers,
  liveStatusOf,
  loadPageSession,
  reloadSession,
  SESSION_ID,
  type LiveDeps,
  type PageSession,
} from './page-data.js';
import { qrSvg } from './qr.js';
import { renderMessagePage, renderPage, type PaymentInstructions, type PaymentOption } from './render-page.js';
import { setPageHeaders } from './security-headers.js';
import { registerCheckoutSelectRoute, selectNetworkForSession, sessionPins, type CheckoutSelectDeps } from './select-route.js';

// The hosted payment page and its endpoints, under the path of the configured checkout base URL (default /pay):
//   GET  {base}/:id            the page (HTML)             POST {base}/:id/select   the picker's form post (303 back)
//   GET  {base}/:id/status     live status (JSON)          GET  {base}/:id/events   live status (server-sent events)
//   GET  {base}/:id/return     303 to success_url once paid GET {base}/:id/back     303 to cancel_url
//   GET  {base}/assets/:name   the script and stylesheet (content-hashed, immutable)
// plus the JSON selection API at POST /checkout/sessions/:id/select (select-route.ts).

export interface CheckoutDeps {
  db: Kysely<Database>;
  /** The configured chains, with their confirmation depths and chain ids (createVerifiedAdapters). */
  adapters: ChainRegistry;
  /** Derives deposit addresses; without it payers cannot select a network (the page says so). */
  keys: KeyDeriver | null;
  checkoutBaseUrl: string;
  /** Called after a payer's choice is stored (see CheckoutSelectDeps.onSelected). */
  onSelected?: (sessionId: string) => Promise<void>;
  /** How often a live-status stream re-reads the session. */
  statusIntervalMs?: number;
  /** Heartbeat comment interval of the stream (proxies close silent connections). */
  heartbeatMs?: number;
  /** Live streams per session and per client IP in this process; absent or 0: no cap. */
  streamsPerSession?: number;
  streamsPerIp?: number;
  /** Live streams of this process in all; absent or 0: no cap. */
  streamsTotal?: number;
  /** Told of every status read of the live streams (tests count them). */
  onStatusRead?: (sessionId: string) => void;
}

const FORM_ERRORS: Record<string, MessageKey> = {
  session_expired: 'error.session_expired',
  selection_locked: 'error.selection_locked',
  unavailable: 'error.unavailable',
  pinned: 'error.pinned',
  bad_choice: 'error.bad_choice',
  paid: 'error.paid',
};

const STREAMS_FULL = {
  session: 'Too many live streams for this payment session; poll its status instead. Retry after 10 s.',
  ip: 'Too many live streams from this address; poll the status instead. Retry after 10 s.',
  total: 'Too many live streams on this server; poll the status instead. Retry after 10 s.',
} as const;

function checkoutBasePath(checkoutBaseUrl: string): string {
  return new URL(checkoutBaseUrl).pathname.replace(/\/+$/, '');
}

export function registerCheckout(app: FastifyInstance, deps: CheckoutDeps): void {
  const base = checkoutBasePath(deps.checkoutBaseUrl);
  const assets = loadCheckoutAssets();
  const byName = new Map<string, Asset>([assets.script, assets.style].map((a) => [a.name, a]));
  const live: LiveDeps = { db: deps.db, adapters: deps.adapters };
  const selectDeps: CheckoutSelectDeps | null = deps.keys
    ? { db: deps.db, adapters: deps.adapters, keys: deps.keys, onSelected: deps.onSelected }
    : null;
  const intervalMs = deps.statusIntervalMs ?? 1000;
  const heartbeatMs = deps.heartbeatMs ?? 15_000;
  const pathOf = (id: string) => `${base}/${id}`;
  const returnPath = (id: string) => `${pathOf(id)}/return`;

  if (selectDeps) registerCheckoutSelectRoute(app, selectDeps);

  app.get<{ Params: { name: string } }>(`${base}/assets/:name`, async (req, reply) => {
    const a = byName.get(req.params.name);
    if (!a) throw resourceNotFound('name', 'asset');
    return reply
      .header('Content-Type', a.contentType)
      .header('Cache-Control', 'public, max-age=31536000, immutable')
      .header('X-Content-Type-Options', 'nosniff')
      .send(a.body);
  });

  /**
   * Networks × tokens the deployment enables for this session's mode, minus what the merchant's pins exclude and the
   * coins that have no quote locked at creation; with a conversion, each option shows its coin's locked amount.
   */
  function optionsFor(s: PageSession['row']): PaymentOption[] {
    const pins = sessionPins(s);
    const out: PaymentOption[] = [];
    for (const network of NETWORK_IDS) {
      if (pins.network && pins.network !== network) continue;
      const adapter = deps.adapters.get(network, s.mode);
      if (!adapter) continue;
      for (const token of TOKEN_SYMBOLS) {
        if (pins.token && pins.token !== token) continue;
        if (!deps.adapters.token(network, s.mode, token)) continue;
        const quote = lockedQuote(s, token);
        if (!quote) continue;
        const amount = quote.exchangeRate !== null ? `${formatMinor(quote.amountMinor, STABLECOIN_EXPONENT)} ${token}` : null;
        out.push({ network, token, checked: s.network === network && s.token === token, amount });
      }
    }
    return out;
  }

  async function instructionsFor(p: PageSession, status: LiveStatus): Promise<PaymentInstructions | null> {
    const s = p.row;
    if (!s.deposit_address || !s.network || !s.token) return null;
    if (status.state !== 'waiting' && status.state !== 'partial' && status.state !== 'confirming') return null;
    const adapter = deps.adapters.get(s.network, s.mode);
    const token = deps.adapters.token(s.network, s.mode, s.token);
    if (!adapter || !token) return null;
    const due = stablecoinMinorToBase(s.target_amount_minor, token.decimals);
    const remaining = BigInt(status.remaining_base ?? due.toString());
    const amountBase = remaining > 0n ? remaining : due;
    const partial = remaining > 0n && remaining < due;
    const link = await adapter.paymentLink({ token, depositAddress: s.deposit_address, amountBase, label: p.merchantName });
    return {
      network: s.network,
      token: s.token,
      address: adapter.displayAddress(s.deposit_address),
      contract: adapter.displayAddress(token.address),
      amount: partial ? (status.remaining ?? '') : (status.due ?? ''),
      amountBase: amountBase.toString(),
      remainingOnly: partial,
      deepLink: link.href,
      qrSvg: await qrSvg(link.qr),
    };
  }

  function notFoundPage(reply: FastifyReply, lang: Lang) {
    return setPageHeaders(reply)
      .code(404)
      .type('text/html; charset=utf-8')
      .send(renderMessagePage(lang, assets, base, 'notfound.title', 'notfound.body'));
  }

  app.get<{ Params: { id: string }; Querystring: Record<string, string | undefined> }>(`${base}/:id`, async (req, reply) => {
    const query = req.query ?? {};
    const lang = pickLanguage(query.lang, req.headers['accept-language']);
    try {
      let page = await loadPageSession(deps.db, req.params.id);
      if (!page) return notFoundPage(reply, lang);
      const options = optionsFor(page.row);
      let status = await liveStatusOf(live, page.row, { returnPath: returnPath(page.row.id) });
      // A single possible choice (the merchant pinned it, or only one is enabled) needs no picker.
      if (status.state === 'select' && options.length === 1 && selectDeps) {
        const only = options[0]!;
        const r = await selectNetworkForSession(selectDeps, page.row.id, only.network, only.token);
        if (r.kind === 'selected') {
          page = { ...page, row: r.session };
          status = await liveStatusOf(live, page.row, { returnPath: returnPath(page.row.id) });
        }
      }
      const pins = sessionPins(page.row);
      const canChange = status.state === 'waiting' && options.length > 1;
      const showPicker = status.state === 'select' || (query.change === '1' && canChange);
      const payment = showPicker ? null : await instructionsFor(page, status);
      const errorKey = query.error && Object.hasOwn(FORM_ERRORS, query.error) ? FORM_ERRORS[query.error]! : null;
      const arrived = status.state === 'paid' ? await arrivedTransfers(live, page.row) : [];
      const htmlText = renderPage({
        lang,
        basePath: base,
        assets,
        session: page,
        live: status,
        options: selectDeps ? options : [],
        showPicker,
        pinned: pins,
        canChange,
        payment,
        arrived,
        error: errorKey,
        serverNow: Math.floor(Date.now() / 1000),
      });
      return setPageHeaders(reply).code(200).type('text/html; charset=utf-8').send(htmlText);
    } catch (err) {
      req.log.error({ err }, 'checkout page failed');
      return setPageHeaders(reply)
        .code(500)
        .type('text/html; charset=utf-8')
        .send(renderMessagePage(lang, assets, base, 'error.title', 'error.body'));
    }
  });

  app.post<{ Params: { id: string } }>(`${base}/:id/select`, async (req, reply) => {
    const id = req.params.id;
    if (!SESSION_ID.test(id)) return notFoundPage(reply, pickLanguage(undefined, req.headers['accept-language']));
    const form = new URLSearchParams(req.rawBody ? req.rawBody.toString('utf8') : '');
    const langParam = form.get('lang');
    const lang = isLang(langParam) ? langParam : pickLanguage(undefined, req.headers['accept-language']);
    const back = (error?: string) =>
      reply
        .code(303)
        .header('Cache-Control', 'no-store')
        .redirect(`${pathOf(id)}?lang=${lang}${error ? `&error=${error}` : ''}`, 303);
    const [network = '', token = ''] = (form.get('choice') ?? '').split(':');
    if (!(NETWORK_IDS as readonly string[]).includes(network) || (token !== 'USDT' && token !== 'USDC')) return back('bad_choice');
    if (!selectDeps) return back('unavailable');
    const r = await selectNetworkForSession(selectDeps, id, network, token);
    switch (r.kind) {
      case 'selected':
        return back();
      case 'not_found':
        return notFoundPage(reply, lang);
      case 'pinned':
        return back('pinned');
      case 'unavailable':
      case 'not_offered':
      case 'signer_unavailable':
        return back('unavailable');
      case 'not_open':
        return back(r.session.status === 'paid' ? 'paid' : 'session_expired');
      case 'locked':
        return back('selection_locked');
      default: {
        const never: never = r;
        return never;
      }
    }
  });

  async function statusOr404(id: string): Promise<LiveStatus> {
    const row = SESSION_ID.test(id) ? await reloadSession(deps.db, id) : undefined;
    if (!row) throw resourceNotFound('id', 'payment session');
    return liveStatusOf(live, row, { returnPath: returnPath(id) });
  }

  app.get<{ Params: { id: string } }>(`${base}/:id/status`, async (req, reply) => {
    const status = await statusOr404(req.params.id);
    return reply.header('Cache-Control', 'no-store').header('X-Content-Type-Options', 'nosniff').send(status);
  });

  app.get<{ Params: { id: string } }>(`${base}/:id/return`, async (req, reply) => {
    const row = SESSION_ID.test(req.params.id) ? await reloadSession(deps.db, req.params.id) : undefined;
    if (!row) return notFoundPage(reply, pickLanguage(undefined, req.headers['accept-language']));
    const target = row.status === 'paid' && row.success_url ? row.success_url : pathOf(row.id);
    return reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer').redirect(target, 303);
  });

  app.get<{ Params: { id: string } }>(`${base}/:id/back`, async (req, reply) => {
    const row = SESSION_ID.test(req.params.id) ? await reloadSession(deps.db, req.params.id) : undefined;
    if (!row) return notFoundPage(reply, pickLanguage(undefined, req.headers['accept-language']));
    const target = row.status !== 'paid' && row.cancel_url ? row.cancel_url : pathOf(row.id);
    return reply.header('Cache-Control', 'no-store').header('Referrer-Policy', 'no-referrer').redirect(target, 303);
  });

  // Server-sent events: the status whenever it changes, a heartbeat comment, the end after paid or canceled. The
  // browser's EventSource reconnects by itself after a drop; each connection starts with the current status. All
  // streams of a session share one status read per interval (live-hub.ts); a stream over a cap answers 429, and the
  // page then polls /status instead.
  const streams = new Set<ServerResponse>();
  const hub = new LiveHub({
    intervalMs,
    perSession: deps.streamsPerSession ?? 0,
    perIp: deps.streamsPerIp ?? 0,
    total: deps.streamsTotal ?? 0,
    read: async (id) => {
      deps.onStatusRead?.(id);
      const row = await reloadSession(deps.db, id);
      return row ? liveStatusOf(live, row, { returnPath: returnPath(id) }) : undefined;
    },
    onReadError: (err, id) => app.log.warn({ err, session_id: id }, 'checkout status stream read failed'),
  });
  app.addHook('preClose', async () => {
    hub.close();
    for (const res of streams) res.end();
    streams.clear();
  });

  app.get<{ Params: { id: string } }>(`${base}/:id/events`, async (req, reply) => {
    const id = req.params.id;
    if (!SESSION_ID.test(id)) throw resourceNotFound('id', 'payment session');
    const res = reply.raw;
    let last = '';
    let closed = false;
    let leave = () => {};
    let heartbeat: NodeJS.Timeout | undefined;
    const send = (status: LiveStatus) => {
      if (closed || !res.headersSent) return;
      const json = JSON.stringify(status);
      if (json !== last) {
        res.write(`data: ${json}\n\n`);
        last = json;
      }
      if (status.state === 'paid' || status.state === 'canceled') close();
    };
    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      leave();
      streams.delete(res);
      if (!res.writableEnded) res.end();
    };
    const admission = await hub.join(id, clientIpBucket(req.ip), send);
    if (admission.kind === 'not_found') throw resourceNotFound('id', 'payment session');
    if (admission.kind === 'full') {
      throw new RateLimitedError(STREAMS_FULL[admission.scope], { 'Retry-After': '10' });
    }
    leave = admission.leave;
    reply.hijack();
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    streams.add(res);
    heartbeat = setInterval(() => res.write(': ping\n\n'), heartbeatMs);
    req.raw.on('close', close);
    res.on('close', close);
    // A client gone while it was being admitted fired no close event we heard: its slot is freed here.
    if (!res.socket || res.socket.destroyed) return close();
    res.write(`retry: 3000\n\n`);
    send(admission.status);
  });
}
