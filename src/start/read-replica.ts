import type { Config } from '../config.js';
import type { Db } from '../db/database.js';
import { createReadDb, type ReadDb, type ReadDbEvent } from '../db/read-db.js';
import type { Logger } from '../logger.js';
import { readReplicaLag, readReplicaUp, reportingReads } from '../metrics/read-replica.js';

// The reporting reads' handle of a process (docs/deploy.md "Read replica"): READ_DATABASE_URL for the roles that serve
// reports (api: merchant exports; console: lists, search, exports); every other role reads the primary only.

export function reportingReadsFor(config: Config, primary: Db, log: Logger): ReadDb {
  const serves = config.ROLES.includes('api') || config.ROLES.includes('console');
  const url = serves ? config.READ_DATABASE_URL : undefined;
  let lagging = false;
  const onEvent = (e: ReadDbEvent): void => {
    switch (e.kind) {
      case 'lag': {
        readReplicaUp.set({}, 1);
        readReplicaLag.set({}, e.ms / 1000); // +Inf: nothing replayed yet
        const now = e.ms > config.READ_REPLICA_MAX_LAG_MS;
        if (now !== lagging) {
          lagging = now;
          if (now)
            log.warn({ lagMs: e.ms, maxLagMs: config.READ_REPLICA_MAX_LAG_MS }, 'read replica lags: reporting reads go to the primary');
          else log.info({ lagMs: e.ms }, 'read replica caught up: reporting reads go to it again');
        }
        return;
      }
      case 'down':
        readReplicaUp.set({}, 0);
        log.warn({ err: e.error }, 'read replica unreachable: reporting reads fall back to the primary or are refused until it answers');
        return;
      case 'up':
        log.info({}, 'read replica reachable again');
        return;
      case 'routed':
        reportingReads.inc({ target: e.target, reason: e.reason });
        return;
    }
  };
  return createReadDb(url, primary, {
    maxLagMs: config.READ_REPLICA_MAX_LAG_MS,
    poolSize: config.READ_DATABASE_POOL_SIZE,
    onEvent,
  });
}
