import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { sendNamedStatements } from './named-statements.js';

// int8 (20) and numeric (1700) come back as bigint: money never passes through a JS number.
// Only integer-valued numeric columns exist in the schema (numeric(78,0)); rates are stored as text.
pg.types.setTypeParser(20, (v) => BigInt(v));
pg.types.setTypeParser(1700, (v) => BigInt(v));

export type Db = Kysely<Database>;

export interface PoolOptions {
  /** How long a new connection may take before the pool gives up (pg's connectionTimeoutMillis); default: no limit. */
  connectTimeoutMs?: number;
  /** Send the statements the ledger named (src/db/named-statements.ts) as named prepared statements; default off.
   *  Only for a direct connection to PostgreSQL, never PgBouncer in transaction pooling. */
  namedStatements?: boolean;
}

export function createDb(connectionString: string, max = 10, opts: PoolOptions = {}): Db {
  const pool = new pg.Pool({
    connectionString,
    max,
    ...(opts.connectTimeoutMs !== undefined ? { connectionTimeoutMillis: opts.connectTimeoutMs } : {}),
  });
  // A dropped connection must not crash the process; the pool replaces it and the next query reports the error.
  pool.on('error', () => {});
  // The same for a connection that is checked out but idle between queries (a transaction waiting on an RPC call, the
  // watcher's leader-lock connection): pg emits the loss on the client itself, which crashes the process when nobody
  // listens (found by the simulator, docs/simulation.md). The next query on that client rejects instead.
  pool.on('connect', (client) => {
    client.on('error', () => {});
    if (opts.namedStatements) sendNamedStatements(client);
  });
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
}
