import {
  isAllowanceCharger,
  type AllowanceCharger,
  type ChainAdapter,
  type TokenRefusal,
  type TokenSymbol,
  type TxSigner,
} from '../../chains/types.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { chargeOutboundStore } from '../ledger/subscriptions/charge-outbound-store.js';
import { chargeFailed, chargeSucceeded, type ChargeRow } from '../ledger/subscriptions/charges.js';
import { chargeHeld } from '../ledger/subscriptions/hold.js';
import type { LifecycleDeps } from '../ledger/subscriptions/lifecycle.js';
import type { Logger } from '../logger.js';
import { advanceOutbound } from '../outbound/engine.js';
import type { FailpointAction } from '../outbound/failpoints.js';
import type { OutboundDeps, OutboundFailure, OutboundKind, StepResult, StuckReplacement } from '../outbound/kind.js';
import type { WalletResolver } from './wallets.js';

// Subscription charges: a `transferFrom` (EVM, TRON) or delegated transfer (Solana) of the customer's tokens, sent
// by the merchant's charger wallet to the settlement address, driven by the outbound engine (src/outbound/engine.ts:
// persist-before-broadcast, gapless nonces, replacement, proven-dead re-signing). What is the charge's own:
// - the pre-flight: allowance and balance are read first, so no gas is spent on a charge that must fail;
// - a charge row leaves 'pending' under its row lock, so two schedulers can never sign it twice;
// - success is the customer's Transfer to the settlement address (a paid invoice), failure a failed invoice payment.

export interface ChargeEngineDeps extends LifecycleDeps, StuckReplacement {
  adapters: ChainRegistry;
  signer: TxSigner | null;
  /** The restore guard's first look back (OutboundDeps.walletLookbackMs). */
  walletLookbackMs?: number;
  walletResolver: WalletResolver;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  /** Crash injection; the default SIGKILLs the process at the points SP_FAILPOINTS names. */
  failpoint?: FailpointAction;
}

export type ChargeStep = { kind: 'done'; state: string } | { kind: 'wait' };

export async function advanceCharge(deps: ChargeEngineDeps, chargeId: bigint): Promise<ChargeStep> {
  const { kind, engine } = chargeKind(deps);
  const step = await advanceOutbound(kind, engine, String(chargeId));
  return step.kind === 'done' ? { kind: 'done', state: step.status } : { kind: 'wait' };
}

type Charger = ChainAdapter & AllowanceCharger;

// One kind per deps object: the scheduler calls it for every step of every charge.
const kinds = new WeakMap<ChargeEngineDeps, { kind: OutboundKind<ChargeRow, Charger>; engine: OutboundDeps }>();

