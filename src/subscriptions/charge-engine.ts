import {
  TransferRejectedError, isAllowanceCharger, type AllowanceCharger, type ChainAdapter, type SignedTransfer, type TokenRefusal, type TokenSymbol, type TxSigner,
} from '../../chains/types.js';
import { advanceNonce, lockNextNonce } from '../ledger/payouts.js';
import {
  chargeFailed, chargeSucceeded, dropChargeAttempt, liveChargeAttempts, loadCharge, lockPendingCharge, markChargeBroadcast, recordReplacementAttempt,
  recordSignedCharge, reopenCharge, type ChargeAttempt, type ChargeRow,
} from '../ledger/subscriptions-charges.js';
import type { LifecycleDeps } from '../ledger/subscriptions-lifecycle.js';
import type { StuckReplacement } from '../payouts/engine.js';
import type { Logger } from '../logger.js';
import type { WalletResolver } from './wallets.js';

// The crash-safe charge of one invoice, one step at a time (the refund payout engine's rules, for transferFrom):
// - allowance and balance are read first, so no gas is spent on a charge that must fail;
// - the signed bytes are committed (state 'signed') with the charger's nonce, under the nonce row lock, BEFORE the
//   first broadcast; after a crash the same bytes are re-broadcast and looked up by hash, never signed again;
// - a charge row leaves 'pending' under its row lock, so two schedulers can never sign it twice;
// - every signed transaction is an attempt (subscription_charge_attempts); a new one is signed only as a fee-bumped
//   replacement at the SAME nonce (at most one of them can be mined), or after every earlier attempt is proven dead
//   (expired, or its nonce taken), and then only after the pre-flight checks pass again.

export interface ChargeEngineDeps extends LifecycleDeps, StuckReplacement {
  adapters: import('../../chains/registry.js').ChainRegistry;
  signer: TxSigner | null;
  walletResolver: WalletResolver;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Crash-test hook: called between persisting the signed bytes and broadcasting them. */
  afterSign?: () => void;
}

export type ChargeStep = { kind: 'done'; state: string } | { kind: 'wait' };

export async function advanceCharge(deps: ChargeEngineDeps, chargeId: bigint): Promise<ChargeStep> {
  const charge = await loadCharge(deps.db, chargeId);
  if (!charge) return { kind: 'done', state: 'missing' };
  if (charge.state === 'succeeded' || charge.state === 'failed') return { kind: 'done', state: charge.state };
  const adapter = deps.adapters.get(charge.network, charge.mode);
  if (!adapter || !isAllowanceCharger(adapter) || !deps.signer) {
    if (charge.state === 'pending') {
      await chargeFailed(deps, chargeId, adapter ? 'no signer for the charger wallet' : `${charge.network} is not configured`);
      return { kind: 'done', state: 'failed' };
    }
    deps.log?.error({ charge_id: String(chargeId) }, 'signed charge cannot be reconciled: network or signer missing');
    return { kind: 'wait' };
  }
  if (charge.state === 'pending') return signAndSend(deps, adapter, charge);
  return followAttempts(deps, adapter, charge);
}

type Charger = ChainAdapter & AllowanceCharger;

/**
 * A charge in flight: look every live attempt up by hash. One landed: settle with it. None known to the chain: re-offer
 * the bytes, or drop them once they provably cannot land; all dropped: back to pending (pre-flight and a fresh
 * signature). Pending too long (nonce families): a fee-bumped replacement at the same nonce.
 */
