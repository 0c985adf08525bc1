import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Kysely } from 'kysely';
import type { Db } from '../../db/database.js';
import type { Database } from '../../db/schema.js';
import { NO_CHAINS, type ChainLookup } from '../../domain/chain-lookup.js';
import { currencyExponent } from '../../domain/currency.js';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';
import { invalidRequest, rateUnavailable, resourceNotFound } from '../../domain/errors.js';
import { newId } from '../../domain/ids.js';
import { isIdempotencyKeyTaken, requestFingerprint, storeResponse, type IdempotencyScope } from '../../ledger/core/idempotency.js';
import { isOrderIdTaken, cancelSession, insertSession, listSessions, ownedBy, type SessionRow } from '../../ledger/payments/sessions.js';
import { convertMinor, formatRate, RateUnavailableError, type RateService } from '../../rates/index.js';
import { jsonObjectBody, refuseAnyField, refuseBadStrings, validate } from '../json-body.js';
import { serializeSession } from '../serializers/session.js';
import { sessionReceivedFields, type ReceivedPayment } from '../../domain/events/session-received.js';
import { findSessionReceived, receivedPayments } from '../../ledger/payments/session-payments.js';
import { parseCreateSession, type CreateSessionInput } from './session-input.js';
import type { Coin, LockedQuote } from '../../ledger/payments/locked-quotes.js';
import { actionIdempotency, replayStored } from './idempotent-replay.js';
import { idempotencyKeyOf, pageEnvelope, pageQuery, pageRequest, unknownPageCursor } from './query.js';

export interface SessionRouteDeps {
  db: Db;
  rates: RateService;
  checkoutBaseUrl: string;
  /** SESSION_LIFETIME_SECONDS: the lifetime of sessions of merchants without their own. */
  sessionLifetimeSeconds: number;
  /** Called after a session commits (schedules its expiry job). Failures are logged, never surfaced. */
  onSessionCreated?: (s: SessionRow) => Promise<void>;
  /** The configured chains (token decimals of a shortfall); absent: none. */
  chains?: ChainLookup;
}

const IDEMPOTENCY_SCOPE = 'checkout.sessions.create';
const CANCEL_IDEMPOTENCY_SCOPE = 'checkout.sessions.cancel';

/** Query of GET /checkout/sessions (also the OpenAPI document's parameters). */
export const sessionListQuery = pageQuery({
  status: z.enum(['open', 'paid', 'expired', 'canceled']).optional(),
  order_id: z.string().max(255).optional(),
});

/** The cancel operations take no field: no body or `{}` (refuseAnyField). */
export const emptyBody = z.strictObject({});

