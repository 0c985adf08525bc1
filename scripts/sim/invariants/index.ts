import type { Invariant } from '../contract.js';
import { CANCELED_SESSIONS, canceledSessionMoneyUnmatched } from './canceled-sessions.js';
import { CHARGES, renewalPeriodChargedOnce } from './charges.js';
import { DEPOSITS_RECORDED, depositsRecordedBelowCursor } from './deposits-recorded.js';
import { JOBS_INVARIANT, noJobLeftUnresumed } from './jobs.js';
import { JOURNAL, journalReconcilesWithChains } from './journal.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from './outbound-once.js';
import { SESSION_PAID, sessionPaidIffChain } from './session-paid.js';
import { SIGNER_AUDIT, signerSignedOnlyJustified } from './signer-audit.js';
import { SINGLE_CREDIT, noTransferCreditedTwice } from './single-credit.js';
import { WEBHOOKS, everyEventDeliveredOnceInOrder } from './webhooks.js';

// The simulator's invariants (issue #20 item 3; docs/simulation-invariants.md), checked at the end of every seed.
// Each returns its violations; every violation carries its invariant's name (the keys below), and each function is
// named the same, so a runner that lists `allInvariants` by function name gets the same names.
export const invariants = {
  [SESSION_PAID]: sessionPaidIffChain,
  [SINGLE_CREDIT]: noTransferCreditedTwice,
  [OUTBOUND_ONCE]: outboundMovedMoneyAtMostOnce,
  [WEBHOOKS]: everyEventDeliveredOnceInOrder,
  [JOURNAL]: journalReconcilesWithChains,
  [JOBS_INVARIANT]: noJobLeftUnresumed(),
  [CHARGES]: renewalPeriodChargedOnce,
  [CANCELED_SESSIONS]: canceledSessionMoneyUnmatched,
  [DEPOSITS_RECORDED]: depositsRecordedBelowCursor,
  [SIGNER_AUDIT]: signerSignedOnlyJustified,
} satisfies Record<string, Invariant>;

export const allInvariants: Invariant[] = Object.entries(invariants).map(([name, f]) => named(name, f));

function named(name: string, f: Invariant): Invariant {
  const g: Invariant = (ctx) => f(ctx);
  Object.defineProperty(g, 'name', { value: name });
  return g;
}

export { noJobLeftUnresumed };
