import type { Invariant, Violation } from '../contract.js';
import { deliveredEvents } from './delivered.js';
import { blockTimes, confirmedHeight, transfers } from './evm-chain.js';

export const CANCELED_SESSIONS = 'canceled-session-money-unmatched';

// Money sent to a canceled session (decisions.md: "A transfer to an expired or canceled session's address is kept as
// an unmatched deposit, listed for the operator, and can be refunded"): every confirmed transfer of a configured token
// to a canceled session's deposit address, in a block timestamped after the cancel, is recorded as a confirmed deposit
// of that session with disposition `unmatched` (never credited, never lost); the session's `payment.cancelled` reached
// the receiver with a 2xx and no `payment.completed` was ever sent for it. EVM networks.
export const canceledSessionMoneyUnmatched: Invariant = async (ctx) => {
  const out: Violation[] = [];
  const v = (subject: string, message: string) => out.push({ invariant: CANCELED_SESSIONS, subject, message });
  const sessions = await ctx.db
    .selectFrom('payment_sessions')
    .select(['id', 'network', 'deposit_address', 'canceled_at'])
    .where('status', '=', 'canceled')
    .execute();
  if (sessions.length === 0) return out;
  const delivered = await deliveredEvents(ctx);
  for (const s of sessions) {
    if (!delivered.acked('payment.cancelled', s.id))
      v(s.id, `canceled session ${s.id}: payment.cancelled never reached the receiver with a 2xx`);
    if (delivered.sent('payment.completed', s.id)) v(s.id, `canceled session ${s.id}: the receiver got payment.completed for it`);
  }
  const deposits = await ctx.db
    .selectFrom('deposits')
    .select(['tx_hash', 'log_index', 'session_id', 'status', 'disposition', 'unmatched_reason'])
    .where(
      'session_id',
      'in',
      sessions.map((s) => s.id),
    )
    .execute();
  const byTransfer = new Map(deposits.map((d) => [`${d.tx_hash.toLowerCase()}:${d.log_index}`, d]));
  for (const chain of ctx.chains.evm) {
    const mine = sessions.filter((s) => s.network === chain.network && s.deposit_address && s.canceled_at);
    if (mine.length === 0) continue;
    const height = await confirmedHeight(chain);
    const time = blockTimes(chain);
    const all = await transfers(chain, { to: mine.map((s) => s.deposit_address!.toLowerCase()), toBlock: height });
    for (const s of mine) {
      for (const t of all) {
        if (t.to !== s.deposit_address!.toLowerCase() || t.value === 0n) continue;
        if ((await time(t.blockNumber)) <= s.canceled_at!.getTime()) continue;
        const d = byTransfer.get(`${t.txHash}:${t.logIndex}`);
        const what = `${t.value} ${t.token} to canceled session ${s.id} in ${t.txHash} (${chain.network})`;
        if (!d) v(s.id, `${what} is not recorded as a deposit`);
        else if (d.status !== 'confirmed' || d.disposition !== 'unmatched')
          v(s.id, `${what} is recorded as ${d.status}/${d.disposition ?? 'none'}, not a confirmed unmatched deposit`);
      }
    }
  }
  return out;
};
