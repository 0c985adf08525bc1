import type { SessionRow } from './session-row.js';
import type { TokenSymbol } from '../../../chains/vocabulary.js';

// The quote of each stablecoin locked when a session was created (decisions.md: the rate is locked at creation for
// the session's life). Invariants: a coin is payable only at its own locked quote; a coin without a quote was not
// quotable at creation and is never offered; a session with no quote at all (written before quotes were stored, or
// by the subscription charge engine) takes either coin at its own target amount and rate.

export type Coin = TokenSymbol;

export interface LockedQuote {
  /** What the payer owes in this coin, API minor units (2 decimals). */
  amountMinor: bigint;
  /** Rate from the session currency to this coin, as locked; null when the session is priced in this coin. */
  exchangeRate: string | null;
}

type QuoteColumns = Pick<
  SessionRow,
  'quote_usdt_minor' | 'quote_usdt_rate' | 'quote_usdc_minor' | 'quote_usdc_rate' | 'target_amount_minor' | 'exchange_rate'
>;

export function lockedQuote(s: QuoteColumns, coin: Coin): LockedQuote | undefined {
  if (s.quote_usdt_minor === null && s.quote_usdc_minor === null) {
    return { amountMinor: s.target_amount_minor, exchangeRate: s.exchange_rate };
  }
  const amount = coin === 'USDT' ? s.quote_usdt_minor : s.quote_usdc_minor;
  if (amount === null) return undefined;
  return { amountMinor: amount, exchangeRate: coin === 'USDT' ? s.quote_usdt_rate : s.quote_usdc_rate };
}

/** Columns of insertSession for the quotes locked at creation (absent coin: not offered). */
export function quoteColumns(quotes: Partial<Record<Coin, LockedQuote>>) {
  return {
    quote_usdt_minor: quotes.USDT?.amountMinor ?? null,
    quote_usdt_rate: quotes.USDT?.exchangeRate ?? null,
    quote_usdc_minor: quotes.USDC?.amountMinor ?? null,
    quote_usdc_rate: quotes.USDC?.exchangeRate ?? null,
  };
}
