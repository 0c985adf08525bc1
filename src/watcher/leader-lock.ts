import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { sleep } from './backoff.js';

/**
 * Runs `lead` while holding the session-level advisory lock `name` on a dedicated connection; other processes wait
 * as standbys, retrying every `retryMs`. When the leader's process dies its connection closes and Postgres releases
 * the lock, so a standby takes over within about `retryMs`. The leader checks its connection every `healthMs` and
 * aborts `lead` (through the signal it receives) if the connection is gone. Cursor writes are also fenced by
 * version, so even an overlap cannot double-apply.
 */
export async function runAsLeader(
  db: Kysely<Database>,
  name: string,
  signal: AbortSignal,
  lead: (lost: AbortSignal) => Promise<void>,
  opts: { retryMs?: number; healthMs?: number; onWaiting?: () => void; onAcquired?: () => void } = {},
): Promise<void> {
  await db.connection().execute(async (conn) => {
    let announced = false;
    for (;;) {
      if (signal.aborted) return;
      const r = await sql<{ ok: boolean }>`select pg_try_advisory_lock(hashtextextended(${`watcher:${name}`}, 0)) as ok`.execute(conn);
      if (r.rows[0]?.ok) break;
      if (!announced) opts.onWaiting?.();
      announced = true;
      await sleep(opts.retryMs ?? 1000, signal);
    }
    opts.onAcquired?.();
    const lost = new AbortController();
    const onStop = () => lost.abort();
    signal.addEventListener('abort', onStop, { once: true });
    const health = setInterval(() => {
      sql`select 1`.execute(conn).catch(() => lost.abort());
    }, opts.healthMs ?? 2000);
    try {
      await lead(lost.signal);
    } finally {
      clearInterval(health);
      signal.removeEventListener('abort', onStop);
      await sql`select pg_advisory_unlock(hashtextextended(${`watcher:${name}`}, 0))`.execute(conn).catch(() => {});
    }
  });
}
