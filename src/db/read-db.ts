import { sql } from 'kysely';
import { replicaUnavailable } from '../domain/errors.js';
import { createDb, type Db } from './database.js';

// Reporting reads (docs/deploy.md "Read replica"): exports and the console's lists may read a streaming replica
// (READ_DATABASE_URL) where a second of lag is acceptable. Money decisions and every write use the primary (`Db`); only
// code handed a `ReadDb` can reach the replica, and test/unit/read-db-usage.test.ts keeps it out of the folders that
// decide money. Routing, per read:
// - no replica configured: the primary;
// - replica lagging more than `maxLagMs` (measured every `lagCheckMs` against the primary's WAL position): the primary;
// - replica down (a connection could not be opened, or the last probe failed): the caller's policy decides: `fallback`
//   reads the primary, `fail` throws `replica_unavailable` (503). While down, the replica is not tried again until a
//   probe (every `retryMs`) reaches it: the circuit that keeps a dead replica from being hammered.

declare const reportingBrand: unique symbol;
/** The connection a reporting read runs on: the replica's, or the primary's when the replica cannot serve it. */
export type ReportingDb = Db & { readonly [reportingBrand]: true };

/** What a reporting read does when the replica is down: read the primary, or fail with `replica_unavailable`. */
export type ReplicaPolicy = 'fallback' | 'fail';
export type ReadTarget = 'replica' | 'primary';
/** Why a read went where it went. */
export type RouteReason = 'no_replica' | 'replica' | 'lagging' | 'down';

export type ReadDbEvent =
  /** A probe measured the replica's lag behind the primary (0 when it has replayed everything the primary wrote). */
  | { kind: 'lag'; ms: number }
  /** The replica could not be reached: reads stop trying it until a probe succeeds. */
  | { kind: 'down'; error: string }
  | { kind: 'up' }
  /** A reporting read was routed (`refused`: the replica was down and the policy was `fail`). */
  | { kind: 'routed'; target: ReadTarget | 'refused'; reason: RouteReason };

export interface ReadDbOptions {
  /** Beyond this lag, reads go to the primary (READ_REPLICA_MAX_LAG_MS). */
  maxLagMs: number;
  /** Replica pool size (READ_DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** How often the lag is measured while the replica is up (default 1000 ms). */
  lagCheckMs?: number;
  /** How often a down replica is probed (default 5000 ms). */
  retryMs?: number;
  /** Connection timeout to the replica (default 2000 ms): an unreachable host counts as down after this. */
  connectTimeoutMs?: number;
  onEvent?: (e: ReadDbEvent) => void;
}

