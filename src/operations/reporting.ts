import type { Db } from '../db/database.js';
import type { ReadDb, ReplicaPolicy, ReportingDb } from '../db/read-db.js';

// Reporting reads of the application layer (docs/deploy.md "Read replica"): the console's lists, its search and the
// exports read through the context's ReadDb (the replica when READ_DATABASE_URL is set and fresh enough); without one,
// the primary. Details, actions and anything that decides money keep `db` (the primary).

export interface ReportingSource {
  db: Db;
  /** Absent: the primary serves the reporting reads too. */
  reads?: ReadDb | undefined;
}

export function reportingRead<T>(
  src: ReportingSource,
  fn: (db: ReportingDb) => Promise<T>,
  policy: ReplicaPolicy = 'fallback',
): Promise<T> {
  return src.reads ? src.reads.read(fn, policy) : fn(src.db as ReportingDb);
}
