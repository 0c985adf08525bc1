// Why a final transfer to a deposit address was not counted toward its session (an `unmatched` deposit), as the
// ledger decides it (src/ledger/payments/deposits.ts) and the session's `payments[]` and the exports show it. decisions.md
// names the rule ("a transfer to an expired or canceled session's address is kept as an unmatched deposit") but no
// reason codes; these are ours, documented once in docs/checkout.md ("Why a transfer is unmatched"), where a test
// (test/unit/unmatched-reasons.test.ts) holds the list and the page to each other. A transfer to an expired session
// is `late` (its block is after `expires_at`); one in a block at or before `expires_at` counts (decisions.md).
export const UNMATCHED_REASONS = ['late', 'session_paid', 'session_canceled', 'not_selected', 'no_session'] as const;
export type UnmatchedReason = (typeof UNMATCHED_REASONS)[number];
