import { sql, type RawBuilder } from 'kysely';

// Whether a deposit address still holds money the ledger has not settled (issue 16 item 4: late payments stay watched
// as long as their address holds an unswept balance, not only for the retention window). Per token: the final
// deposits to the address exceed what completed refunds paid back against them (refunds of its session, and of its
// unmatched deposits) plus what sweeps moved off the address (`sweep_sources` swept). Refunds are paid from the hot
// wallet, so an address is "settled" once its credited balance is refunded or swept: an address emptied by a sweep
// stops being watched once its retention window has passed. Look-alike tokens (`unsupported_token`) hold nothing the
// ledger settles (never refunded nor swept by the gateway): they keep no address watched.

/**
 * SQL condition, true when the deposit address row aliased `da` (columns network, mode, address, session_id) holds an
 * unsettled balance. Served by deposits_confirmed_to_idx and refunds_deposit_idx / refunds_session_idx: the refunds
 * are two disjoint sums, the session's own (no deposit named) and those naming one of the address's deposits (only a
 * confirmed deposit can be refunded by id), each an index probe. As one OR the planner read all of `refunds` per
 * address: quadratic in the data (the scale benchmark, docs/performance.md "Scale"; db-query-plans.test.ts).
 */
export function holdsUnsettledBalance(alias = 'da'): RawBuilder<boolean> {
  const da = sql.ref(alias);
  return sql<boolean>`exists (
    select 1 from deposits d
    where d.network = ${da}.network and d.mode = ${da}.mode and d.to_address = ${da}.address and d.status = 'confirmed'
      and d.unmatched_reason is distinct from 'unsupported_token'
    group by d.token
    having sum(d.amount_base) > coalesce((
      select sum(coalesce(r.delivered_base, r.amount_base)) from refunds r
      where r.status = 'completed' and r.token = d.token and r.network = ${da}.network and r.mode = ${da}.mode
        and r.deposit_id is null and r.session_id = ${da}.session_id), 0)
      + coalesce((
      select sum(coalesce(r.delivered_base, r.amount_base)) from deposits d2 join refunds r on r.deposit_id = d2.id
      where d2.network = ${da}.network and d2.mode = ${da}.mode and d2.to_address = ${da}.address and d2.status = 'confirmed'
        and r.status = 'completed' and r.token = d.token), 0)
      + coalesce((
      select sum(s.swept_base) from sweep_sources s
      where s.state = 'swept' and s.token = d.token and s.network = ${da}.network and s.mode = ${da}.mode
        and s.address = ${da}.address), 0))`;
}
