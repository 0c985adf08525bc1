/** A payment session's status (column payment_sessions.status). */
export type SessionStatus = 'open' | 'paid' | 'expired' | 'canceled';

// Payment-session life: open → paid | expired | canceled. Transitions are data; the ledger enforces them with
// UPDATE ... WHERE status IN (allowedFrom) and treats zero rows as a conflict.
export const SESSION_TRANSITIONS = {
  pay: ['open', 'expired'], // expired → paid only for transfers in blocks at or before expires_at (decisions.md)
  expire: ['open'],
  cancel: ['open'],
} as const satisfies Record<string, readonly SessionStatus[]>;

export type SessionAction = keyof typeof SESSION_TRANSITIONS;

/** The API shows only `unpaid` or `paid`. */
export function paymentStatus(status: SessionStatus): 'paid' | 'unpaid' {
  return status === 'paid' ? 'paid' : 'unpaid';
}
