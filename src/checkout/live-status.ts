import { formatBaseUnits, stablecoinMinorToBase } from '../domain/money.js';
import type { SessionRow } from '../ledger/payments/sessions.js';

// What the payer sees while they pay, computed from the session, its provisional deposits and the watcher's tip.
// Only confirmed credits move `received_base`; a provisional transfer shows as "confirming" (n of N when the chain
// counts confirmations by depth). Never exposes merchant data: the shape below is all the page and its stream get.

export type LiveState = 'select' | 'waiting' | 'confirming' | 'partial' | 'paid' | 'expired' | 'canceled';

export interface LiveStatus {
  state: LiveState;
  network: string | null;
  token: string | null;
  /** Token amounts as decimal strings (token decimals, at least 2 places); base units beside them. */
  due: string | null;
  received: string | null;
  pending: string | null;
  remaining: string | null;
  remaining_base: string | null;
  /** Extension: what a paid session fell short by (sub-unit dust, or within the merchant's tolerance); null otherwise. */
  shortfall: string | null;
  shortfall_base: string | null;
  confirmations: { n: number; total: number | null } | null;
  expires_at: number;
  /** Same-origin path that redirects to the merchant's success_url; present once paid when one was given. */
  redirect: string | null;
}

export interface PendingDeposit {
  token: string;
  network: string;
  amount: bigint;
  blockNumber: bigint;
}

export interface ChainProgress {
  decimals: number;
  /** Highest block processed by the watcher (chain_cursors.tip_height), if any. */
  tipHeight: bigint | null;
  /** Confirmation depth required (null: finality by tag or commitment, no count to show). */
  requiredConfirmations: number | null;
}

export function computeLiveStatus(
  s: Pick<
    SessionRow,
    | 'status'
    | 'network'
    | 'token'
    | 'deposit_address'
    | 'target_amount_minor'
    | 'received_base'
    | 'expires_at'
    | 'success_url'
    | 'id'
    | 'shortfall_base'
  >,
  pending: readonly PendingDeposit[],
  chain: ChainProgress | null,
  paths: { returnPath: string },
  now: Date = new Date(),
): LiveStatus {
  const base: LiveStatus = {
    state: 'select',
    network: s.network,
    token: s.token,
    due: null,
    received: null,
    pending: null,
    remaining: null,
    remaining_base: null,
    shortfall: null,
    shortfall_base: null,
    confirmations: null,
    expires_at: Math.floor(s.expires_at.getTime() / 1000),
    redirect: null,
  };
  const selected = s.deposit_address !== null && s.network !== null && s.token !== null && chain !== null;
  if (selected) {
    const due = stablecoinMinorToBase(s.target_amount_minor, chain.decimals);
    const relevant = pending.filter((d) => d.network === s.network && d.token === s.token);
    const pendingSum = relevant.reduce((a, d) => a + d.amount, 0n);
    const covered = s.received_base + pendingSum;
    const remaining = covered >= due ? 0n : due - covered;
    Object.assign(base, {
      due: formatBaseUnits(due, chain.decimals),
      received: formatBaseUnits(s.received_base, chain.decimals),
      pending: formatBaseUnits(pendingSum, chain.decimals),
      remaining: formatBaseUnits(remaining, chain.decimals),
      remaining_base: remaining.toString(),
    });
    if (s.status === 'paid' && s.shortfall_base !== null && s.shortfall_base > 0n) {
      Object.assign(base, { shortfall: formatBaseUnits(s.shortfall_base, chain.decimals), shortfall_base: s.shortfall_base.toString() });
    }
    if (relevant.length > 0 && s.status !== 'paid' && s.status !== 'canceled') {
      const newest = relevant.reduce((m, d) => (d.blockNumber > m ? d.blockNumber : m), relevant[0]!.blockNumber); // least confirmed
      const n = chain.tipHeight !== null && chain.tipHeight >= newest ? Number(chain.tipHeight - newest + 1n) : 0;
      base.confirmations = {
        n: chain.requiredConfirmations === null ? n : Math.min(n, chain.requiredConfirmations),
        total: chain.requiredConfirmations,
      };
    }
  }
  switch (s.status) {
    case 'paid':
      return { ...base, state: 'paid', remaining: selected ? base.remaining : null, redirect: s.success_url ? paths.returnPath : null };
    case 'canceled':
      return { ...base, state: 'canceled' };
    case 'expired':
    case 'open': {
      if (base.confirmations) return { ...base, state: 'confirming' };
      const expired = s.status === 'expired' || s.expires_at.getTime() <= now.getTime();
      if (expired) return { ...base, state: 'expired' };
      if (!selected) return base;
      return { ...base, state: s.received_base > 0n ? 'partial' : 'waiting' };
    }
    default: {
      const never: never = s.status;
      return never;
    }
  }
}
