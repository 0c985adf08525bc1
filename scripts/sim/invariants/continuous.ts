import type { Db } from '../../../src/db/database.js';
import type { InvariantContext, ReceivedDelivery, Violation } from '../contract.js';
import { OUTBOUND_ONCE, outboundMovedMoneyAtMostOnce } from './outbound-once.js';
import { noTransferCreditedTwice } from './single-credit.js';
import { WEBHOOKS } from './webhooks.js';

// The invariants that hold at every moment of a seed, not only once it drained (docs/simulation.md, "Continuous
// checks"), checked every few seconds while the scenario and the faults run, so a violation is reported when it
// happens (its time in the event log) rather than after the drain:
// - no transfer credited twice (invariants/single-credit.ts, all of it: a deposit is credited only once confirmed,
//   deeper than any simulated reorg, and the service writes a credit and the session's total in one transaction);
// - each refund, charge and sweep step moved money at most once (the "moved money N times" part of
//   invariants/outbound-once.ts: "exactly once when completed" and the unexplained hot-wallet transfers wait for the
//   end, as a payout may be on chain a moment before the service records what it learnt);
// - one body per webhook event id, equal to the frozen webhook_deliveries.body, and no event the outbox lacks;
// - every webhook request signed (the receiver's verification problems).
// Each round reads the database in one REPEATABLE READ snapshot, taken after copying the receiver's deliveries (so
// every event a delivery names was committed before the snapshot). A round that cannot read (PostgreSQL restarting)
// is skipped; the end-of-seed invariants still run everything.

export const SIGNATURE = 'webhook-signature';
const AT_MOST_ONCE = /moved money \d+ times|landed \d+ transactions/;

export interface ContinuousChecks {
  /** Rounds finished so far. */
  rounds(): number;
  /** Stops after the round in progress; resolves with the rounds run and skipped. */
  stop(): Promise<{ rounds: number; skipped: number; ms: number }>;
}

export interface ContinuousContext {
  db: Db;
  chains: InvariantContext['chains'];
  deliveries: ReceivedDelivery[];
  /** The receiver's signature problems so far (grows). */
  signatureProblems: string[];
  redis: InvariantContext['redis'];
}

export function startContinuousChecks(
  ctx: ContinuousContext,
  o: { intervalMs: number; onViolation: (v: Violation) => void },
): ContinuousChecks {
  const state = { stopped: false, rounds: 0, skipped: 0, ms: 0, signaturesSeen: 0 };
  const reported = new Set<string>();
  const report = (v: Violation) => {
    const key = `${v.invariant}|${v.message}`;
    if (reported.has(key)) return;
    reported.add(key);
    o.onViolation(v);
  };
  const wake: { now?: () => void } = {};
  const loop = (async () => {
    while (!state.stopped) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, o.intervalMs);
        wake.now = () => {
          clearTimeout(t);
          r();
        };
      });
      if (state.stopped) break;
      const started = Date.now();
      try {
        for (const v of await checkRound(ctx)) report(v);
        state.rounds++;
      } catch {
        state.skipped++;
      }
      state.ms += Date.now() - started;
    }
  })();
  return {
    rounds: () => state.rounds,
    async stop() {
      state.stopped = true;
      wake.now?.();
      await loop;
      return { rounds: state.rounds, skipped: state.skipped, ms: state.ms };
    },
  };
}

/** One round of the continuous invariants over the seed as it is now. */
export async function checkRound(ctx: ContinuousContext): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const p of ctx.signatureProblems.slice()) out.push({ invariant: SIGNATURE, message: p });
  const deliveries = ctx.deliveries.slice();
  await ctx.db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const snap: InvariantContext = { db: trx, chains: ctx.chains, deliveries, events: [], redis: ctx.redis };
      out.push(...(await noTransferCreditedTwice(snap)));
      out.push(
        ...(await outboundMovedMoneyAtMostOnce(snap, { scanHotWallets: false })).filter(
          (v) => v.invariant === OUTBOUND_ONCE && AT_MOST_ONCE.test(v.message),
        ),
      );
      out.push(...(await oneBodyPerEvent(trx, deliveries)));
    });
  return out;
}

/** Every event id the receiver got names an outbox event, with one body, equal to its frozen delivery body. */
async function oneBodyPerEvent(db: Db, deliveries: ReceivedDelivery[]): Promise<Violation[]> {
  const out: Violation[] = [];
  if (deliveries.length === 0) return out;
  const bodies = new Map<string, Set<string>>();
  for (const d of deliveries) bodies.set(d.eventId, (bodies.get(d.eventId) ?? new Set()).add(d.body));
  const rows = await db
    .selectFrom('outbox_events as e')
    .leftJoin('webhook_deliveries as d', 'd.event_id', 'e.id')
    .select(['e.id', 'e.type', 'd.body'])
    .where('e.id', 'in', [...bodies.keys()])
    .execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  for (const [id, got] of bodies) {
    const e = byId.get(id);
    if (!e) {
      out.push({ invariant: WEBHOOKS, subject: id, message: `the receiver got event ${id}, which is not in the outbox` });
      continue;
    }
    if (got.size > 1)
      out.push({
        invariant: WEBHOOKS,
        subject: id,
        message: `event ${id} (${e.type}) reached the receiver with ${got.size} different bodies`,
      });
    if (e.body !== null && !got.has(e.body))
      out.push({
        invariant: WEBHOOKS,
        subject: id,
        message: `event ${id} (${e.type}) reached the receiver with a body other than its frozen webhook_deliveries.body`,
      });
  }
  return out;
}
