import {
  TransferRejectedError,
  type ChainAdapter,
  type TokenRefusal,
  type SendFailureReason,
  type SignedTransfer,
  type TxFailureReason,
  type TxSigner,
} from '../../chains/types.js';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import type { RefundFailureCode } from '../domain/refund-state.js';
import {
  advanceNonce, claimRefundForProcessing, completeRefund, failRefund, lockNextNonce, lockProcessingRefund, payoutAttempts,
  recordSignedAttempt, releaseNonceIfLast, setAttemptState, type PayoutAttempt,
} from '../ledger/payouts.js';
import type { RefundRow } from '../ledger/refunds.js';
import type { Logger } from '../logger.js';
import { failpoint } from './failpoints.js';

// The crash-safe payout of one refund, one step at a time. Invariants:
// - the signed bytes and their hash are committed (payout_attempts) BEFORE the first broadcast;
// - a refund with a live attempt (signed or broadcast) is never signed again: its bytes are re-broadcast and its
//   outcome is looked up by hash; a new signature happens only when every earlier attempt is proven unable to land
//   (expired, or its nonce taken by another transaction), or as a fee-bumped replacement at the SAME nonce, of
//   which at most one can ever be mined;
// - EVM nonces are assigned under a row lock in the transaction that stores the signed bytes (gapless).

/** Replacement of a transaction stuck in the mempool, shared by refund payouts and subscription charges. */
export interface StuckReplacement {
  /** A pending transaction older than this is replaced at the same nonce with a higher fee. */
  stuckAfterMs: number;
  /** Fee increase per replacement, in percent (nodes require at least 10). */
  feeBumpPercent: number;
}

