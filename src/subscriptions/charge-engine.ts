import { TransferRejectedError, isAllowanceCharger, type ChainAdapter, type SignedTransfer, type TokenSymbol, type TxSigner } from '../../chains/types.js';
import { advanceNonce, lockNextNonce } from '../ledger/payouts.js';
import {
  chargeFailed, chargeSucceeded, loadCharge, lockPendingCharge, markChargeBroadcast, recordSignedCharge, type ChargeRow,
} from '../ledger/subscriptions-charges.js';
import type { LifecycleDeps } from '../ledger/subscriptions-lifecycle.js';
import type { Logger } from '../logger.js';
import type { WalletResolver } from './wallets.js';

// The crash-safe charge of one invoice, one step at a time (the refund payout engine's rules, for transferFrom):
// - allowance and balance are read first, so no gas is spent on a charge that must fail;
// - the signed bytes are committed (state 'signed') with the charger's nonce, under the nonce row lock, BEFORE the
//   first broadcast; after a crash the same bytes are re-broadcast and looked up by hash, never signed again;
// - a charge row leaves 'pending' once, under its row lock, so two schedulers can never sign it twice.
// Not done here (see docs/subscriptions.md): fee-bump replacement of a stuck charge at the same nonce.

export interface ChargeEngineDeps extends LifecycleDeps {
  adapters: ReadonlyMap<string, ChainAdapter>;
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
  const adapter = deps.adapters.get(`${charge.network}:${charge.mode}`);
  if (!adapter || !isAllowanceCharger(adapter) || !deps.signer) {
    if (charge.state === 'pending') {
      await chargeFailed(deps, chargeId, adapter ? 'no signer for the charger wallet' : `${charge.network} is not configured`);
      return { kind: 'done', state: 'failed' };
    }
    deps.log?.error({ charge: String(chargeId) }, 'signed charge cannot be reconciled: network or signer missing');
    return { kind: 'wait' };
  }
  if (charge.state === 'pending') return signAndSend(deps, adapter, charge);

  const signed = charge.signed as unknown as SignedTransfer;
  const outcome = await adapter.getTransferFromOutcome(charge.tx_hash!, charge.owner_address);
  switch (outcome.status) {
    case 'succeeded': {
      if (!outcome.final) return { kind: 'wait' };
      const t = await adapter.findChargeTransfer(charge.tx_hash!, charge.owner_address, charge.destination_address);
      if (!t) {
        await chargeFailed(deps, chargeId, 'no Transfer from the customer to the settlement address');
        return { kind: 'done', state: 'failed' };
      }
      await chargeSucceeded(deps, chargeId, { txHash: charge.tx_hash!, ...t });
      return { kind: 'done', state: 'succeeded' };
    }
    case 'failed':
      if (!outcome.final) return { kind: 'wait' };
      // A reverted transferFrom moved nothing; the nonce was consumed on chain, so nothing is given back.
      await chargeFailed(deps, chargeId, `${outcome.reason}: ${outcome.detail}`);
      return { kind: 'done', state: 'failed' };
    case 'pending':
      if (charge.state === 'signed') await markChargeBroadcast(deps.db, chargeId);
      return { kind: 'wait' };
    case 'unknown': {
      const r = await adapter.broadcast(signed);
      if (r.status !== 'rejected') await markChargeBroadcast(deps.db, chargeId);
      else deps.log?.warn({ charge: String(chargeId), reason: r.reason, detail: r.detail }, 'charge re-broadcast refused');
      return { kind: 'wait' };
    }
    default: {
      const never: never = outcome;
      return never;
    }
  }
}

async function signAndSend(deps: ChargeEngineDeps, adapter: ChainAdapter & import('../../chains/types.js').AllowanceCharger, charge: ChargeRow): Promise<ChargeStep> {
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
    if (err instanceof TransferRejectedError) return failNow(deps, charge, `${err.reason}: ${err.message}`);
    throw err;
  }
  if (!signed) return { kind: 'wait' };
  deps.afterSign?.();
  const r = await adapter.broadcast(signed);
  if (r.status === 'rejected') {
    // Not on chain; the next step looks the hash up and re-broadcasts. Later charges wait behind this nonce.
    deps.log?.warn({ charge: String(charge.id), reason: r.reason, detail: r.detail }, 'charge broadcast refused');
    return { kind: 'wait' };
  }
  await markChargeBroadcast(deps.db, charge.id);
  return { kind: 'wait' };
}

async function failNow(deps: ChargeEngineDeps, charge: ChargeRow, reason: string): Promise<ChargeStep> {
  await chargeFailed(deps, charge.id, reason);
  deps.log?.info({ charge: String(charge.id), subscription: charge.subscription_id, reason }, 'charge failed before signing');
  return { kind: 'done', state: 'failed' };
}
