import { InvalidAmountError, formatMinor, parseDecimalToMinor } from '../domain/money.js';
import { ApiError } from '../domain/errors.js';
import { refundStranded, strandedSource } from '../operations/stranded-refund.js';
import { Refusal } from '../operations/refunds-refusal.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import { UsageError, options, print } from './args.js';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Db } from '../db/database.js';

/** What these commands need (src/cli/payouts.ts's PayoutCliContext has it all). */
export interface MoneyBackCliContext {
  db: Db;
  adapters: () => Promise<ChainRegistry>;
  enqueue: (refundId: string) => Promise<void>;
  out?: (value: unknown) => void;
}

// Money back to customers (issue 16 item 4; docs/refunds.md "Money back to customers"): the operator refunds an
// unmatched deposit, or what a session that closed unpaid received, through the same rules, payout engine and
// refund.* events as the merchant API. The default refund_id is derived from the deposit or session, so running the
// same command twice pays once (the second run answers the stored refund, `replayed: true`).

export const MONEY_BACK_USAGE = `deposits refund <deposit_id> [--to <address>] [--amount <decimal>] [--refund-id <id>]
                                               pay an unmatched deposit back (default: all of it, to its sender)
sessions refund-received <session_id> [--to <address>] [--amount <decimal>] [--refund-id <id>]
                                               pay back what an expired or canceled session received`;

export async function refundToCustomer(kind: 'deposit' | 'session', args: string[], ctx: MoneyBackCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const { values, positionals } = options(args, {
    to: { type: 'string' },
    amount: { type: 'string' },
    'refund-id': { type: 'string' },
  });
  const id = positionals[0];
  if (!id || positionals.length > 1) throw new UsageError(MONEY_BACK_USAGE);
  const chains = await ctx.adapters();
  try {
    const deps = { db: ctx.db, chains, enqueuePayout: ctx.enqueue };
    const found = await strandedSource(deps, kind, id);
    let amountMinor: bigint | undefined;
    if (values.amount !== undefined) {
      try {
        amountMinor = parseDecimalToMinor(values.amount, STABLECOIN_EXPONENT);
      } catch (e) {
        if (e instanceof InvalidAmountError) throw new UsageError(`--amount ${e.message}`);
        throw e;
      }
      if (amountMinor <= 0n) throw new UsageError('--amount must be above 0');
    }
    const result = await refundStranded(
      deps,
      kind,
      id,
      { amountMinor, amountText: values.amount, to: values.to, refundId: values['refund-id'], initiatedBy: 'operator_cli' },
      found,
    );
    const r = result.refund;
    out({
      replayed: result.kind === 'replayed',
      id: r.id,
      refund_id: r.refund_id,
      merchant_id: r.merchant_id,
      session_id: r.session_id,
      deposit_id: r.deposit_id,
      network: r.network,
      amount: formatMinor(r.amount_minor, STABLECOIN_EXPONENT),
      currency: r.currency,
      destination_address: chains.displayAddress(r.network, r.mode, r.destination_address),
      status: r.status,
    });
  } catch (e) {
    if (e instanceof Refusal) throw new UsageError(e.message);
    if (e instanceof ApiError) throw new UsageError(`${e.code}: ${e.message}`);
    throw e;
  }
}

export async function sessionsCli(args: string[], ctx: MoneyBackCliContext): Promise<void> {
  const [sub, ...rest] = args;
  if (sub !== 'refund-received') throw new UsageError(MONEY_BACK_USAGE);
  return refundToCustomer('session', rest, ctx);
}
