import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Mode, NetworkId, TokenSymbol } from '../../../chains/vocabulary.js';
import type { SessionRow } from './session-row.js';
import { lockedQuote } from './locked-quotes.js';

// The payer's (or merchant's) choice of network and token for a session, and the deposit address it binds.
// Rules: only while the session is open; once any deposit (even provisional) exists for the session the choice is
// locked (base units of different tokens never mix in received_base); the address row is unique per chain, so one
// address can never belong to two sessions. The chosen coin's quote locked at creation becomes the session's target
// (amount and rate; rate_locked_at unchanged); a coin without a locked quote cannot be chosen.

export type SelectionResult =
  | { kind: 'selected'; session: SessionRow }
  | { kind: 'not_found' }
  | { kind: 'not_open'; session: SessionRow }
  | { kind: 'not_offered'; session: SessionRow }
  | { kind: 'locked'; session: SessionRow };

/** Advisory lock key serialising deposit-address inserts (shared, here) against the watch set's reads (exclusive). */
export const depositAddressLockKey = (chain: { network: string; mode: Mode }): string => `deposit_addresses:${chain.network}:${chain.mode}`;

export async function selectSessionNetwork(
  db: Kysely<Database>,
  sessionId: string,
  choice: { network: NetworkId; token: TokenSymbol; address: string },
): Promise<SelectionResult> {
  return db.transaction().execute(async (trx) => {
    const t = trx;
    const session = await trx.selectFrom('payment_sessions').selectAll().where('id', '=', sessionId).forUpdate().executeTakeFirst();
    if (!session) return { kind: 'not_found' };
    if (session.status !== 'open' || session.expires_at.getTime() <= Date.now()) return { kind: 'not_open', session };
    const quote = lockedQuote(session, choice.token);
    if (!quote) return { kind: 'not_offered', session };
    if (session.network === choice.network && session.token === choice.token && session.deposit_address === choice.address) {
      return { kind: 'selected', session };
    }
    const anyDeposit = await t.selectFrom('deposits').select('id').where('session_id', '=', sessionId).limit(1).executeTakeFirst();
    if (anyDeposit || session.received_base > 0n) return { kind: 'locked', session };
    // Shared lock until commit: the watch set's exclusive read cannot pass this row's id while it is uncommitted.
    await sql`select pg_advisory_xact_lock_shared(hashtextextended(${depositAddressLockKey({ network: choice.network, mode: session.mode })}, 0))`.execute(
      trx,
    );
    await t
      .insertInto('deposit_addresses')
      .values({ network: choice.network, mode: session.mode, address: choice.address, session_id: sessionId })
      .onConflict((oc) => oc.columns(['network', 'mode', 'address']).doNothing())
      .execute();
    const owner = await t
      .selectFrom('deposit_addresses')
      .select('session_id')
      .where('network', '=', choice.network)
      .where('mode', '=', session.mode)
      .where('address', '=', choice.address)
      .executeTakeFirstOrThrow();
    if (owner.session_id !== sessionId) throw new Error('deposit address already belongs to another session');
    const updated = await trx
      .updateTable('payment_sessions')
      .set({
        network: choice.network,
        token: choice.token,
        target_currency: choice.token,
        target_amount_minor: quote.amountMinor,
        exchange_rate: quote.exchangeRate,
        deposit_address: choice.address,
      })
      .where('id', '=', sessionId)
      .where('status', '=', 'open')
      .returningAll()
      .executeTakeFirst();
    if (!updated) throw new Error('session changed during network selection (conflict)');
    return { kind: 'selected', session: updated };
  });
}
