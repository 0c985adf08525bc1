import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import { deliveredMinor } from '../domain/refund-state.js';
import { formatMinor } from '../domain/money.js';
import type { RefundRow } from '../ledger/refunds/refunds.js';
import type { PayoutAttempt } from '../ledger/refunds/refund-payouts.js';
import { NATIVE_COINS } from '../rates/native-prices.js';
import { iso } from './payments-view.js';
import { native } from './sweeps-json.js';

// A refund and its on-chain attempts as the console shows them (src/console/contract/refunds.ts).

export interface RefundView {
  id: string;
  refund_id: string;
  merchant_id: string;
  mode: 'test' | 'live';
  session_id: string;
  deposit_id: string | null;
  order_id: string;
  amount: string;
  amount_delivered: string | null;
  token: string;
  network: string;
  status: RefundRow['status'];
  reason: string | null;
  description: string | null;
  failure_reason: string | null;
  destination_address: string;
  transaction_hash: string | null;
  explorer_url: string | null;
  created_at: string;
  processed_at: string | null;
  canceled_at: string | null;
}

export function refundView(r: RefundRow, chains: ChainRegistry): RefundView {
  return {
    id: r.id,
    refund_id: r.refund_id,
    merchant_id: r.merchant_id,
    mode: r.mode,
    session_id: r.session_id,
    deposit_id: r.deposit_id,
    order_id: r.order_id,
    amount: formatMinor(r.amount_minor, STABLECOIN_EXPONENT),
    amount_delivered:
      r.delivered_base === null ? null : formatMinor(deliveredMinor({ ...r, delivered_base: r.delivered_base }), STABLECOIN_EXPONENT),
    token: r.token,
    network: r.network,
    status: r.status,
    reason: r.reason,
    description: r.description,
    failure_reason: r.failure_reason,
    destination_address: chains.displayAddress(r.network, r.mode, r.destination_address),
    transaction_hash: r.transaction_hash,
    explorer_url: r.transaction_hash ? chains.explorerTxUrl(r.network, r.mode, r.transaction_hash) : null,
    created_at: r.created_at.toISOString(),
    processed_at: iso(r.processed_at),
    canceled_at: iso(r.canceled_at),
  };
}

export interface PayoutAttemptView {
  tx_hash: string;
  nonce: string | null;
  state: PayoutAttempt['state'];
  fee: string | null;
  /** `fee` in the network's coin (`fee_coin`), e.g. "0.000021". */
  fee_native: string | null;
  fee_coin: string;
  fee_bump_percent: number;
  detail: string | null;
  created_at: string;
  broadcast_at: string | null;
  settled_at: string | null;
  explorer_url: string | null;
}

/** `fee`: what the journal booked for the attempt's transaction (native base units); null until it is final. */
export function payoutAttemptView(a: PayoutAttempt, chains: ChainRegistry, fee: bigint | undefined): PayoutAttemptView {
  return {
    tx_hash: a.tx_hash,
    nonce: a.nonce === null ? null : a.nonce.toString(),
    state: a.state,
    fee: fee === undefined ? null : fee.toString(),
    fee_native: fee === undefined ? null : native(a.network, fee),
    fee_coin: NATIVE_COINS[a.network].symbol,
    fee_bump_percent: a.fee_bump_percent,
    detail: a.detail,
    created_at: a.created_at.toISOString(),
    broadcast_at: iso(a.broadcast_at),
    settled_at: iso(a.settled_at),
    explorer_url: chains.explorerTxUrl(a.network, a.mode, a.tx_hash),
  };
}
