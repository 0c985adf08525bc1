import {
  TransferRejectedError,
  type ChainAdapter,
  type SendFailureReason,
  type TokenRefusal,
  type TxFailureReason,
} from '../../chains/types.js';
import { HOT_WALLET_SLOT } from '../../chains/types.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Db } from '../db/database.js';
import type { RefundFailureCode } from '../domain/refund-state.js';
import { completeRefund, failRefund } from '../ledger/refunds/refund-payouts.js';
import { merchantAccountIndex } from '../ledger/merchants/merchants.js';
import { refundOutboundStore } from '../ledger/refunds/refund-outbound-store.js';
import { registerWallets } from '../ledger/journal/entries.js';
import type { RefundRow } from '../ledger/refunds/refunds.js';
import { advanceOutbound } from '../outbound/engine.js';
import { nothingSigned, type OutboundDeps, type OutboundFailure, type OutboundKind, type StepResult } from '../outbound/kind.js';

// Refund payouts: a `transfer` from the merchant's refunds hot wallet to the refund's destination, driven by the
// outbound engine (src/outbound/engine.ts: persist-before-broadcast, gapless nonces, replacement, proven-dead
// re-signing). What is the refund's own: the pre-flight (gross-up for a token's fee, the hot wallet's balance), the
// delivered amount read from the landed transaction, and the refund's failure codes.

export type { StepResult, StuckReplacement } from '../outbound/kind.js';

export interface PayoutEngineDeps extends OutboundDeps {
  db: Db;
  /** The configured chains. */
  adapters: ChainRegistry;
}

export async function advanceRefund(deps: PayoutEngineDeps, refundId: string): Promise<StepResult> {
  return advanceOutbound(refundKind(deps), deps, refundId);
}

// One kind per deps object: the engine calls it for every step of every refund.
const kinds = new WeakMap<PayoutEngineDeps, OutboundKind<RefundRow>>();

function refundKind(deps: PayoutEngineDeps): OutboundKind<RefundRow> {
  const cached = kinds.get(deps);
  if (cached) return cached;
  const kind: OutboundKind<RefundRow> = {
    store: refundOutboundStore(deps.db),
    intent: (refund) => ({ purpose: 'refund_payout', refund_id: refund.id }),
    describe: (refund) => ({ refund_id: refund.id }),
    adapter(refund) {
      const adapter = deps.adapters.get(refund.network, refund.mode);
      return adapter ? { adapter } : { missing: 'network' };
    },
    network: (refund) => ({ network: refund.network, mode: refund.mode }),
    outcome: (adapter, _refund, a) => adapter.getTransactionOutcome(a.txHash),
    async receipt(adapter, refund, a, landed) {
      const sender = adapter.normalizeAddress(a.signed.sender!) ?? a.signed.sender!;
      const d = await adapter.readDelivery(a.txHash, refund.token as 'USDT' | 'USDC', sender, refund.destination_address);
      if (!d) return { kind: 'unread' };
      if (d.delivered === 0n) return { kind: 'undelivered', elsewhere: d.elsewhere };
      return {
        kind: 'delivered',
        async settle() {
          await completeRefund(deps.db, refund.id, { id: a.id, tx_hash: a.txHash }, d.delivered, {
            sender,
            blockHeight: landed.block.height,
            blockHash: landed.block.hash,
            fee: landed.fee,
            sent: d.delivered + d.elsewhere,
            ...(d.rentPaid ? { rentPaid: d.rentPaid } : {}),
          });
          if (d.delivered < refund.amount_base) {
            deps.log?.warn(
              {
                refund_id: refund.id,
                tx_hash: a.txHash,
                amount_base: String(refund.amount_base),
                delivered_base: String(d.delivered),
                elsewhere_base: String(d.elsewhere),
              },
              'refund completed short: the destination received less than the refund amount (a fee taken by the token)',
            );
          } else deps.log?.info({ refund_id: refund.id, tx_hash: a.txHash }, 'refund completed');
          return { kind: 'done', status: 'completed' };
        },
      };
    },
    async prepare(adapter, refund, replacing) {
      const account = await merchantAccountIndex(deps.db, refund.merchant_id, refund.mode);
      const wallet = await adapter.deriveHotWallet(deps.signer!, account, HOT_WALLET_SLOT.refunds);
      // Watched from now on: what reaches it or leaves it outside the service is journaled (docs/journal.md).
      await registerWallets(deps.db, [
        { network: refund.network, mode: refund.mode, address: wallet.address, merchantId: refund.merchant_id, role: 'refunds' },
      ]);
      const token = refund.token as 'USDT' | 'USDC';
      let gross: bigint;
      try {
        // A token announcing a fee on transfers (Tether's views) is sent grossed up, so the customer receives the
        // refund amount; the fee is the merchant's. What actually arrived is still read from the landed transaction.
        gross = adapter.grossForNet ? await adapter.grossForNet(token, refund.amount_base) : refund.amount_base;
      } catch (err) {
        if (!(err instanceof TransferRejectedError)) throw err;
        if (!replacing) return failedUnsent(deps, refund.id, sendFailureCode(err.reason), err.message);
        deps.log?.warn({ refund_id: refund.id, reason: err.reason }, 'replacement refused; keeping the original in flight');
        return { kind: 'wait', ms: deps.pollMs };
      }
      if (!replacing) {
        // Pre-flight: a payout the wallet cannot cover fails now, with its reason, before any nonce or fee is spent.
        const balances = await adapter.getBalances(wallet.address);
        if ((balances.tokens[token] ?? 0n) < gross) {
          const fee = gross > refund.amount_base ? ` (${refund.amount_base} plus the token's transfer fee)` : '';
          return failedUnsent(
            deps,
            refund.id,
            'insufficient_token_balance',
            `hot wallet ${adapter.displayAddress(wallet.address)} holds ${balances.tokens[token] ?? 0n} base units, needs ${gross}${fee}`,
          );
        }
      }
      return {
        kind: 'ready',
        from: wallet,
        build: (nonce, feeBumpPercent) =>
          adapter.buildTokenTransfer({
            from: wallet,
            to: refund.destination_address,
            token,
            amount: gross,
            ...(nonce !== null ? { nonce } : {}),
            ...(feeBumpPercent > 0 ? { feeBumpPercent } : {}),
          }),
        signed() {
          if (gross > refund.amount_base)
            deps.log?.info(
              { refund_id: refund.id, amount_base: String(refund.amount_base), gross_base: String(gross) },
              'refund grossed up for the token fee',
            );
        },
      };
    },
    fail: (refund, f) => {
      const [code, detail, txHash] = failure(f);
      // Refused before anything was signed: only while no duplicate run's attempt can still land.
      return nothingSigned(f) ? failedUnsent(deps, refund.id, code, detail) : failed(deps, refund.id, code, detail, txHash);
    },
  };
  kinds.set(deps, kind);
  return kind;
}

