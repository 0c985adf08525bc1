import { randomBytes } from 'node:crypto';
import type { Db } from '../../src/db/database.js';
import type { NetworkId } from '../../chains/vocabulary.js';

/**
 * Makes an open session paid as the watcher's ledger would (a confirmed, credited deposit and a settlement), for
 * API-level refund tests that need no chain. Amounts in token base units (6 decimals unless told).
 */
export async function markSessionPaid(
  db: Db,
  sessionId: string,
  o: { token?: 'USDT' | 'USDC'; receivedBase: bigint; from?: string; network?: NetworkId; paidAt?: Date },
): Promise<void> {
  const token = o.token ?? 'USDT';
  const network = o.network ?? 'ethereum';
  const depositId = `dep_${randomBytes(8).toString('hex')}`;
  const s = await db.selectFrom('payment_sessions').selectAll().where('id', '=', sessionId).executeTakeFirstOrThrow();
  const paidAt = o.paidAt ?? new Date();
  await db.transaction().execute(async (trx) => {
    const chain = trx;
    await chain
      .insertInto('deposits')
      .values({
        id: depositId,
        network,
        mode: s.mode,
        tx_hash: `0x${randomBytes(32).toString('hex')}`,
        log_index: 0,
        block_number: 1n,
        block_hash: `0x${randomBytes(32).toString('hex')}`,
        block_time: paidAt,
        token,
        token_contract: `0x${'ab'.repeat(20)}`,
        from_address: o.from ?? `0x${'11'.repeat(20)}`,
        to_address: `0x${randomBytes(20).toString('hex')}`,
        amount_base: o.receivedBase,
        session_id: sessionId,
        status: 'confirmed',
        disposition: 'credited',
        confirmed_at: paidAt,
      })
      .execute();
    await trx
      .updateTable('payment_sessions')
      .set({ status: 'paid', paid_at: paidAt, network, token, received_base: o.receivedBase })
      .where('id', '=', sessionId)
      .execute();
    await chain
      .insertInto('session_settlements')
      .values({
        session_id: sessionId,
        network,
        token,
        due_base: o.receivedBase,
        received_base: o.receivedBase,
        overpaid_base: 0n,
        paying_deposit_id: depositId,
        paid_at: paidAt,
      })
      .execute();
  });
}
