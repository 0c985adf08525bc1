import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { ChainAdapter, PollResult } from '../../chains/types.js';
import { metrics } from './registry.js';

// What each chain watcher knows, per network and mode: the block it processed, that block's timestamp, the final
// height, when it last committed a step, and the chain head (sampled on an interval, not on every step: one extra
// RPC call per chain per interval). Lag = head - processed height. A process that is standby for a chain exports
// nothing for it; alert rules take the max over processes.

type Chain = 'network' | 'mode';
const LABELS = ['network', 'mode'] as const;
const MODES = { mode: ['test', 'live'] } as const;

const lastCommit = metrics.gauge<Chain>({
  name: 'stablepay_watcher_last_commit_timestamp_seconds',
  help: 'Unix time of the last committed watcher step (it commits every poll, new blocks or not).',
  labels: LABELS,
  values: MODES,
});
const processed = metrics.gauge<Chain>({
  name: 'stablepay_watcher_processed_height',
  help: 'Highest block whose transfers the watcher has recorded.',
  labels: LABELS,
  values: MODES,
});
const lastBlockTime = metrics.gauge<Chain>({
  name: 'stablepay_watcher_last_block_timestamp_seconds',
  help: "Timestamp of the last processed block (the chain's clock).",
  labels: LABELS,
  values: MODES,
});
const blockAge = metrics.gauge<Chain>({
  name: 'stablepay_watcher_block_age_seconds',
  help: "Seconds since the last processed block's timestamp, at scrape time.",
  labels: LABELS,
  values: MODES,
});
const finalHeight = metrics.gauge<Chain>({
  name: 'stablepay_watcher_final_height',
  help: 'Height at or below which the watcher treats transfers as final.',
  labels: LABELS,
  values: MODES,
});
const head = metrics.gauge<Chain>({
  name: 'stablepay_chain_head_height',
  help: "The chain's latest height as its RPC reports it (sampled every METRICS_HEAD_INTERVAL_MS).",
  labels: LABELS,
  values: MODES,
});
const lag = metrics.gauge<Chain>({
  name: 'stablepay_watcher_lag_blocks',
  help: 'Blocks between the chain head and the last processed block.',
  labels: LABELS,
  values: MODES,
});
const stepErrors = metrics.counter<Chain>({
  name: 'stablepay_watcher_step_errors_total',
  help: 'Watcher steps that failed and were retried (RPC or database errors).',
  labels: LABELS,
  values: MODES,
});
const credited = metrics.counter<Chain>({
  name: 'stablepay_deposits_credited_total',
  help: 'Final deposits credited to a payment session.',
  labels: LABELS,
  values: MODES,
});
const unmatched = metrics.counter<Chain>({
  name: 'stablepay_deposits_unmatched_total',
  help: 'Final deposits that matched no payable session (late, to a paid session, unknown address, ...).',
  labels: LABELS,
  values: MODES,
});
const unsupportedToken = metrics.counter<Chain>({
  name: 'stablepay_deposits_unsupported_token_total',
  help: 'Final deposits of a look-alike token (USDbC, USDC.e, ...): recorded unmatched, never credited (also in unmatched_total).',
  labels: LABELS,
  values: MODES,
});

const unexplained = metrics.counter<Chain | 'direction'>({
  name: 'stablepay_journal_unexplained_total',
  help: 'Movements into or out of addresses we control that the service did not make (journaled as unexplained).',
  labels: [...LABELS, 'direction'],
  values: { ...MODES, direction: ['in', 'out'] },
});

/** An unexplained movement booked outside the watcher (reconcile's native drift), counted like the watcher's own. */
export function countUnexplained(chain: { network: string; mode: string }, direction: 'in' | 'out'): void {
  unexplained.inc({ network: chain.network, mode: chain.mode, direction });
}

interface ChainState {
  processed?: bigint;
  head?: bigint;
  blockTime?: number;
}
const state = new Map<string, Map<string, ChainState>>();
const stateOf = (l: { network: string; mode: string }) => {
  let byMode = state.get(l.network);
  if (!byMode) state.set(l.network, (byMode = new Map()));
  let s = byMode.get(l.mode);
  if (!s) byMode.set(l.mode, (s = {}));
  return s;
};
const setLag = (l: { network: string; mode: string }, s: ChainState) => {
  if (s.head !== undefined && s.processed !== undefined) lag.set(l, Number(s.head > s.processed ? s.head - s.processed : 0n));
};

/** The watcher's hooks (NetworkWatcherOptions.onCommitted / onStepFailed) for one chain. */
export function watcherMetricsHooks(chain: { network: string; mode: string }) {
  const l = { network: chain.network, mode: chain.mode };
  return {
    onCommitted(r: {
      poll: PollResult;
      credited: number;
      confirmed?: number;
      unexplained?: Array<'in' | 'out'>;
      unsupportedConfirmed?: number;
    }): void {
      const s = stateOf(l);
      s.processed = r.poll.processedTip.height;
      s.blockTime = r.poll.processedTip.time.getTime() / 1000;
      // A caught-up poll reached the head: the head is at least the processed tip.
      if (r.poll.caughtUp && (s.head === undefined || s.head < s.processed)) {
        s.head = s.processed;
        head.set(l, Number(s.head));
      }
      lastCommit.set(l, Date.now() / 1000);
      processed.set(l, Number(s.processed));
      lastBlockTime.set(l, s.blockTime);
      finalHeight.set(l, Number(r.poll.finalHeight));
      setLag(l, s);
      if (r.credited > 0) credited.inc(l, r.credited);
      const u = (r.confirmed ?? r.credited) - r.credited;
      if (u > 0) unmatched.inc(l, u);
      if ((r.unsupportedConfirmed ?? 0) > 0) unsupportedToken.inc(l, r.unsupportedConfirmed);
      for (const direction of r.unexplained ?? []) unexplained.inc({ ...l, direction });
    },
    onStepFailed(): void {
      stepErrors.inc(l);
    },
  };
}

metrics.onScrape('watcher-block-age', async () => {
  const now = Date.now() / 1000;
  for (const [network, byMode] of state) {
    for (const [mode, s] of byMode) {
      if (s.blockTime !== undefined) blockAge.set({ network, mode }, Math.max(0, now - s.blockTime));
    }
  }
});

/** Samples each chain's head every `intervalMs` (a failed read keeps the previous value; the watcher's own errors count). */
export function startHeadSampler(adapters: ChainRegistry, intervalMs: number): { stop(): Promise<void> } {
  let current: Promise<unknown> | null = null;
  const sample = () => {
    current ??= Promise.all(
      [...adapters].map(async (a) => {
        const l = { network: a.network, mode: a.mode };
        try {
          const h = await a.getHead();
          const s = stateOf(l);
          s.head = h.latest;
          head.set(l, Number(h.latest));
          setLag(l, s);
        } catch {
          // RPC trouble shows as watcher step errors and RPC error metrics; the head gauge keeps its last value.
        }
      }),
    ).finally(() => {
      current = null;
    });
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await current;
    },
  };
}