/** The refund's failure code and detail for what the engine saw. */
function failure(f: OutboundFailure): [RefundFailureCode, string?, string?] {
  switch (f.cause) {
    case 'unavailable':
      return [f.missing === 'network' ? 'network_unavailable' : 'signer_unavailable'];
    case 'rejected':
      return [f.refusal ? refusalCode(f.refusal) : sendFailureCode(f.reason), f.detail];
    case 'reverted':
      return [f.refusal ? refusalCode(f.refusal) : txFailureCode(f.reason), `${f.detail}; transaction ${f.txHash}`, f.txHash];
    case 'undelivered': {
      // Mined, yet nothing reached the destination: not completed. If tokens left for another address, say so.
      const detail =
        f.elsewhere > 0n ? `${f.elsewhere} base units went from the hot wallet to other addresses` : 'no Transfer to the destination';
      return [f.elsewhere > 0n ? 'wrong_recipient' : 'no_transfer_event', `${detail}; transaction ${f.txHash}`, f.txHash];
    }
    default: {
      const never: never = f;
      return never;
    }
  }
}

async function failed(
  deps: PayoutEngineDeps,
  refundId: string,
  code: RefundFailureCode,
  detail?: string,
  txHash?: string,
  opts: { unsent?: boolean } = {},
): Promise<StepResult> {
  // A mined transaction that failed keeps its hash in transaction_hash too (issue 16 item 5), not only in the reason.
  const row = await failRefund(deps.db, refundId, code, detail, txHash, opts);
  // Nothing signed by this run, and a duplicate run's attempt can still land: that attempt is followed instead.
  if (opts.unsent && !row) return { kind: 'wait', ms: deps.pollMs };
  deps.log?.warn({ refund_id: refundId, code, detail }, 'refund failed');
  return { kind: 'done', status: 'failed' };
}

/**
 * Fails a refund this run signed nothing for (refused in pre-flight or before signing), unless a duplicate run's
 * attempt can still land: then it waits and follows that attempt (its pre-flight may have failed because of it).
 */
const failedUnsent = (deps: PayoutEngineDeps, refundId: string, code: RefundFailureCode, detail?: string): Promise<StepResult> =>
  failed(deps, refundId, code, detail, undefined, { unsent: true });

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