export function registerSessionRoutes(app: FastifyInstance, deps: SessionRouteDeps): void {
  const render = (s: SessionRow, includeLineItems = true) =>
    serializeSession(s, {
      checkoutBaseUrl: deps.checkoutBaseUrl,
      includeLineItems,
      tokenDecimals: (deps.chains ?? NO_CHAINS).tokenDecimals,
    });

  /** GET shapes: the session plus what it received (extension, docs/checkout.md "What a session received"), one query. */
  const renderWithReceived = async (rows: SessionRow[]) => {
    const payments = await receivedPayments(
      deps.db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => ({ ...render(r), ...receivedFieldsOf(r, payments.get(r.id) ?? []) }));
  };
  const receivedFieldsOf = (r: SessionRow, payments: ReceivedPayment[]) => {
    const chains = deps.chains ?? NO_CHAINS;
    return sessionReceivedFields(
      { status: r.status, token: r.token, targetAmountMinor: r.target_amount_minor, receivedBase: r.received_base },
      payments,
      (network, token) => chains.tokenDecimals(network, r.mode, token),
      (network, canonical) => chains.displayAddress(network, r.mode, canonical),
    );
  };

  app.post('/checkout/sessions/create', async (req, reply) => {
    const auth = req.auth!;
    const body = jsonObjectBody(req);
    const idemKey = idempotencyKeyOf(req);
    const scope: IdempotencyScope | undefined = idemKey
      ? { merchantId: auth.merchantId, mode: auth.mode, scope: IDEMPOTENCY_SCOPE, key: idemKey }
      : undefined;
    const fingerprint = requestFingerprint(body);

    if (scope) {
      const replay = await replayStored(deps.db, scope, fingerprint, reply);
      if (replay) return replay;
    }

    const input = parseCreateSession(body);
    const locked = await lockQuotes(deps.rates, input);
    const conversion = locked.quotes[locked.target]!;

    try {
      // With an idempotency key the session and the stored response commit together; without one the insert is the
      // only write and runs on its own (one round trip instead of BEGIN, INSERT, COMMIT).
      const write = async (trx: Kysely<Database>) => {
        const session = await insertSession(trx, {
          defaultLifetimeSeconds: deps.sessionLifetimeSeconds,
          id: newId('cs'),
          merchantId: auth.merchantId,
          mode: auth.mode,
          orderId: input.orderId,
          amountMinor: input.amountMinor,
          currency: input.currency,
          description: input.description,
          merchantDomainId: input.merchantDomainId,
          lineItems: input.lineItems,
          taxMinor: input.taxMinor,
          shippingMinor: input.shippingMinor,
          successUrl: input.successUrl,
          cancelUrl: input.cancelUrl,
          metadata: input.metadata,
          targetCurrency: locked.target,
          targetAmountMinor: conversion.amountMinor,
          exchangeRate: conversion.exchangeRate,
          rateLockedAt: locked.lockedAt,
          network: input.pinnedNetwork,
          token: input.pinnedNetwork ? locked.target : null,
          quotes: locked.quotes,
        });
        // A new session has received nothing: the extension fields without a query, so GET answers the same shape.
        return { session, payload: JSON.stringify({ ...render(session), ...receivedFieldsOf(session, []) }) };
      };
      const { session, payload } = scope
        ? await deps.db.transaction().execute(async (trx) => {
            const written = await write(trx);
            await storeResponse(trx, scope, { requestHash: fingerprint, status: 200, body: written.payload });
            return written;
          })
        : await write(deps.db);
      if (deps.onSessionCreated) {
        deps
          .onSessionCreated(session)
          .catch((err: unknown) => req.log.warn({ err, session: session.id }, 'expiry scheduling failed; the sweeper will expire it'));
      }
      return reply.code(200).type('application/json').send(payload);
    } catch (err) {
      // A concurrent twin won the race: replay its response when it carried the same key, else report the conflict.
      if (scope && (isOrderIdTaken(err) || isIdempotencyKeyTaken(err))) {
        const replay = await replayStored(deps.db, scope, fingerprint, reply);
        if (replay) return replay;
      }
      if (isOrderIdTaken(err)) {
        throw invalidRequest('order_id_conflict', `A payment session with order_id ${input.orderId} already exists.`, 'order_id');
      }
      throw err;
    }
  });

  // One statement: the session and its deposits joined (docs/performance.md, "API auth path").
  app.get('/checkout/sessions/:session_id', async (req) => {
    const auth = req.auth!;
    const found = await findSessionReceived(deps.db, sessionIdParam(req));
    if (!found || !ownedBy(found.session, auth.merchantId, auth.mode)) throw resourceNotFound('session_id', 'payment session');
    return { ...render(found.session), ...receivedFieldsOf(found.session, found.payments) };
  });

  // With an Idempotency-Key (an extension, docs/errors.md "Retrying safely") a retry gets the stored 200 again,
  // where a retry without one finds the session canceled and is refused (session_expired).
  app.post('/checkout/sessions/:session_id/cancel', async (req, reply) => {
    const auth = req.auth!;
    const body = jsonObjectBody(req);
    refuseAnyField(body); // no body or `{}` (decisions.md: unknown fields are refused)
    const id = sessionIdParam(req);
    const idem = actionIdempotency(deps.db, req, CANCEL_IDEMPOTENCY_SCOPE, id, body);
    const earlier = await idem?.replay(reply);
    if (earlier) return earlier;
    const r = await cancelSession(deps.db, auth.merchantId, auth.mode, id, idem && ((trx, s) => idem.store(trx, render(s, false))));
    switch (r.kind) {
      case 'canceled':
        return render(r.session, false);
      case 'not_found':
        throw resourceNotFound('session_id', 'payment session');
      case 'expired':
      case 'paid': {
        // A twin with the same key canceled it while this one waited for the row: its answer is this one's.
        const twin = await idem?.replay(reply);
        if (twin) return twin;
        if (r.kind === 'paid') throw invalidRequest('INVALID_SESSION_STATUS', 'A paid payment session cannot be canceled.', 'session_id');
        throw invalidRequest('session_expired', 'The payment session has already expired or been canceled.', 'session_id');
      }
    }
  });

  // Operator list, page style (decisions.md: Lists and pagination).
  app.get('/checkout/sessions', async (req) => {
    const auth = req.auth!;
    refuseBadStrings(req.query);
    const q = validate(sessionListQuery, req.query);
    const p = pageRequest(q, 'cs');
    const page = await listSessions(deps.db, auth.merchantId, auth.mode, {
      offset: p.offset,
      limit: p.page_size,
      after: p.after,
      status: q.status,
      orderId: q.order_id,
    });
    if (!page) throw unknownPageCursor();
    return pageEnvelope(p, await renderWithReceived(page.rows), page.total, page.position, page.rows.at(-1)?.id);
  });
}