export interface ReadDb {
  readonly kind: 'read-db';
  /** Whether a replica is configured (false: every read is on the primary). */
  readonly hasReplica: boolean;
  /** Runs `fn` on the replica, or on the primary as the routing above says. */
  read<T>(fn: (db: ReportingDb) => Promise<T>, policy?: ReplicaPolicy): Promise<T>;
  /** The last measured lag in ms (null: no replica, not measured yet, or down). */
  lagMs(): number | null;
  /** Measures the lag now (and probes a down replica); answers the state it found. */
  check(): Promise<'up' | 'down' | 'none'>;
  /** Closes the replica's pool (never the primary, which its owner closes). */
  destroy(): Promise<void>;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The reporting-read handle; `url` undefined: the primary serves every read. */
export function createReadDb(url: string | undefined, primary: Db, opts: ReadDbOptions = { maxLagMs: 5000 }): ReadDb {
  const emit = opts.onEvent ?? (() => {});
  if (url === undefined) {
    return {
      kind: 'read-db',
      hasReplica: false,
      read: (fn) => {
        emit({ kind: 'routed', target: 'primary', reason: 'no_replica' });
        return fn(primary as ReportingDb);
      },
      lagMs: () => null,
      check: async () => 'none',
      destroy: async () => {},
    };
  }
  const replica = createDb(url, opts.poolSize ?? 5, { connectTimeoutMs: opts.connectTimeoutMs ?? 2000 });
  const lagCheckMs = opts.lagCheckMs ?? 1000;
  const retryMs = opts.retryMs ?? 5000;
  const probeTimeoutMs = (opts.connectTimeoutMs ?? 2000) * 2;
  let status: 'unknown' | 'up' | 'down' = 'unknown';
  let lag: number | null = null;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const markDown = (err: unknown) => {
    lag = null;
    if (status !== 'down') emit({ kind: 'down', error: errorText(err) });
    status = 'down';
  };
  const markUp = (ms: number) => {
    lag = ms;
    if (status === 'down') emit({ kind: 'up' });
    status = 'up';
    emit({ kind: 'lag', ms });
  };

  const check = async (): Promise<'up' | 'down'> => {
    // The primary's WAL position first: a replica that has replayed up to it is not behind, however old its last
    // replayed commit (an idle primary writes nothing to replay).
    let primaryLsn: string | null = null;
    try {
      const p = await sql<{ lsn: string }>`select pg_current_wal_lsn()::text as lsn`.execute(primary);
      primaryLsn = p.rows[0]?.lsn ?? null;
    } catch {
      // The primary's own trouble is not the replica's: measure against nothing (the replay timestamp decides).
    }
    try {
      const probe = sql<{ recovery: boolean; caught_up: boolean | null; behind_ms: bigint | null }>`
        select pg_is_in_recovery() as recovery,
               case when ${primaryLsn}::text is null then null
                    else pg_last_wal_replay_lsn() >= ${primaryLsn}::pg_lsn end as caught_up,
               floor(extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::int8 as behind_ms`.execute(replica);
      // A replica that accepts the connection but never answers (a hung host) is down too, or probing would stop here.
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the replica did not answer its probe within ${probeTimeoutMs} ms`)), probeTimeoutMs);
      });
      const r = await Promise.race([probe, timeout]).finally(() => clearTimeout(timer));
      const row = r.rows[0]!;
      // Not in recovery: READ_DATABASE_URL names a primary (a test, or a misconfiguration that costs nothing).
      const ms =
        !row.recovery || row.caught_up ? 0 : row.behind_ms === null ? Number.POSITIVE_INFINITY : Math.max(0, Number(row.behind_ms));
      markUp(ms);
      return 'up';
    } catch (err) {
      markDown(err);
      return 'down';
    }
  };

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(
      () => {
        void check().finally(schedule);
      },
      status === 'down' ? retryMs : lagCheckMs,
    );
    timer.unref();
  };
  const first = check().finally(schedule);

  const onPrimary = <T>(reason: RouteReason, policy: ReplicaPolicy, fn: (db: ReportingDb) => Promise<T>): Promise<T> => {
    if (reason === 'down' && policy === 'fail') {
      emit({ kind: 'routed', target: 'refused', reason });
      throw replicaUnavailable();
    }
    emit({ kind: 'routed', target: 'primary', reason });
    return fn(primary as ReportingDb);
  };

  return {
    kind: 'read-db',
    hasReplica: true,
    async read(fn, policy = 'fallback') {
      if (status === 'unknown') await first;
      if (status === 'down') return onPrimary('down', policy, fn);
      if (lag === null || lag > opts.maxLagMs) return onPrimary('lagging', policy, fn);
      let acquired = false;
      try {
        return await replica.connection().execute(async (conn) => {
          acquired = true;
          emit({ kind: 'routed', target: 'replica', reason: 'replica' });
          return fn(conn as ReportingDb);
        });
      } catch (err) {
        // Failing once the read has started is the read's own failure (a stream may have sent rows): never retried.
        if (acquired) throw err;
        markDown(err);
        return onPrimary('down', policy, fn);
      }
    },
    lagMs: () => lag,
    check: () => check(),
    async destroy() {
      closed = true;
      clearTimeout(timer);
      await first.catch(() => {});
      await replica.destroy();
    },
  };
}
