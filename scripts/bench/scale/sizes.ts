// The scale benchmark's sizes (issue 38, "A realistic database"): a year of a large deployment at factor 1.0.
// Every count scales linearly with the factor; merchants never fall below 2 (the largest one and the rest).

export interface ScaleSizes {
  factor: number;
  merchants: number;
  sessions: number;
  /** Deposits in all: one credited per paid session, and a second (unmatched: session already paid) for some. */
  deposits: number;
  refunds: number;
  subscriptions: number;
  /** Invoices per subscription: monthly over the simulated year. */
  invoicesPerSubscription: number;
  /** Webhook delivery attempts in all (the "webhook deliveries"): one delivery row per event, retries to fill. */
  webhookAttempts: number;
}

export const FULL = { merchants: 1000, sessions: 1_000_000, refunds: 100_000, subscriptions: 10_000, webhookAttempts: 3_000_000 };

export function scaleSizes(factor: number): ScaleSizes {
  if (!(factor > 0 && factor <= 4)) throw new Error(`--factor must be in (0, 4], got ${factor}`);
  const n = (x: number, min = 1) => Math.max(min, Math.round(x * factor));
  // Sessions come in blocks of 20 (the status pattern repeats every 20 sessions): round up to whole blocks.
  const sessions = Math.ceil(n(FULL.sessions, 20) / 20) * 20;
  return {
    factor,
    merchants: n(FULL.merchants, 2),
    sessions,
    // 17 of 20 sessions are paid (one credited deposit each); 3 of 20 also receive a second, unmatched transfer.
    deposits: (sessions / 20) * 20,
    refunds: sessions / 10,
    subscriptions: n(FULL.subscriptions),
    invoicesPerSubscription: 12,
    webhookAttempts: n(FULL.webhookAttempts),
  };
}

/** The session pattern (per block of 20, by g mod 20): which are paid, which get an unmatched second deposit, ... */
export const PATTERN = {
  paidBelow: 17, // g % 20 < 17: paid
  secondDepositBelow: 3, // g % 20 < 3: paid, then a second transfer (unmatched, reason session_paid)
  expiredBelow: 19, // 17, 18: expired; 19: canceled
  refundEvery: 10, // g % 10 = 0: refunded in full (always a paid session)
} as const;