/**
 * Locks the quote of every coin the payer may pay with, for the session's life: the merchant's pinned coin alone, else
 * USDT and USDC (one rate-service call each, in parallel). The default coin falls back to the other when it cannot be
 * quoted (unless pinned); a coin that cannot be quoted is not offered; none quotable is 503 rate_unavailable.
 */
async function lockQuotes(rates: RateService, input: CreateSessionInput) {
  const pinned = input.metadata.target_currency !== undefined;
  const coins: Coin[] = pinned ? [input.targetCurrency] : [input.targetCurrency, input.targetCurrency === 'USDT' ? 'USDC' : 'USDT'];
  const answers = await Promise.all(coins.map((coin) => quoteCoin(rates, input.currency, coin, input.amountMinor)));
  const quotes: Partial<Record<Coin, LockedQuote>> = {};
  coins.forEach((coin, i) => {
    if (answers[i]) quotes[coin] = answers[i];
  });
  const target = coins.find((c) => quotes[c] !== undefined);
  if (!target) throw rateUnavailable();
  const converted = Object.values(quotes).some((q) => q.exchangeRate !== null);
  // Locked now, for the session's life, whatever the age of a cached quote.
  return { target, quotes, lockedAt: converted ? new Date() : null };
}

/** One coin's quote; undefined when no rate source can answer (RateUnavailableError). */
async function quoteCoin(rates: RateService, currency: string, coin: Coin, amountMinor: bigint): Promise<LockedQuote | undefined> {
  if (currency === coin) return { amountMinor, exchangeRate: null };
  try {
    const q = await rates.quote(currency, coin);
    return {
      amountMinor: convertMinor(amountMinor, currencyExponent(currency)!, q.rate, STABLECOIN_EXPONENT),
      exchangeRate: formatRate(q.rate),
    };
  } catch (err) {
    if (err instanceof RateUnavailableError) return undefined;
    throw err;
  }
}

function sessionIdParam(req: FastifyRequest): string {
  const id = (req.params as { session_id?: string }).session_id ?? '';
  // Ids are opaque but only ever made of [A-Za-z0-9_]; anything else cannot name a session.
  if (!/^[A-Za-z0-9_]{1,255}$/.test(id)) throw resourceNotFound('session_id', 'payment session');
  return id;
}
