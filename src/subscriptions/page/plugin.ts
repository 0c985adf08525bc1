import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { ChainRegistry } from '../../../chains/chain-registry.js';
import { isAllowanceCharger } from '../../../chains/types.js';
import type { Db } from '../../db/database.js';
import { formatBaseUnits, formatMinor, stablecoinMinorToBase } from '../../domain/money.js';
import { STABLECOIN_EXPONENT } from '../../../chains/vocabulary.js';
import { applyApproval, recordAuthorizationChoice, type LifecycleDeps } from '../../ledger/subscriptions/lifecycle.js';
import { SUBSCRIPTION_TRANSITIONS, type SubscriptionRow } from '../../ledger/subscriptions/subscriptions.js';
import { systemClock, type Clock } from '../../domain/clock.js';
import type { SubscriptionSettings } from '../../domain/subscription-settings.js';
import type { WalletResolver } from '../wallets.js';
import { jsonObjectBody, validate } from '../../api/json-body.js';
import { invalidRequest, resourceNotFound } from '../../domain/errors.js';
import { AUTHORIZE_JS } from './authorize-script.js';
import { renderAuthorizePage } from './render.js';

// The subscription authorization page (checkout_url): the customer picks network and token, connects a wallet
// (EIP-1193 on Ethereum and BSC) and approves the allowance to the merchant's charger. Unsigned routes, like the
// hosted payment page: everything they reveal is what the customer needs to authorize.

export interface AuthorizePageDeps {
  db: Db;
  adapters: ChainRegistry;
  walletResolver: WalletResolver;
  settings: SubscriptionSettings;
  clock?: Clock;
  /** Base of checkout URLs (for the events written when an existing allowance authorizes at once). */
  checkoutBaseUrl: string;
}

/** Allowance asked of the customer: price × quantity × (iterations, or the configured number of periods). */
function allowanceMinor(s: SubscriptionRow, settings: SubscriptionSettings): bigint {
  return s.unit_amount_minor * BigInt(s.quantity) * BigInt(s.iterations ?? settings.allowancePeriods);
}

const notAwaiting = (status: string) =>
  invalidRequest('not_awaiting_authorization', `The subscription is ${status}; it does not take an authorization now.`, 'id', 409);

const selectSchema = z.strictObject({
  network: z.string().min(1).max(40),
  token: z.enum(['USDT', 'USDC']),
  address: z.string().min(1).max(100),
});

