import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { metrics } from '../metrics/registry.js';

// Scrape-time gauges read from the ledger. Each query walks a partial index of in-flight rows only (the outbox's
// unrelayed rows, pending deliveries, open refunds and charges, provisional deposits), so its cost follows the
// backlog, never the size of the history. Terminal states are counted by their events, not here.

const outboxBacklog = metrics.gauge<never>({
  name: 'stablepay_outbox_backlog',
  help: 'Outbox events not yet relayed to the delivery queue.',
  labels: [],
});
const outboxOldest = metrics.gauge<never>({
  name: 'stablepay_outbox_oldest_age_seconds',
  help: 'Age of the oldest outbox event not yet relayed (0 when none).',
  labels: [],
});
const pendingDeliveries = metrics.gauge<never>({
  name: 'stablepay_webhook_pending_deliveries',
  help: 'Webhook deliveries not yet delivered nor given up (first attempt or retrying).',
  labels: [],
});
const oldestUndelivered = metrics.gauge<never>({
  name: 'stablepay_webhook_oldest_undelivered_age_seconds',
  help: 'Age of the oldest event whose delivery is still pending (0 when none).',
  labels: [],
});
const REFUND_OPEN = ['pending', 'processing'] as const;
const refunds = metrics.gauge<'state'>({
  name: 'stablepay_refunds_in_flight',
  help: 'Refunds not yet completed, failed or canceled, by state.',
  labels: ['state'],
  values: { state: REFUND_OPEN },
});
const refundOldest = metrics.gauge<'state'>({
  name: 'stablepay_refunds_oldest_in_flight_age_seconds',
  help: 'Age of the oldest refund in each in-flight state (0 when none).',
  labels: ['state'],
  values: { state: REFUND_OPEN },
});
const CHARGE_OPEN = ['pending', 'signed', 'broadcast'] as const;
const charges = metrics.gauge<'state'>({
  name: 'stablepay_charges_in_flight',
  help: 'Subscription charges not yet succeeded or failed, by state.',
  labels: ['state'],
  values: { state: CHARGE_OPEN },
});
const chargeOldest = metrics.gauge<'state'>({
  name: 'stablepay_charges_oldest_in_flight_age_seconds',
  help: 'Age of the oldest subscription charge in each in-flight state (0 when none).',
  labels: ['state'],
  values: { state: CHARGE_OPEN },
});
const provisional = metrics.gauge<'network' | 'mode'>({
  name: 'stablepay_deposits_provisional',
  help: 'Deposits seen on chain and not yet final.',
  labels: ['network', 'mode'],
  values: { mode: ['test', 'live'] },
});
const unknownTransactions = metrics.gauge<'network' | 'mode'>({
  name: 'stablepay_outbound_wallet_unknown_transactions',
  help: 'Hot wallets that sent transactions the ledger does not know (EVM: chain nonce ahead; TRON, Solana: outgoing transactions matching no attempt): nothing is signed from them.',
  labels: ['network', 'mode'],
  values: { mode: ['test', 'live'] },
});
const subscriptionsOnHold = metrics.gauge<never>({
  name: 'stablepay_subscriptions_on_hold',
  help: 'Subscriptions held for an operator (e.g. a charge whose tokens went to a wrong recipient): nothing is charged until `subscriptions resolve`.',
  labels: [],
});
const age = (t: Date | string | null): number => (t ? Math.max(0, (Date.now() - new Date(t).getTime()) / 1000) : 0);

