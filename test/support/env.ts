// Where tests find the machine's real services (../shared/TESTING.md). Overridable for other machines.
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