async function followAttempts(deps: ChargeEngineDeps, adapter: Charger, charge: ChargeRow): Promise<ChargeStep> {
  const attempts = await liveChargeAttempts(deps.db, charge.id);
  const live: ChargeAttempt[] = [];
  let anyPending = false;
  for (const a of attempts) {
    const outcome = await adapter.getTransferFromOutcome(a.tx_hash, charge.owner_address);
    switch (outcome.status) {
      case 'succeeded': {
        if (!outcome.final) return { kind: 'wait' };
        const t = await adapter.findChargeTransfer(a.tx_hash, charge.owner_address, charge.destination_address);
        if (!t) {
          // Mined, yet nothing reached the settlement address: never a paid invoice. Tokens gone elsewhere need a person.
          const d = await adapter.readDelivery(a.tx_hash, charge.token as TokenSymbol, charge.owner_address, charge.destination_address);
          if (d && d.elsewhere > 0n) {
            deps.log?.error({ charge_id: String(charge.id), tx_hash: a.tx_hash, elsewhere_base: String(d.elsewhere) }, 'charge moved the customer\'s tokens to another address than the settlement address');
          }
          const reason = d && d.elsewhere > 0n
            ? `wrong_recipient: ${d.elsewhere} base units went from the customer to other addresses than the settlement address (transaction ${a.tx_hash})`
            : 'no Transfer from the customer to the settlement address';
          await chargeFailed(deps, charge.id, reason);
          return { kind: 'done', state: 'failed' };
        }
        await chargeSucceeded(deps, charge.id, { txHash: a.tx_hash, ...t });
        if (t.amount < charge.amount_base) {
          // The token took a fee on transferFrom: the customer paid the invoice amount, the merchant received less.
          deps.log?.warn({ charge_id: String(charge.id), tx_hash: a.tx_hash, amount_base: String(charge.amount_base), delivered_base: String(t.amount) },
            'charge delivered less than its amount to the settlement address (a fee taken by the token)');
        }
        return { kind: 'done', state: 'succeeded' };
      }
      case 'failed':
        if (!outcome.final) return { kind: 'wait' };
        // A reverted transferFrom moved nothing; its nonce was consumed on chain, so no other attempt can land.
        await chargeFailed(deps, charge.id, outcome.refusal ? refusalText(outcome.refusal, outcome.detail) : `${outcome.reason}: ${outcome.detail}`);
        return { kind: 'done', state: 'failed' };
      case 'pending':
        anyPending = true;
        live.push(a);
        if (charge.state === 'signed') await markChargeBroadcast(deps.db, charge.id);
        break;
      case 'unknown':
        if (!(await reofferOrDrop(deps, adapter, charge, a))) live.push(a);
        break;
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }
  if (live.length === 0) {
    // Every attempt provably dead (expired, or its nonce went elsewhere): nothing moved; start over with pre-flight.
    if (await reopenCharge(deps.db, charge.id)) deps.log?.info({ charge_id: String(charge.id) }, 'charge attempts expired; signing afresh');
    return { kind: 'wait' };
  }
  const newest = live[live.length - 1]!;
  if (anyPending && newest.nonce !== null && Date.now() - newest.created_at.getTime() > deps.stuckAfterMs) {
    return replaceStuck(deps, adapter, charge, newest);
  }
  return { kind: 'wait' };
}

/** Re-offers bytes the chain does not know; true when they were dropped as provably unable to land. */
async function reofferOrDrop(deps: ChargeEngineDeps, adapter: Charger, charge: ChargeRow, a: ChargeAttempt): Promise<boolean> {
  const signed = a.signed as unknown as SignedTransfer;
  if (await adapter.isExpired(signed)) {
    await dropChargeAttempt(deps.db, a.id, 'expired before landing');
    return true;
  }
  const r = await adapter.broadcast(signed);
  if (r.status !== 'rejected') {
    await markChargeBroadcast(deps.db, charge.id);
    return false;
  }
  if (r.reason === 'nonce_too_low' || r.reason === 'expired') {
    // The chain does not have these bytes and can no longer take them (the nonce went to another transaction: a
    // replacement of this charge, looked up in the same pass, or something else).
    await dropChargeAttempt(deps.db, a.id, r.detail);
    return true;
  }
  // Refused for lack of gas or similar: later charges of this charger wait behind its nonce, so the same bytes are
  // offered again each tick until the operator tops the charger up.
  deps.log?.warn({ charge_id: String(charge.id), tx_hash: a.tx_hash, reason: r.reason, detail: r.detail }, 'charge re-broadcast refused');
  return false;
}

/** The same transferFrom at the same nonce with a higher fee: at most one of the two can ever be mined. */
async function replaceStuck(deps: ChargeEngineDeps, adapter: Charger, charge: ChargeRow, newest: ChargeAttempt): Promise<ChargeStep> {
  const w = await deps.walletResolver.resolve(charge.merchant_id, charge.mode, charge.network);
  const feeBump = newest.fee_bump_percent + deps.feeBumpPercent;
  let signed: SignedTransfer | undefined;
  try {
    const unsigned = await adapter.buildTokenTransferFrom(
      { from: w.chargerKey, to: charge.destination_address, token: charge.token as TokenSymbol, amount: charge.amount_base, nonce: newest.nonce!, feeBumpPercent: feeBump },
      charge.owner_address,
    );
    signed = await deps.db.transaction().execute(async (trx) => {
      const s = await adapter.signTransfer(unsigned, deps.signer!);
      const stored = await recordReplacementAttempt(trx, charge.id, newest.id, { nonce: newest.nonce, txHash: s.hash, signed: { ...s }, feeBumpPercent: feeBump });
      return stored ? s : undefined;
    });
  } catch (err) {
    // E.g. the estimate now reverts because the original is being mined: keep the original in flight.
    if (err instanceof TransferRejectedError) {
      deps.log?.warn({ charge_id: String(charge.id), reason: err.reason }, 'charge replacement refused; keeping the original in flight');
      return { kind: 'wait' };
    }
    throw err;
  }
  if (!signed) return { kind: 'wait' };
  const r = await adapter.broadcast(signed);
  if (r.status === 'rejected') deps.log?.warn({ charge_id: String(charge.id), reason: r.reason, detail: r.detail }, 'charge replacement broadcast refused');
  else deps.log?.info({ charge_id: String(charge.id), tx_hash: signed.hash, replaces: newest.tx_hash, feeBump }, 'stuck charge replaced');
  return { kind: 'wait' };
}

async function signAndSend(deps: ChargeEngineDeps, adapter: Charger, charge: ChargeRow): Promise<ChargeStep> {
  const token = charge.token as TokenSymbol;
  // Pre-flight: refuse now, with the reason, what would revert on chain.
  const [allowance, balance] = await Promise.all([
    adapter.getAllowance(token, charge.owner_address, charge.charger_address),
    adapter.getTokenBalance(token, charge.owner_address),
  ]);
  if (allowance < charge.amount_base) return failNow(deps, charge, `insufficient_allowance: ${allowance} < ${charge.amount_base}`);
  if (balance < charge.amount_base) return failNow(deps, charge, `insufficient_balance: ${balance} < ${charge.amount_base}`);

  const w = await deps.walletResolver.resolve(charge.merchant_id, charge.mode, charge.network);
  const chainNonce = await adapter.getAccountNonce(w.charger);
  let signed: SignedTransfer | undefined;
  try {
    // Built (gas estimate, fees, gas balance) before taking the nonce lock, so the lock covers only the nonce, the
    // signature and the commit: charges of one charger are serialised for milliseconds, not for RPC round trips.
    const draft = await adapter.buildTokenTransferFrom(
      { from: w.chargerKey, to: charge.destination_address, token, amount: charge.amount_base, nonce: chainNonce ?? 0n },
      charge.owner_address,
    );
    signed = await deps.db.transaction().execute(async (trx) => {
      const locked = await lockPendingCharge(trx, charge.id);
      if (!locked) return undefined; // another scheduler signed it, or it was settled
      const ref = { network: charge.network, mode: charge.mode, address: w.charger };
      let nonce: bigint | null = null;
      if (chainNonce !== null) {
        const stored = await lockNextNonce(trx, ref, async () => chainNonce);
        nonce = stored > chainNonce ? stored : chainNonce;
      }
      const s = await adapter.signTransfer(nonce === null ? draft : adapter.withNonce(draft, nonce), deps.signer!);
      await recordSignedCharge(trx, charge.id, { nonce, txHash: s.hash, signed: { ...s } });
      if (nonce !== null) await advanceNonce(trx, ref, nonce);
      return s;
    });
  } catch (err) {
    if (err instanceof TransferRejectedError) return failNow(deps, charge, err.refusal ? refusalText(err.refusal, err.message) : `${err.reason}: ${err.message}`);
    throw err;
  }
  if (!signed) return { kind: 'wait' };
  deps.afterSign?.();
  const r = await adapter.broadcast(signed);
  if (r.status === 'rejected') {
    // Not on chain; the next step looks the hash up and re-broadcasts. Later charges wait behind this nonce.
    deps.log?.warn({ charge_id: String(charge.id), reason: r.reason, detail: r.detail }, 'charge broadcast refused');
    return { kind: 'wait' };
  }
  await markChargeBroadcast(deps.db, charge.id);
  return { kind: 'wait' };
}

/** A charge's parties by their role: the customer's tokens move, the charger sends, the settlement address receives. */
const CHARGE_REFUSALS: Record<TokenRefusal, string> = {
  token_paused: 'the token contract is paused by its issuer',
  sender_blacklisted: "the customer's address is blacklisted by the token issuer",
  recipient_blacklisted: 'the settlement address is blacklisted by the token issuer',
  spender_blacklisted: 'the charger address is blacklisted by the token issuer',
};

function refusalText(refusal: TokenRefusal, detail: string): string {
  return `${refusal}: ${CHARGE_REFUSALS[refusal]} (${detail})`;
}

async function failNow(deps: ChargeEngineDeps, charge: ChargeRow, reason: string): Promise<ChargeStep> {
  await chargeFailed(deps, charge.id, reason);
  deps.log?.info({ charge_id: String(charge.id), subscription_id: charge.subscription_id, reason }, 'charge failed before signing');
  return { kind: 'done', state: 'failed' };
}
