import { metrics } from './registry.js';

// The read replica of the reporting reads (src/db/read-db.ts, docs/deploy.md "Read replica"): its measured lag, whether
// it is reachable, and where each reporting read went (replica, primary, or refused while the replica was down).
export const readReplicaLag = metrics.gauge<never>({
  name: 'stablepay_read_replica_lag_seconds',
  help: 'How far the read replica is behind the primary, as measured by the last probe (0: everything replayed).',
  labels: [],
});

export const readReplicaUp = metrics.gauge<never>({
  name: 'stablepay_read_replica_up',
  help: 'Whether the last probe reached the read replica (1) or not (0).',
  labels: [],
});

export const reportingReads = metrics.counter<'target' | 'reason'>({
  name: 'stablepay_reporting_reads_total',
  help: 'Reporting reads (exports, console lists and search) by where they went and why.',
  labels: ['target', 'reason'],
  values: { target: ['replica', 'primary', 'refused'], reason: ['no_replica', 'replica', 'lagging', 'down'] },
});
