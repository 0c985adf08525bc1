import { SignerUnavailableError } from '../domain/signer-errors.js';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, KeyDeriver, TokenContract, TokenSymbol } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import { ApiError, invalidRequest, parameterInvalid, parameterMissing, parameterUnknown, resourceNotFound } from '../domain/errors.js';
import { formatBaseUnits, stablecoinMinorToBase } from '../domain/money.js';
import { jsonObjectBody } from '../api/json-body.js';
import { selectSessionNetwork } from '../ledger/payments/network-selection.js';
import type { SessionRow } from '../ledger/payments/sessions.js';

export interface CheckoutSelectDeps {
  db: Kysely<Database>;
  /** The configured chains (createVerifiedAdapters). */
  adapters: ChainRegistry;
  /** Mnemonic signer or watch-only xpub deriver. */
  keys: KeyDeriver;
  /** Called after a payer's choice is stored on a chain whose addresses need preparing (a Solana ATA). */
  onSelected?: (sessionId: string) => Promise<void>;
}

export type SelectOutcome =
  | { kind: 'selected'; session: SessionRow; adapter: ChainAdapter; token: TokenContract }
  | { kind: 'not_found' }
  | { kind: 'pinned'; param: 'network' | 'token'; required: string }
  | { kind: 'unavailable' }
  | { kind: 'not_offered'; token: TokenSymbol }
  | { kind: 'not_open'; session: SessionRow }
  | { kind: 'locked'; session: SessionRow }
  /** The signer role did not answer the deposit address's public key: nothing was changed; retry. */
  | { kind: 'signer_unavailable' };

/** The merchant's pins (metadata `network`, `target_currency`), normalised. */
export function sessionPins(s: Pick<SessionRow, 'metadata'>): { network?: string; token?: string } {
  const network = s.metadata?.network?.toLowerCase();
  const token = s.metadata?.target_currency?.toUpperCase();
  return { ...(network ? { network } : {}), ...(token ? { token } : {}) };
}

/**
 * Binds a session to a network and stablecoin (respecting the merchant's pins) and its deposit address. Shared by the
 * JSON route below and the hosted page's form. Never throws for a business refusal: the caller maps the outcome.
 */
export async function selectNetworkForSession(
  deps: CheckoutSelectDeps,
  sessionId: string,
  network: string,
  token: TokenSymbol,
): Promise<SelectOutcome> {
  const session = await deps.db.selectFrom('payment_sessions').selectAll().where('id', '=', sessionId).executeTakeFirst();
  if (!session) return { kind: 'not_found' };
  const pins = sessionPins(session);
  if (pins.network && pins.network !== network) return { kind: 'pinned', param: 'network', required: pins.network };
  if (pins.token && pins.token !== token) return { kind: 'pinned', param: 'token', required: pins.token };
  const adapter = deps.adapters.get(network, session.mode);
  const tokenInfo = deps.adapters.token(network, session.mode, token);
  if (!adapter || !tokenInfo) return { kind: 'unavailable' };

  let address: string;
  try {
    address = await adapter.deriveDepositAddress(deps.keys, session.hd_account, session.address_index);
  } catch (err) {
    if (err instanceof SignerUnavailableError) return { kind: 'signer_unavailable' };
    throw err;
  }
  const r = await selectSessionNetwork(deps.db, session.id, { network: adapter.network, token, address });
  switch (r.kind) {
    case 'selected':
      // Only where an address needs preparing; best effort: the payer's wallet creates a missing token account itself.
      if (adapter.buildDepositSetup) deps.onSelected?.(r.session.id).catch(() => {});
      return { kind: 'selected', session: r.session, adapter, token: tokenInfo };
    case 'not_found':
      return { kind: 'not_found' };
    case 'not_open':
      return { kind: 'not_open', session: r.session };
    case 'not_offered':
      return { kind: 'not_offered', token };
    case 'locked':
      return { kind: 'locked', session: r.session };
    default: {
      const never: never = r;
      return never;
    }
  }
}

/**
 * POST <path>/:id/select {network, token} — public, JSON. Registered at `/checkout/sessions/:id/select` (kept for
 * integrations) and under the hosted page's URL space. Answers the deposit address and the exact amount due, both in
 * token units as a decimal string and in base units. The amount is the chosen coin's quote locked at creation; a coin
 * that could not be quoted then is refused (400 parameter_invalid, param token).
 */
export function registerCheckoutSelectRoute(app: FastifyInstance, deps: CheckoutSelectDeps, path = '/checkout/sessions/:id/select'): void {
  app.post<{ Params: { id: string } }>(path, async (req, reply) => {
    const body = jsonObjectBody(req);
    for (const k of Object.keys(body)) if (k !== 'network' && k !== 'token') throw parameterUnknown(k);
    const network = body.network;
    const token = body.token;
    if (network === undefined) throw parameterMissing('network');
    if (token === undefined) throw parameterMissing('token');
    if (typeof network !== 'string') throw parameterInvalid('network', 'network must be a string');
    if (token !== 'USDT' && token !== 'USDC') throw parameterInvalid('token', 'token must be USDT or USDC');

    const r = await selectNetworkForSession(deps, req.params.id, network, token);
    switch (r.kind) {
      case 'not_found':
        throw resourceNotFound('id', 'session');
      case 'pinned':
        throw r.param === 'network'
          ? parameterInvalid('network', `The merchant requires network ${r.required}.`)
          : parameterInvalid('token', `The merchant requires ${r.required}.`);
      case 'unavailable':
        throw parameterInvalid('network', `${token} on ${network} is not available.`);
      case 'not_offered':
        throw parameterInvalid('token', `${r.token} is not offered for this session: no exchange rate could be locked for it at creation.`);
      case 'not_open':
        throw r.session.status === 'paid'
          ? invalidRequest('INVALID_SESSION_STATUS', 'The session is already paid.')
          : invalidRequest('session_expired', 'The session is no longer open for payment.');
      case 'signer_unavailable':
        throw new ApiError(503, 'api_error', 'signer_unavailable', 'The signing service is unavailable; nothing was changed. Retry later.');
      case 'locked':
        throw new ApiError(
          409,
          'invalid_request_error',
          'selection_locked',
          'A payment was already received on the chosen network and token.',
        );
      case 'selected': {
        const s = r.session;
        const decimals = r.token.decimals;
        const due = stablecoinMinorToBase(s.target_amount_minor, decimals);
        const remaining = due > s.received_base ? due - s.received_base : 0n;
        return reply.code(200).send({
          session_id: s.id,
          network,
          token,
          token_contract: r.adapter.displayAddress(r.token.address),
          token_decimals: decimals,
          deposit_address: r.adapter.displayAddress(s.deposit_address!),
          amount_due: formatBaseUnits(due, decimals),
          amount_due_base: due.toString(),
          amount_remaining: formatBaseUnits(remaining, decimals),
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
