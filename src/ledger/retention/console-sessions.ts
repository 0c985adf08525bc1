import { sql } from 'kysely';
import { asCount, type PruneClass } from './prune-class.js';

// Console sign-in sessions past their absolute expiry (docs/console.md, docs/retention.md): such a session can never be
// used again (console/auth/sessions.ts refuses it); it is kept for the retention period for its IP and user agent,
// then deleted. A session before its absolute expiry is never picked, whatever its idle time. The audit log
// (console_audit) keeps what each person did, with the IP, and is never pruned. Index: console_sessions (expires_at).

const picked = (cutoff: Date, limit: number | null) => sql`
  select s.id_hash from console_sessions s
  where s.expires_at < ${cutoff}
  order by s.expires_at
  ${limit === null ? sql`` : sql`limit ${limit} for update of s skip locked`}`;

export const consoleSessions: PruneClass = {
  name: 'console_sessions',
  tables: ['console_sessions'],
  async count(db, cutoff) {
    const { rows } = await sql<{ n: string }>`select count(*) as n from (${picked(cutoff, null)}) p`.execute(db);
    return { console_sessions: asCount(rows[0]?.n) };
  },
  async pruneBatch(db, cutoff, limit) {
    const { rows } = await sql<{ n: number }>`
      with picked as (${picked(cutoff, limit)}),
      s as (delete from console_sessions x using picked p where x.id_hash = p.id_hash returning 1)
      select count(*)::int as n from s`.execute(db);
    return { console_sessions: asCount(rows[0]?.n) };
  },
};
