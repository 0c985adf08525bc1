import { metrics } from './registry.js';

// Set by each reconciliation run (src/reconcile/): the books minus the chain per network, mode and token, summed over
// every address reconciled, in whole tokens; ReconciliationDrift (deploy/prometheus/alerts.yml) watches it.
export const reconciliationDifference = metrics.gauge<'network' | 'mode' | 'token'>({
  name: 'stablepay_reconciliation_difference',
  help: 'Ledger balance minus on-chain balance per network, mode and token, in whole tokens (set by reconciliation).',
  labels: ['network', 'mode', 'token'],
  values: { mode: ['test', 'live'] },
});

export const reconciliationLastRun = metrics.gauge<'network' | 'mode'>({
  name: 'stablepay_reconciliation_last_run_timestamp_seconds',
  help: 'Unix time of the last finished reconciliation run of a chain.',
  labels: ['network', 'mode'],
  values: { mode: ['test', 'live'] },
});
