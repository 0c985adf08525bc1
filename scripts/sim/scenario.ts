import type { Prng } from './prng.js';

// What the merchants and payers of one seed do, drawn from its PRNG: sessions on the seed's networks and tokens with
// exact, partial (completed by a second transfer), over-, under- and late payments (after the session expired), or
// none; and, on paid sessions, refunds: full, partial, racing (two at once whose sum exceeds the payment) and
// canceled right after creation.

export type PaymentKind = 'exact' | 'partial' | 'over' | 'under' | 'late' | 'none';
export type RefundKind = 'full' | 'partial' | 'racing' | 'canceled';

export interface SessionPlan {
  /** ms into the seed when the session is created. */
  at: number;
  merchant: number;
  network: string;
  token: 'USDT' | 'USDC';
  /** USD cents. */
  amountCents: number;
  payment: PaymentKind;
  refund?: RefundKind;
}

export interface Scenario {
  merchants: number;
  sessions: SessionPlan[];
}

export function buildScenario(prng: Prng, o: { activeMs: number; networks: string[]; sessions?: number }): Scenario {
  const merchants = prng.int(1, 2);
  const count = o.sessions ?? prng.int(3, 6);
  const sessions: SessionPlan[] = [];
  for (let i = 0; i < count; i++) {
    const payment = prng.pick(['exact', 'exact', 'partial', 'over', 'under', 'late', 'none'] as const);
    const paid = payment === 'exact' || payment === 'partial' || payment === 'over';
    sessions.push({
      at: prng.int(0, Math.max(0, o.activeMs - 8000)),
      merchant: prng.int(0, merchants - 1),
      network: prng.pick(o.networks),
      token: prng.pick(['USDT', 'USDC'] as const),
      amountCents: prng.int(100, 5000),
      payment,
      ...(paid && prng.chance(0.6) ? { refund: prng.pick(['full', 'partial', 'racing', 'canceled'] as const) } : {}),
    });
  }
  return { merchants, sessions: sessions.sort((a, b) => a.at - b.at) };
}
