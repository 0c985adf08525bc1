import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

// What a live view of one session shows, as text: its status and amount received, and each deposit's state and
// block. Two reads with the same text saw no change (deposits seen or confirmed make no outbox event).
export async function sessionFingerprints(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const sessions = await db.selectFrom('payment_sessions').select(['id', 'status', 'received_base']).where('id', 'in', ids).execute();
  for (const s of sessions) out.set(s.id, `${s.status}/${s.received_base}`);
  const deposits = await db
    .selectFrom('deposits')
    .select(['session_id', 'id', 'status', 'block_number'])
    .where('session_id', 'in', ids)
    .orderBy('id')
    .execute();
  for (const d of deposits) {
    if (d.session_id === null) continue;
    out.set(d.session_id, `${out.get(d.session_id) ?? ''}|${d.id}:${d.status}:${d.block_number}`);
  }
  return out;
}

/** The merchant a session belongs to, whatever its mode; undefined when there is no such session. */
export async function sessionMerchant(db: Kysely<Database>, id: string): Promise<string | undefined> {
  const r = await db.selectFrom('payment_sessions').select('merchant_id').where('id', '=', id).executeTakeFirst();
  return r?.merchant_id;
}
