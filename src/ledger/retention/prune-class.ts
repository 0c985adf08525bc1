import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

// One class of data that grows without bound and may be pruned (docs/retention.md): which tables it deletes from,
// how many rows would go (a dry run), and one bounded batch of deletes. Each batch is one statement, so one short
// transaction: it picks at most `limit` rows in time order through an index, locks them with SKIP LOCKED (a second
// process pruning at the same time takes other rows, never waits for these, never counts them twice) and deletes them
// with everything that hangs off them. Row counts are plain numbers: counts of rows, never amounts.

/** Rows deleted (or, in a dry run, that would be) per table. */
export type TableCounts = Record<string, number>;

export interface PruneClass {
  /** The retention class (docs/retention.md), also the log field. */
  name: string;
  /** The tables it deletes from, the batch's driving table first. */
  tables: readonly string[];
  /** What would go with this cutoff, per table (reads only). */
  count(db: Kysely<Database>, cutoff: Date): Promise<TableCounts>;
  /** Deletes one batch of at most `limit` driving rows older than the cutoff; answers the rows deleted per table. */
  pruneBatch(db: Kysely<Database>, cutoff: Date, limit: number): Promise<TableCounts>;
}

export const asCount = (v: unknown): number => Number(v ?? 0);