function chargeKind(deps: ChargeEngineDeps): { kind: OutboundKind<ChargeRow, Charger>; engine: OutboundDeps } {
  const cached = kinds.get(deps);
  if (cached) return cached;
  const kind: OutboundKind<ChargeRow, Charger> = {
    store: chargeOutboundStore(deps.db),
    intent: (charge) => ({ purpose: 'subscription_charge', charge_id: String(charge.id) }),
    describe: (charge) => ({ charge_id: String(charge.id) }),
    adapter(charge) {
      const adapter = deps.adapters.get(charge.network, charge.mode);
      if (!adapter) return { missing: 'network' };
      return isAllowanceCharger(adapter) ? { adapter } : { missing: 'signer' };
    },
    network: (charge) => ({ network: charge.network, mode: charge.mode }),
    outcome: (adapter, charge, a) => adapter.getTransferFromOutcome(a.txHash, charge.owner_address),
    async receipt(adapter, charge, a, landed) {
      const t = await adapter.findChargeTransfer(a.txHash, charge.owner_address, charge.destination_address);
      if (!t) {
        // Mined, yet nothing reached the settlement address: never a paid invoice.
        const d = await adapter.readDelivery(a.txHash, charge.token as TokenSymbol, charge.owner_address, charge.destination_address);
        return { kind: 'undelivered', elsewhere: d?.elsewhere ?? 0n };
      }
      return {
        kind: 'delivered',
        async settle() {
          const charger = adapter.normalizeAddress(a.signed.sender!) ?? a.signed.sender!;
          await chargeSucceeded(deps, charge.id, { txHash: a.txHash, ...t, charger, fee: landed.fee });
          if (t.amount < charge.amount_base) {
            // The token took a fee on transferFrom: the customer paid the invoice amount, the merchant received less.
            deps.log?.warn(
              {
                charge_id: String(charge.id),
                tx_hash: a.txHash,
                amount_base: String(charge.amount_base),
                delivered_base: String(t.amount),
              },
              'charge delivered less than its amount to the settlement address (a fee taken by the token)',
            );
          }
          return { kind: 'done', status: 'succeeded' };
        },
      };
    },
    async prepare(adapter, charge, replacing) {
      const token = charge.token as TokenSymbol;
      if (!replacing) {
        // Pre-flight: refuse now, with the reason, what would revert on chain.
        const [allowance, balance] = await Promise.all([
          adapter.getAllowance(token, charge.owner_address, charge.charger_address),
          adapter.getTokenBalance(token, charge.owner_address),
        ]);
        if (allowance < charge.amount_base) return failNow(deps, charge, `insufficient_allowance: ${allowance} < ${charge.amount_base}`);
        if (balance < charge.amount_base) return failNow(deps, charge, `insufficient_balance: ${balance} < ${charge.amount_base}`);
      }
      const w = await deps.walletResolver.resolve(charge.merchant_id, charge.mode, charge.network);
      return {
        kind: 'ready',
        from: w.chargerKey,
        build: (nonce, feeBumpPercent) =>
          adapter.buildTokenTransferFrom(
            {
              from: w.chargerKey,
              to: charge.destination_address,
              token,
              amount: charge.amount_base,
              nonce: nonce ?? 0n,
              ...(feeBumpPercent > 0 ? { feeBumpPercent } : {}),
            },
            charge.owner_address,
          ),
      };
    },
    async fail(charge, f) {
      if (f.cause === 'rejected') return failNow(deps, charge, failureText(charge, f));
      if (f.cause === 'undelivered' && f.elsewhere > 0n) {
        // Not a customer short of funds: dunning would take their money again. The subscription waits for an
        // operator instead (docs/subscriptions.md "Operator hold"; `subscriptions held`, `subscriptions resolve`).
        deps.log?.error(
          {
            charge_id: String(charge.id),
            subscription_id: charge.subscription_id,
            tx_hash: f.txHash,
            elsewhere_base: String(f.elsewhere),
          },
          "charge moved the customer's tokens to another address than the settlement address; subscription held for an operator (subscriptions resolve)",
        );
        await chargeHeld(deps, charge.id, { reason: 'wrong_recipient', failureText: failureText(charge, f), txHash: f.txHash });
        return { kind: 'done', status: 'failed' };
      }
      await chargeFailed(deps, charge.id, failureText(charge, f));
      return { kind: 'done', status: 'failed' };
    },
  };
  // The scheduler ticks instead of sleeping between steps: a wait carries no delay of its own.
  const engine: OutboundDeps = {
    signer: deps.signer,
    stuckAfterMs: deps.stuckAfterMs,
    feeBumpPercent: deps.feeBumpPercent,
    pollMs: 0,
    ...(deps.walletLookbackMs !== undefined ? { walletLookbackMs: deps.walletLookbackMs } : {}),
    ...(deps.log ? { log: deps.log } : {}),
    ...(deps.failpoint ? { failpoint: deps.failpoint } : {}),
  };
  const entry = { kind, engine };
  kinds.set(deps, entry);
  return entry;
}

/** The charge's failure_reason for what the engine saw. */
function failureText(charge: ChargeRow, f: OutboundFailure): string {
  switch (f.cause) {
    case 'unavailable':
      return f.missing === 'network' ? `${charge.network} is not configured` : 'no signer for the charger wallet';
    case 'rejected':
    case 'reverted':
      // A reverted transferFrom moved nothing; its nonce was consumed on chain, so no other attempt can land.
      return f.refusal ? refusalText(f.refusal, f.detail) : `${f.reason}: ${f.detail}`;
    case 'undelivered':
      return f.elsewhere > 0n
        ? `wrong_recipient: ${f.elsewhere} base units went from the customer to other addresses than the settlement address (transaction ${f.txHash})`
        : 'no Transfer from the customer to the settlement address';
    default: {
      const never: never = f;
      return never;
    }
  }
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

/** Fails a charge nothing was signed for, unless another scheduler signed it meanwhile: then it is followed. */
async function failNow(deps: ChargeEngineDeps, charge: ChargeRow, reason: string): Promise<StepResult> {
  if (!(await chargeFailed(deps, charge.id, reason, { unsent: true }))) return { kind: 'wait', ms: 0 };
  deps.log?.info({ charge_id: String(charge.id), subscription_id: charge.subscription_id, reason }, 'charge failed before signing');
  return { kind: 'done', status: 'failed' };
}
