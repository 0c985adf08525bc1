// Why a final transfer to a deposit address was not counted toward its session (an `unmatched` deposit), as the
// ledger decides it (src/ledger/payments/deposits.ts) and the session's `payments[]` and the exports show it. decisions.md
// names the rule ("a transfer to an expired or canceled session's address is kept as an unmatched deposit") but no
// reason codes; these are ours, documented once in docs/checkout.md ("Why a transfer is unmatched"), where a test
// (test/unit/unmatched-reasons.test.ts) holds the list and the page to each other. A transfer to an expired session
// is `late` (its block is after `expires_at`); one in a block at or before `expires_at` counts (decisions.md).
// `unsupported_token`: a look-alike of the token (USDbC, USDC.e: the network registry's look-alikes), known from the
// moment it is seen; it is the operator's alone and never reaches the API (payments[] lists USDT and USDC transfers).
export const UNMATCHED_REASONS = ['late', 'session_paid', 'session_canceled', 'not_selected', 'no_session', 'unsupported_token'] as const;
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];

/** The reasons the API's `payments[].unmatched_reason` can carry: all but `unsupported_token` (never in payments[]). */
export const PAYMENT_UNMATCHED_REASONS = [
  'late',
  'session_paid',
  'session_canceled',
  'not_selected',
  'no_session',
] as const satisfies readonly Exclude<UnmatchedReason, 'unsupported_token'>[];

/** What operator lists (`deposits unmatched`, the console's stranded money) say of an `unsupported_token` deposit. */
export const UNSUPPORTED_TOKEN_NOTICE = 'unsupported token: not credited, not refundable by the gateway';