export interface PayoutEngineDeps extends StuckReplacement {
  db: Db;
  /** The configured chains. */
  adapters: import('../../chains/registry.js').ChainRegistry;
  /** Signs payouts; null in a deployment without a key (refunds then fail with signer_unavailable). */
  signer: TxSigner | null;
  /** How long to wait between looks at a transaction in flight. */
  pollMs: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export type StepResult = { kind: 'done'; status: string } | { kind: 'wait'; ms: number };

const LIVE = new Set(['signed', 'broadcast']);

export async function advanceRefund(deps: PayoutEngineDeps, refundId: string): Promise<StepResult> {
  const refund = await claimRefundForProcessing(deps.db, refundId);
  if (!refund || refund.status !== 'processing') return { kind: 'done', status: refund?.status ?? 'missing' };
  const adapter = deps.adapters.get(refund.network, refund.mode);
  const attempts = await payoutAttempts(deps.db, refundId);
  const live = attempts.filter((a) => LIVE.has(a.state));

  if (!adapter || !deps.signer) {
    if (live.length === 0) return failed(deps, refundId, adapter ? 'signer_unavailable' : 'network_unavailable');
    deps.log?.error({ refund_id: refundId, network: refund.network }, 'signed payout cannot be reconciled: network or signer missing');
    return { kind: 'wait', ms: 30_000 };
  }

  if (live.length === 0) {
    // Nothing in flight: sign a first attempt, or a new one after every earlier attempt was proven dead.
    return signAndSend(deps, adapter, refund, null);
  }

  // Outcomes first: one of the attempts may already have landed (a crash after broadcast, or a replacement race).
  let anyPending = false;
  for (const a of live) {
    const outcome = await adapter.getTransactionOutcome(a.tx_hash);
    switch (outcome.status) {
      case 'succeeded': {
        if (!outcome.final) return { kind: 'wait', ms: deps.pollMs };
        // What reached the destination, from the landed transaction's own Transfer logs: never the amount asked for.
        const d = await adapter.readDelivery(a.tx_hash, refund.token as 'USDT' | 'USDC', adapter.normalizeAddress(a.sender) ?? a.sender, refund.destination_address);
        if (!d) return { kind: 'wait', ms: deps.pollMs }; // no longer found as succeeded (a reorg since): look again
        if (d.delivered === 0n) {
          // Mined, yet nothing reached the destination: not completed. If tokens left for another address, say so.
          const code = d.elsewhere > 0n ? 'wrong_recipient' : 'no_transfer_event';
          const detail = d.elsewhere > 0n ? `${d.elsewhere} base units went from the hot wallet to other addresses` : 'no Transfer to the destination';
          return failed(deps, refundId, code, `${detail}; transaction ${a.tx_hash}`);
        }
        failpoint('payout:after_receipt');
        await completeRefund(deps.db, refundId, a, d.delivered);
        if (d.delivered < refund.amount_base) {
          deps.log?.warn({ refund_id: refundId, tx_hash: a.tx_hash, amount_base: String(refund.amount_base), delivered_base: String(d.delivered), elsewhere_base: String(d.elsewhere) },
            'refund completed short: the destination received less than the refund amount (a fee taken by the token)');
        } else deps.log?.info({ refund_id: refundId, tx_hash: a.tx_hash }, 'refund completed');
        return { kind: 'done', status: 'completed' };
      }
      case 'failed':
        if (!outcome.final) return { kind: 'wait', ms: deps.pollMs };
        return failed(deps, refundId, outcome.refusal ? refusalCode(outcome.refusal) : txFailureCode(outcome.reason), `${outcome.detail}; transaction ${a.tx_hash}`);
      case 'pending':
        anyPending = true;
        if (a.state === 'signed') await setAttemptState(deps.db, a.id, 'broadcast');
        break;
      case 'unknown': {
        const r = await rebroadcastOrDrop(deps, adapter, a);
        if (r) return r;
        break;
      }
      default: {
        const never: never = outcome;
        return never;
      }
    }
  }

  const stillLive = (await payoutAttempts(deps.db, refundId)).filter((a) => LIVE.has(a.state));
  if (stillLive.length === 0) return signAndSend(deps, adapter, refund, null);

  // Stuck in the mempool: replace the newest attempt at the same nonce with a higher fee.
  const newest = stillLive[stillLive.length - 1]!;
  if (anyPending && newest.nonce !== null && Date.now() - newest.created_at.getTime() > deps.stuckAfterMs) {
    return signAndSend(deps, adapter, refund, newest);
  }
  return { kind: 'wait', ms: deps.pollMs };
}

/** Re-broadcasts an attempt the chain does not know; marks it dropped when it provably can never land. */
async function rebroadcastOrDrop(deps: PayoutEngineDeps, adapter: ChainAdapter, a: PayoutAttempt): Promise<StepResult | undefined> {
  const signed = a.signed as unknown as SignedTransfer;
  if (await adapter.isExpired(signed)) {
    await setAttemptState(deps.db, a.id, 'dropped', 'expired before landing');
    return undefined;
  }
  const result = await adapter.broadcast(signed);
  if (result.status !== 'rejected') {
    await setAttemptState(deps.db, a.id, 'broadcast');
    return undefined;
  }
  if (result.reason === 'nonce_too_low' || result.reason === 'expired') {
    // The chain does not have these bytes and can no longer take them: the nonce went to another transaction.
    await setAttemptState(deps.db, a.id, 'dropped', result.detail);
    return undefined;
  }
  // Refused for lack of funds or similar. If no later nonce was handed out, give the nonce back and drop the bytes:
  // the next step signs afresh, and its pre-flight checks fail the refund with the reason. Otherwise later payouts
  // wait behind this nonce, so keep offering the same bytes until the operator tops the wallet up.
  if (a.nonce !== null && (await releaseNonceIfLast(deps.db, { network: a.network, mode: a.mode, address: adapter.normalizeAddress(a.sender) ?? a.sender }, a))) {
    return undefined;
  }
  // Families without nonces (Solana, TRON): nothing waits behind these bytes, but they may still land (another node
  // may hold them) until proven expired; they are offered again until then, and isExpired drops them above.
  deps.log?.error(
    { refund_id: a.refund_id, tx_hash: a.tx_hash, reason: result.reason, detail: result.detail },
    a.nonce === null ? 'broadcast refused; the same bytes are offered again until they land or are proven expired' : 'broadcast refused; later payouts wait behind this nonce',
  );
  return { kind: 'wait', ms: Math.max(deps.pollMs, 5000) };
}

/**
 * Builds, signs and stores a new attempt, then broadcasts it. `replacing` set: same nonce, higher fee. Sign-and-store
 * runs in one transaction holding the refund row (a cancel cannot slip in) and the nonce row.
 */
async function signAndSend(deps: PayoutEngineDeps, adapter: ChainAdapter, refund: RefundRow, replacing: PayoutAttempt | null): Promise<StepResult> {
  const account = await merchantAccount(deps.db, refund);
  const wallet = await adapter.deriveHotWallet(deps.signer!, account, HOT_WALLET_SLOT.refunds);
  const token = refund.token as 'USDT' | 'USDC';
  let gross: bigint;
  try {
    // A token announcing a fee on transfers (Tether's views) is sent grossed up, so the customer receives the refund
    // amount; the fee is the merchant's. What actually arrived is still read from the landed transaction.
    gross = adapter.grossForNet ? await adapter.grossForNet(token, refund.amount_base) : refund.amount_base;
  } catch (err) {
    if (!(err instanceof TransferRejectedError)) throw err;
    if (!replacing) return failed(deps, refund.id, sendFailureCode(err.reason), err.message);
    deps.log?.warn({ refund_id: refund.id, reason: err.reason }, 'replacement refused; keeping the original in flight');
    return { kind: 'wait', ms: deps.pollMs };
  }
  if (!replacing) {
    // Pre-flight: a payout the wallet cannot cover fails now, with its reason, before any nonce or fee is spent.
    const balances = await adapter.getBalances(wallet.address);
    if ((balances.tokens[token] ?? 0n) < gross) {
      const fee = gross > refund.amount_base ? ` (${refund.amount_base} plus the token's transfer fee)` : '';
      return failed(deps, refund.id, 'insufficient_token_balance', `hot wallet ${adapter.displayAddress(wallet.address)} holds ${balances.tokens[token] ?? 0n} base units, needs ${gross}${fee}`);
    }
  }
  const chainNonce = replacing ? null : await adapter.getAccountNonce(wallet.address);
  const feeBump = replacing ? replacing.fee_bump_percent + deps.feeBumpPercent : 0;
  let attempt: PayoutAttempt | 'raced' | undefined;
  try {
    // Built (gas estimate, fees, simulation) before the locks, at a provisional nonce; the real nonce is assigned
    // under the nonce row's lock with withNonce, so the lock is held only for sign-and-store.
    const draft = await adapter.buildTokenTransfer({
      from: wallet,
      to: refund.destination_address,
      token,
      amount: gross,
      ...((replacing?.nonce ?? chainNonce) !== null ? { nonce: (replacing?.nonce ?? chainNonce)! } : {}),
      ...(feeBump > 0 ? { feeBumpPercent: feeBump } : {}),
    });
    attempt = await deps.db.transaction().execute(async (trx) => {
      const locked = await lockProcessingRefund(trx, refund.id);
      if (!locked) return undefined; // canceled meanwhile
      // Re-checked under the refund row's lock: another run of this refund (a duplicate job) may have signed since
      // this step looked. Sign only if the attempts are still as seen: none live for a first attempt, or `replacing`
      // still the newest live one for a replacement.
      const live = await trx.selectFrom('payout_attempts').select('id').where('refund_id', '=', refund.id)
        .where('state', 'in', ['signed', 'broadcast', 'confirmed']).orderBy('id', 'desc').execute();
      if (replacing ? live[0]?.id !== replacing.id : live.length > 0) return 'raced' as const;
      const ref = { network: refund.network, mode: refund.mode, address: wallet.address };
      let nonce: bigint | null = replacing?.nonce ?? null;
      if (!replacing && chainNonce !== null) {
        const stored = await lockNextNonce(trx, ref, async () => chainNonce);
        // Someone else used the wallet: never reuse a nonce the chain has already counted.
        nonce = stored > chainNonce ? stored : chainNonce;
      }
      const unsigned = nonce === null ? draft : adapter.withNonce(draft, nonce);
      const signed = await adapter.signTransfer(unsigned, deps.signer!);
      const stored = await recordSignedAttempt(trx, locked, {
        sender: signed.sender,
        nonce,
        txHash: signed.hash,
        signed: { ...signed },
        feeBumpPercent: feeBump,
      });
      if (!replacing && nonce !== null) await advanceNonce(trx, ref, nonce);
      return stored;
    });
  } catch (err) {
    if (err instanceof TransferRejectedError) {
      // Refused before anything was signed or stored (no gas, no tokens, the token refuses the destination).
      if (replacing) {
        deps.log?.warn({ refund_id: refund.id, reason: err.reason }, 'replacement refused; keeping the original in flight');
        return { kind: 'wait', ms: deps.pollMs };
      }
      return failed(deps, refund.id, err.refusal ? refusalCode(err.refusal) : sendFailureCode(err.reason), err.message);
    }
    throw err;
  }
  if (attempt === 'raced') return { kind: 'wait', ms: deps.pollMs };
  if (!attempt) return { kind: 'done', status: 'canceled' };
  if (gross > refund.amount_base) deps.log?.info({ refund_id: refund.id, amount_base: String(refund.amount_base), gross_base: String(gross) }, 'refund grossed up for the token fee');
  failpoint('payout:after_sign');
  const result = await adapter.broadcast(attempt.signed as unknown as SignedTransfer);
  failpoint('payout:after_broadcast');
  if (result.status === 'rejected') {
    // Not on chain. The next step looks the hash up again and re-broadcasts or drops it by the rules above.
    deps.log?.warn({ refund_id: refund.id, tx_hash: attempt.tx_hash, reason: result.reason, detail: result.detail }, 'broadcast refused');
    return { kind: 'wait', ms: deps.pollMs };
  }
  await setAttemptState(deps.db, attempt.id, 'broadcast');
  if (replacing) deps.log?.info({ refund_id: refund.id, tx_hash: attempt.tx_hash, replaces: replacing.tx_hash, feeBump }, 'stuck payout replaced');
  return { kind: 'wait', ms: deps.pollMs };
}

async function merchantAccount(db: Db, refund: RefundRow): Promise<number> {
  const row = await db
    .selectFrom('merchant_hd_accounts')
    .select('account_index')
    .where('merchant_id', '=', refund.merchant_id)
    .where('mode', '=', refund.mode)
    .executeTakeFirstOrThrow();
  return row.account_index;
}

async function failed(deps: PayoutEngineDeps, refundId: string, code: RefundFailureCode, detail?: string): Promise<StepResult> {
  await failRefund(deps.db, refundId, code, detail);
  deps.log?.warn({ refund_id: refundId, code, detail }, 'refund failed');
  return { kind: 'done', status: 'failed' };
}

function txFailureCode(reason: TxFailureReason): RefundFailureCode {
  switch (reason) {
    case 'reverted':
      return 'reverted';
    case 'out_of_energy':
      return 'out_of_energy';
    case 'no_transfer_event':
      return 'no_transfer_event';
    case 'expired':
      return 'expired';
    default: {
      const never: never = reason;
      return never;
    }
  }
}

/** The token's own reason for refusing, read from its state (paused, blacklists): distinct texts for the merchant. */
function refusalCode(refusal: TokenRefusal): RefundFailureCode {
  switch (refusal) {
    case 'token_paused':
      return 'token_paused';
    case 'recipient_blacklisted':
      return 'recipient_blacklisted';
    case 'sender_blacklisted':
    case 'spender_blacklisted': // a refund's transfer has no spender; the hot wallet is the sender either way
      return 'sender_blacklisted';
    default: {
      const never: never = refusal;
      return never;
    }
  }
}

function sendFailureCode(reason: SendFailureReason): RefundFailureCode {
  switch (reason) {
    case 'insufficient_gas':
      return 'insufficient_gas';
    case 'insufficient_token_balance':
      return 'insufficient_token_balance';
    case 'simulation_reverted':
      return 'simulation_reverted';
    case 'expired':
      return 'expired';
    case 'nonce_too_low':
    case 'underpriced':
    case 'invalid':
    case 'other':
      return 'invalid';
    default: {
      const never: never = reason;
      return never;
    }
  }
}
