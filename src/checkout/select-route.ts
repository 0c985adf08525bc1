import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { ChainAdapter, KeyDeriver } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import { ApiError, invalidRequest, parameterInvalid, parameterMissing, parameterUnknown, resourceNotFound } from '../domain/errors.js';
import { formatBaseUnits, stablecoinMinorToBase } from '../domain/money.js';
import { jsonObjectBody } from '../api/json-body.js';
import { selectSessionNetwork } from '../ledger/network-selection.js';

export interface CheckoutSelectDeps {
  db: Kysely<Database>;
  /** Adapters by chain key "network:mode" (startChainWatchers / createVerifiedAdapters). */
  adapters: ReadonlyMap<string, ChainAdapter>;
  /** Mnemonic signer or watch-only xpub deriver. */
  keys: KeyDeriver;
}

/**
 * POST /checkout/sessions/:id/select {network, token} — public, called by the hosted payment page.
 * Binds the session to a network and stablecoin (respecting the merchant's pins in metadata `network` and
 * `target_currency`) and answers the deposit address and the exact amount due, both in token units as a decimal
 * string and in base units. USDT and USDC are taken at par: the locked target amount does not change with the choice.
 */
export function registerCheckoutSelectRoute(app: FastifyInstance, deps: CheckoutSelectDeps): void {
  app.post<{ Params: { id: string } }>('/checkout/sessions/:id/select', async (req, reply) => {
    const body = jsonObjectBody(req);
    for (const k of Object.keys(body)) if (k !== 'network' && k !== 'token') throw parameterUnknown(k);
    const network = body.network;
    const token = body.token;
    if (network === undefined) throw parameterMissing('network');
    if (token === undefined) throw parameterMissing('token');
    if (typeof network !== 'string') throw parameterInvalid('network', 'network must be a string');
    if (token !== 'USDT' && token !== 'USDC') throw parameterInvalid('token', 'token must be USDT or USDC');

    const session = await deps.db.selectFrom('payment_sessions').selectAll().where('id', '=', req.params.id).executeTakeFirst();
    if (!session) throw resourceNotFound('id', 'session');
    const pinnedNetwork = session.metadata?.network;
    const pinnedToken = session.metadata?.target_currency;
    if (pinnedNetwork && pinnedNetwork.toLowerCase() !== network) throw parameterInvalid('network', `The merchant requires network ${pinnedNetwork}.`);
    if (pinnedToken && pinnedToken.toUpperCase() !== token) throw parameterInvalid('token', `The merchant requires ${pinnedToken.toUpperCase()}.`);
    const adapter = deps.adapters.get(`${network}:${session.mode}`);
    const tokenInfo = adapter?.tokens.find((t) => t.symbol === token);
    if (!adapter || !tokenInfo) throw parameterInvalid('network', `${token} on ${network} is not available.`);

    const address = await adapter.deriveDepositAddress(deps.keys, session.hd_account, session.address_index);
    const r = await selectSessionNetwork(deps.db, session.id, { network, token, address });
    switch (r.kind) {
      case 'not_found':
        throw resourceNotFound('id', 'session');
      case 'not_open':
        throw r.session.status === 'paid'
          ? invalidRequest('INVALID_SESSION_STATUS', 'The session is already paid.')
          : invalidRequest('session_expired', 'The session is no longer open for payment.');
      case 'locked':
        throw new ApiError(409, 'invalid_request_error', 'selection_locked', 'A payment was already received on the chosen network and token.');
      case 'selected': {
        const s = r.session;
        const due = stablecoinMinorToBase(s.target_amount_minor, tokenInfo.decimals);
        const remaining = due > s.received_base ? due - s.received_base : 0n;
        return reply.code(200).send({
          session_id: s.id,
          network,
          token,
          token_contract: adapter.displayAddress(tokenInfo.address),
          token_decimals: tokenInfo.decimals,
          deposit_address: adapter.displayAddress(address),
          amount_due: formatBaseUnits(due, tokenInfo.decimals),
          amount_due_base: due.toString(),
          amount_remaining: formatBaseUnits(remaining, tokenInfo.decimals),
          amount_remaining_base: remaining.toString(),
          expires_at: Math.floor(s.expires_at.getTime() / 1000),
        });
      }
      default: {
        const never: never = r;
        return never;
      }
    }
  });
}
