// The watcher's crash point for crash tests and the simulator (docs/simulation.md), as src/outbound/failpoints.ts does
// for outbound transfers: when SP_FAILPOINTS names it, the process kills itself there with SIGKILL. Unset in
// production; reading one variable at start-up is all it costs.
export const WATCHER_FAILPOINTS = ['watcher:before_commit'] as const;

/** - before_commit: a step's deposits and cursor are written in its transaction, not committed yet. */
export type WatcherFailpoint = (typeof WATCHER_FAILPOINTS)[number];

const enabled = new Set(
  (process.env.SP_FAILPOINTS ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean),
);

export function killAtWatcherFailpoint(name: WatcherFailpoint): void {
  if (enabled.has(name)) process.kill(process.pid, 'SIGKILL');
}
