// Restarts of one private instance (PostgreSQL, Redis) run one after another: a second `postgres.restart` drawn while
// the first one's instance is still down or starting would stop a server that is not running (pg_ctl: "PID file does
// not exist") or start a second one. The later restart waits for the earlier to finish (its event log says when).

const tails = new WeakMap<object, Promise<unknown>>();

export function serialRestart(instance: object, restart: () => Promise<void>): Promise<void> {
  const next = (tails.get(instance) ?? Promise.resolve()).then(restart);
  tails.set(
    instance,
    next.catch(() => {}),
  );
  return next;
}
