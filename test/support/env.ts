// Where tests find the machine's real services (docs/testing.md). Overridable for other machines.
export const PG_ADMIN_URL = process.env.TEST_PG_ADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Database names of one test run share a prefix carrying its start time, so concurrent runs never collide. */
export const RUN_PREFIX_ENV = 'SP_TEST_RUN_PREFIX';
export function runPrefix(): string {
  const p = process.env[RUN_PREFIX_ENV];
  if (!p) throw new Error(`${RUN_PREFIX_ENV} is unset: run tests through vitest (test/support/global-setup.ts)`);
  return p;
}
export const templateDbName = (): string => `${runPrefix()}_tpl`;

export function databaseUrl(name: string): string {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Request rate limits and stream caps off: harnesses drive a service much faster than a client would (a test sets its own). */
export const RATE_LIMITS_OFF_ENV: Record<string, string> = {
  API_RATE_LIMIT_PER_KEY_PER_SECOND: '0',
  API_RATE_LIMIT_PER_IP_PER_SECOND: '0',
  API_AUTH_FAILURES_PER_IP_PER_MINUTE: '0',
  CHECKOUT_STREAMS_PER_SESSION: '0',
  CHECKOUT_STREAMS_PER_IP: '0',
};
