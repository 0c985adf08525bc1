// GET /readyz checks PostgreSQL and Redis. It is public and outside the per-IP rate limit (orchestrators and load
// balancers call it), so a flood of it must not become a flood of database queries that starves the signed API of
// pool connections: every caller arriving while a check runs shares it, and a finished check answers for `reuseMs`.

export interface Readiness {
  status: 'ready' | 'unavailable';
  checks: { postgres: 'ok' | 'unreachable'; redis: 'ok' | 'unreachable' };
}

export type ReadinessProbe = () => Promise<Readiness>;

/** Wraps `probe` so that concurrent callers share one run and a result is reused for `reuseMs` after it finished. */
export function sharedReadiness(probe: ReadinessProbe, reuseMs: number, now: () => number = Date.now): ReadinessProbe {
  const state: { running?: Promise<Readiness>; last?: { at: number; value: Readiness } } = {};
  return () => {
    if (state.last && now() - state.last.at < reuseMs) return Promise.resolve(state.last.value);
    state.running ??= probe().then(
      (value) => {
        state.last = { at: now(), value };
        state.running = undefined;
        return value;
      },
      (err: unknown) => {
        state.running = undefined;
        throw err;
      },
    );
    return state.running;
  };
}