export function registerAuthorizePage(app: FastifyInstance, deps: AuthorizePageDeps): void {
  const clock = deps.clock ?? systemClock;
  const load = (id: string) =>
    /^sub_[0-9A-Za-z]{24}$/.test(id)
      ? deps.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst()
      : Promise.resolve(undefined);
  const options = (s: SubscriptionRow) =>
    [...deps.adapters]
      .filter((a) => a.mode === s.mode && isAllowanceCharger(a))
      .flatMap((a) => a.tokens.map((t) => ({ network: a.network, token: t.symbol, family: a.family })));
  const secure = (reply: FastifyReply) =>
    reply
      .header(
        'Content-Security-Policy',
        "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'",
      )
      .header('X-Content-Type-Options', 'nosniff')
      .header('Referrer-Policy', 'no-referrer')
      .header('Cache-Control', 'no-store');

  app.get('/subscribe/assets/authorize.js', async (_req, reply) => secure(reply).type('text/javascript; charset=utf-8').send(AUTHORIZE_JS));

  app.get<{ Params: { id: string } }>('/subscribe/:id', async (req, reply) => {
    const s = await load(req.params.id);
    if (!s)
      return secure(reply)
        .code(404)
        .type('text/html; charset=utf-8')
        .send('<!doctype html><title>Not found</title><p>This subscription link is not valid.</p>');
    return secure(reply)
      .type('text/html; charset=utf-8')
      .send(
        renderAuthorizePage({
          id: s.id,
          product: s.product,
          status: s.status,
          pricePerPeriod: formatMinor(s.unit_amount_minor * BigInt(s.quantity), 2),
          interval: s.interval,
          periods: s.iterations ?? deps.settings.allowancePeriods,
          allowance: formatMinor(allowanceMinor(s, deps.settings), STABLECOIN_EXPONENT),
          trialEnd: s.trial_end,
          options: options(s),
          paymentMethodId: s.payment_method_id,
        }),
      );
  });

  app.get<{ Params: { id: string } }>('/subscribe/:id/status', async (req, reply) => {
    const s = await load(req.params.id);
    if (!s) throw resourceNotFound('id', 'subscription');
    return reply.header('Cache-Control', 'no-store').send({ status: s.status, payment_method_id: s.payment_method_id });
  });

  app.post<{ Params: { id: string } }>('/subscribe/:id/select', async (req, reply) => {
    const s = await load(req.params.id);
    if (!s) throw resourceNotFound('id', 'subscription');
    // A first authorization (incomplete), or a new one for a live subscription: after the allowance ran out or was
    // revoked (past_due, from any wallet), or a larger or other-token one from the same wallet while in good standing.
    if (!(SUBSCRIPTION_TRANSITIONS.authorize as readonly string[]).includes(s.status)) throw notAwaiting(s.status);
    // The same body rules as the API (depth, UTF-8, well-formed strings), then the fields.
    const body = validate(selectSchema, jsonObjectBody(req));
    const adapter = deps.adapters.get(body.network, s.mode);
    const token = deps.adapters.token(body.network, s.mode, body.token);
    if (!adapter || !token || !isAllowanceCharger(adapter))
      throw invalidRequest('network_unavailable', `${body.token} on ${body.network} is not available for subscriptions.`, 'network');
    const owner = adapter.normalizeAddress(body.address);
    if (!owner) throw invalidRequest('invalid_address', `address is not a ${adapter.network} address.`, 'address');
    if (s.status === 'trialing' || s.status === 'active') {
      // The checkout link is a bearer link: while the subscription is paid up, nobody holding it may move the charges
      // to another wallet (and then starve them); a customer who must change wallets does so once a payment failed.
      const pm = s.payment_method_id
        ? await deps.db
            .selectFrom('payment_methods')
            .select(['network', 'owner_address'])
            .where('id', '=', s.payment_method_id)
            .executeTakeFirst()
        : undefined;
      if (pm && (pm.network !== adapter.network || pm.owner_address !== owner)) {
        throw invalidRequest(
          'wallet_change_not_allowed',
          'While the subscription is paid up, only the wallet already charged can authorize again.',
          'address',
          409,
        );
      }
    }
    const allowanceBase = stablecoinMinorToBase(allowanceMinor(s, deps.settings), token.decimals);
    const w = await deps.walletResolver.resolve(s.merchant_id, s.mode, adapter.network);
    const current = await adapter.getAllowance(body.token, owner, w.charger);
    const updated = await recordAuthorizationChoice(deps.db, s.id, {
      network: adapter.network,
      token: body.token,
      owner,
      allowanceBase,
      at: clock.now(),
    });
    if (!updated) throw notAwaiting(s.status);
    // An allowance that already covers the request produces no new Approval log: authorize from the chain's state,
    // read at the final height like every authorization. One not final yet comes from a recent approve, whose log
    // (or, on Solana, whose delegation) the poller applies once final.
    let authorized = false;
    const final = current >= allowanceBase ? await adapter.getAllowance(body.token, owner, w.charger, 'final') : 0n;
    if (final >= allowanceBase) {
      const lifecycle: LifecycleDeps = {
        db: deps.db,
        clock,
        settings: deps.settings,
        checkoutBaseUrl: deps.checkoutBaseUrl,
        wallets: deps.walletResolver.wallets,
        tokenDecimals: deps.adapters.tokenDecimals,
      };
      const r = await applyApproval(lifecycle, s.id, {
        network: adapter.network,
        mode: s.mode,
        token: body.token,
        owner,
        spender: w.charger,
        value: final,
        // No log to point at: the reference names the allowance read, unique per subscription and selection.
        txHash: `allowance:${s.id}:${updated.auth_requested_at!.getTime()}`,
        logIndex: 0,
      });
      authorized = r === 'authorized';
    }
    // Tether's approve refuses a change from one non-zero value to another: reset to 0 first. An SPL delegate
    // approval simply replaces the previous one.
    const resetFirst = adapter.scanApprovals !== undefined && current !== 0n && current < allowanceBase;
    // Wallets that sign prepared transactions (TronLink, Solana Wallet Standard) get them built here. With a reset
    // first, only approve(0) is prepared: Tether's approve of the full allowance would revert until the reset lands,
    // so the page selects again afterwards and gets it then.
    const walletTransactions =
      !authorized && adapter.buildApprovalForWallet && current < allowanceBase
        ? [await adapter.buildApprovalForWallet(body.token, owner, w.charger, resetFirst ? 0n : allowanceBase)]
        : undefined;
    const chainId = deps.adapters.chainId(adapter.network, s.mode);
    return reply.header('Cache-Control', 'no-store').send({
      network: adapter.network,
      token: body.token,
      token_contract: adapter.displayAddress(token.address),
      spender: adapter.displayAddress(w.charger),
      allowance_base: allowanceBase.toString(),
      allowance: formatBaseUnits(allowanceBase, token.decimals),
      current_allowance_base: current.toString(),
      reset_first: resetFirst,
      authorized,
      family: adapter.family,
      ...(walletTransactions ? { wallet_transactions: walletTransactions } : {}),
      ...(adapter.family === 'solana' ? { wallet_chain: s.mode === 'live' ? 'solana:mainnet' : 'solana:devnet' } : {}),
      ...(chainId !== undefined ? { chain_id: `0x${chainId.toString(16)}` } : {}),
    });
  });
}
