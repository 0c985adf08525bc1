import type { Invariant } from '../contract.js';
import { noJobLeftUnresumed } from './jobs.js';
import { journalReconcilesWithChains } from './journal.js';
import { outboundMovedMoneyAtMostOnce } from './outbound-once.js';
import { sessionPaidIffChain } from './session-paid.js';
import { noTransferCreditedTwice } from './single-credit.js';
import { everyEventDeliveredOnceInOrder } from './webhooks.js';

// The simulator's invariants (issue #20 item 3; docs/simulation.md), checked at the end of every seed. Each returns
// its violations, each violation naming its invariant (the names are exported beside each function).
export const invariants = {
  sessionPaidIffChain,
  noTransferCreditedTwice,
  outboundMovedMoneyAtMostOnce,
  everyEventDeliveredOnceInOrder,
  journalReconcilesWithChains,
  noJobLeftUnresumed: noJobLeftUnresumed(),
} satisfies Record<string, Invariant>;

export const allInvariants: Invariant[] = Object.values(invariants);

export { noJobLeftUnresumed };