export function registerLedgerCollectors(db: Db): () => void {
  return metrics.onScrape('ledger', async () => {
    const [outbox, deliveries, refundRows, chargeRows, deposits, unknownWallets, heldWallets, held] = await Promise.all([
      sql<{ n: string; oldest: Date | null }>`
        select count(*)::text as n,
               (select created_at from outbox_events where relayed_at is null order by seq limit 1) as oldest
        from outbox_events where relayed_at is null`.execute(db),
      sql<{ n: string; oldest: Date | null }>`
        select count(*)::text as n, min(created_at) as oldest from webhook_deliveries where status = 'pending'`.execute(db),
      sql<{ state: string; n: string; oldest: Date }>`
        select status as state, count(*)::text as n, min(created_at) as oldest
        from refunds where status in ('pending', 'processing') group by status`.execute(db),
      sql<{ state: string; n: string; oldest: Date }>`
        select state, count(*)::text as n, min(created_at) as oldest
        from subscription_charges where state in ('pending', 'signed', 'broadcast') group by state`.execute(db),
      sql<{ network: string; mode: string; n: string }>`
        select network, mode, count(*)::text as n from deposits where status = 'provisional' group by network, mode`.execute(db),
      // A handful of rows (one per sending wallet); the guard's note is null on all of them but a refused wallet.
      sql<{ network: string; mode: string; n: string }>`
        select network, mode, count(*)::text as n from hot_wallet_nonces
        where unknown_chain_nonce is not null group by network, mode`.execute(db),
      // TRON and Solana (no nonces): wallets holding a noted transaction neither accepted nor recorded as an attempt
      // since (src/ledger/outbound/wallet-history.ts); the partial index holds the unaccepted rows only.
      sql<{ network: string; mode: string; n: string }>`
        select u.network, u.mode, count(distinct u.address)::text as n from hot_wallet_unknown_transactions u
        where u.accepted_at is null
          and not exists (select 1 from payout_attempts a where a.network = u.network and a.mode = u.mode and a.tx_hash = u.tx_hash)
          and not exists (select 1 from sweep_step_attempts a where a.network = u.network and a.mode = u.mode and a.tx_hash = u.tx_hash)
          and not exists (select 1 from deposit_setup_attempts a where a.network = u.network and a.mode = u.mode and a.tx_hash = u.tx_hash)
          and not exists (select 1 from gas_station_drain_attempts a where a.network = u.network and a.mode = u.mode and a.tx_hash = u.tx_hash)
          and not exists (select 1 from subscription_charge_attempts a where a.tx_hash = u.tx_hash)
          and not exists (select 1 from subscription_charges c where c.tx_hash = u.tx_hash)
        group by u.network, u.mode`.execute(db),
      // The partial index subscriptions_held holds the held rows only.
      sql<{ n: string }>`select count(*)::text as n from subscriptions where hold_reason is not null`.execute(db),
    ]);
    outboxBacklog.set({}, Number(outbox.rows[0]?.n ?? 0));
    outboxOldest.set({}, age(outbox.rows[0]?.oldest ?? null));
    pendingDeliveries.set({}, Number(deliveries.rows[0]?.n ?? 0));
    oldestUndelivered.set({}, age(deliveries.rows[0]?.oldest ?? null));
    for (const state of REFUND_OPEN) {
      const r = refundRows.rows.find((x) => x.state === state);
      refunds.set({ state }, Number(r?.n ?? 0));
      refundOldest.set({ state }, age(r?.oldest ?? null));
    }
    for (const state of CHARGE_OPEN) {
      const r = chargeRows.rows.find((x) => x.state === state);
      charges.set({ state }, Number(r?.n ?? 0));
      chargeOldest.set({ state }, age(r?.oldest ?? null));
    }
    provisional.reset();
    for (const d of deposits.rows) provisional.set({ network: d.network, mode: d.mode }, Number(d.n));
    subscriptionsOnHold.set({}, Number(held.rows[0]?.n ?? 0));
    unknownTransactions.reset();
    // EVM wallets noted by the nonce guard and TRON/Solana wallets held by the history guard: one gauge, one alert.
    const counts = new Map<string, { network: string; mode: string; n: number }>();
    for (const w of [...unknownWallets.rows, ...heldWallets.rows]) {
      const k = `${w.network}/${w.mode}`;
      const c = counts.get(k) ?? { network: w.network, mode: w.mode, n: 0 };
      c.n += Number(w.n);
      counts.set(k, c);
    }
    for (const c of counts.values()) unknownTransactions.set({ network: c.network, mode: c.mode }, c.n);
  });
}
