import type { Mode, NetworkId, TokenSymbol } from '../../chains/vocabulary.js';
import { NETWORK_IDS, TOKEN_SYMBOLS } from '../../chains/vocabulary.js';
import { metrics } from './registry.js';

// Sweeps (docs/treasury.md): how they end, what they moved and what they cost. Labels are closed vocabularies
// (network, mode, token, status); never a merchant or an address. Base units are counted as floats (Prometheus
// counters are doubles): exact amounts are in the ledger (`sweep costs`), these are for rates and alerts.

export const SWEEP_STATUSES = ['completed', 'partial', 'failed'] as const;
const MODES = ['test', 'live'] as const;

const finished = metrics.counter<'network' | 'mode' | 'token' | 'status'>({
  name: 'stablepay_sweeps_total',
  help: 'Sweeps finished, by network, mode, token and status (completed, partial, failed).',
  labels: ['network', 'mode', 'token', 'status'],
  values: { network: NETWORK_IDS, mode: MODES, token: TOKEN_SYMBOLS, status: SWEEP_STATUSES },
});

const swept = metrics.counter<'network' | 'mode' | 'token'>({
  name: 'stablepay_swept_base_units_total',
  help: 'Token base units swept out of deposit addresses (read from landed, final steps).',
  labels: ['network', 'mode', 'token'],
  values: { network: NETWORK_IDS, mode: MODES, token: TOKEN_SYMBOLS },
});

const fees = metrics.counter<'network' | 'mode'>({
  name: 'stablepay_sweep_fees_native_base_units_total',
  help: 'Native base units (wei, sun, lamports) sweep steps spent on fees.',
  labels: ['network', 'mode'],
  values: { network: NETWORK_IDS, mode: MODES },
});

export function recordSweepStepSettled(
  s: { network: NetworkId; mode: Mode; token: TokenSymbol },
  feeBase: bigint,
  sweptBase: bigint,
): void {
  if (feeBase > 0n) fees.inc({ network: s.network, mode: s.mode }, Number(feeBase));
  if (sweptBase > 0n) swept.inc({ network: s.network, mode: s.mode, token: s.token }, Number(sweptBase));
}

export function recordSweepFinished(s: { network: NetworkId; mode: Mode; token: TokenSymbol }, status: string): void {
  finished.inc({ network: s.network, mode: s.mode, token: s.token, status });
}
