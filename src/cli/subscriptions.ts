import type { Db } from '../db/database.js';
import type { Clock } from '../domain/clock.js';
import type { HoldResolution } from '../ledger/subscriptions/hold.js';
import { heldSubscriptionList, resolveHold } from '../operations/subscriptions.js';
import { UsageError, options, print } from './args.js';

// Operator commands of subscriptions held for an operator (docs/subscriptions.md "Operator hold"): a thin face over
// src/operations/subscriptions.ts (the console calls the same).

export const SUBSCRIPTIONS_USAGE = `subscriptions held                                  subscriptions waiting for an operator (a charge's tokens went
                                                    to a wrong recipient), with their charge and transaction
subscriptions resolve <subscription_id> --retry|--cancel
                                                    end a hold: charge the open invoice again, or cancel`;

export interface SubscriptionsCliContext {
  db: Db;
  clock: Clock;
  checkoutBaseUrl: string;
  out?: (value: unknown) => void;
}

export async function subscriptionsCli(args: string[], ctx: SubscriptionsCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  switch (sub) {
    case 'held': {
      options(rest, {});
      out(await heldSubscriptionList(ctx.db));
      return;
    }
    case 'resolve': {
      const { values, positionals } = options(rest, { retry: { type: 'boolean' }, cancel: { type: 'boolean' } });
      const id = positionals[0];
      if (!id || positionals.length > 1 || values.retry === values.cancel) throw new UsageError(SUBSCRIPTIONS_USAGE);
      const resolution: HoldResolution = values.retry ? 'retry' : 'cancel';
      const r = await resolveHold(ctx, id, resolution);
      if (r.kind === 'not_found') throw new UsageError(`no subscription ${id}`);
      if (r.kind === 'not_held') throw new UsageError(`subscription ${id} is not held (status ${r.status})`);
      out({ subscription_id: r.subscription.id, resolution, status: r.subscription.status, next_action: r.subscription.next_action });
      return;
    }
    default:
      throw new UsageError(SUBSCRIPTIONS_USAGE);
  }
}
