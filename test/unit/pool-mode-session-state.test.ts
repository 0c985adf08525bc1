import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

// DATABASE_POOL_MODE=transaction (issue 38, docs/deploy.md "PgBouncer"): behind a transaction-pooling bouncer two
// statements of one client may run on two server connections, so nothing may rely on session state. This audits the
// source: every statement that holds state across transactions (session advisory locks, LISTEN, SET outside a
// transaction, named prepared statements, temporary tables) is in one of the four places that take a direct
// connection, and src/main.ts gives those places the direct one. The API through a real PgBouncer:
// test/integration/pgbouncer.test.ts.

const SESSION_STATE: { what: string; re: RegExp }[] = [
  { what: 'session advisory lock', re: /pg_(try_)?advisory_lock(_shared)?\(/ },
  { what: 'LISTEN', re: /['"`]\s*listen\s/i },
  { what: 'SET outside a transaction', re: /(sql`|query\(['"`])\s*set\s+(?!transaction\b|local\b)/i },
  { what: 'session set_config', re: /set_config\([^)]*,\s*false\s*\)/i },
  { what: 'named prepared statement', re: /\bprepare\s+\w+\s+(as|\()|\bname:\s*['"`][^'"`]+['"`],\s*text:/i },
  { what: 'temporary table', re: /create\s+temp(orary)?\s+table/i },
];

/** The places that need a session, and how src/main.ts hands them the direct connection. */
const ALLOWED: Record<string, RegExp> = {
  'src/watcher/leader-lock.ts': /startChainWatchers\(\{\s*db: sessionDb,/,
  'src/ledger/journal/reconcile-runs.ts': /startReconcileJob\(\{\s*db: sessionDb,/,
  'src/db/migrate.ts': /migrateToLatest\(sessionDb\)/,
  'src/webhooks/relay.ts': /startOutboxRelay\(\{[^}]*databaseUrl: directUrl,/,
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (p === 'src/console/ui' || p === 'src/db/migrations') return [];
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}
const found = (text: string): string[] => SESSION_STATE.filter((s) => s.re.test(text)).map((s) => s.what);

describe('session state, for transaction pooling', () => {
  it('appears only in the places that take a direct connection', () => {
    const hits = files('src').flatMap((f) => found(readFileSync(f, 'utf8')).map((w) => `${f}: ${w}`));
    const outside = hits.filter((h) => !Object.keys(ALLOWED).includes(h.split(':')[0]!));
    expect(outside).toEqual([]);
    // Each allowed place does hold session state (else it should leave the list).
    for (const f of Object.keys(ALLOWED))
      expect(
        hits.some((h) => h.startsWith(`${f}:`)),
        f,
      ).toBe(true);
  });

  it('recognises each kind (the audit is not vacuous)', () => {
    expect(found('sql`select pg_advisory_lock(${k})`')).toEqual(['session advisory lock']);
    expect(found('sql`select pg_try_advisory_lock(1)`')).toEqual(['session advisory lock']);
    expect(found('sql`select pg_advisory_xact_lock(1)`')).toEqual([]);
    expect(found("client.query('listen outbox_events')")).toEqual(['LISTEN']);
    expect(found('sql`set statement_timeout = 0`')).toEqual(['SET outside a transaction']);
    expect(found('sql`set transaction read only`')).toEqual([]);
    expect(found('sql`set local lock_timeout = 1000`')).toEqual([]);
    expect(found("pool.query({ name: 'get-session', text: 'select 1' })")).toEqual(['named prepared statement']);
  });

  it('src/main.ts gives those places the direct connection', () => {
    const main = readFileSync('src/main.ts', 'utf8');
    for (const [f, handoff] of Object.entries(ALLOWED)) expect(handoff.test(main), `${f} via ${handoff}`).toBe(true);
    const cli = readFileSync('src/cli/index.ts', 'utf8');
    const direct =
      "config.DATABASE_POOL_MODE === 'transaction' ? (config.DATABASE_DIRECT_URL ?? config.DATABASE_URL) : config.DATABASE_URL";
    expect(cli.replace(/\s+/g, ' ')).toContain(direct);
    expect(main.replace(/\s+/g, ' ')).toContain(`const directUrl = ${direct}`);
  });

  it('the named statements of the hot path (src/db/named-statements.ts) are sent by a direct pool only', () => {
    const main = readFileSync('src/main.ts', 'utf8').replace(/\s+/g, ' ');
    expect(main).toContain('{ namedStatements: usesNamedStatements(config) }'); // direct pool mode only (test/unit/config.test.ts)
    const enabling = files('src').filter((f) => /namedStatements:/.test(readFileSync(f, 'utf8')));
    expect(enabling).toEqual(['src/main.ts']);
  });

  it('a process with session-holding roles refuses transaction mode without DATABASE_DIRECT_URL', () => {
    const base = { MASTER_KEY: '5a'.repeat(32), DATABASE_POOL_MODE: 'transaction', DATABASE_URL: 'postgres://u@bouncer:6432/sp' };
    for (const roles of ['watcher', 'worker', 'api,worker,watcher']) {
      expect(() => loadConfig({ ...base, ROLES: roles, MIGRATE_ON_START: 'false' })).toThrow(/DATABASE_DIRECT_URL: is required/);
    }
    expect(() => loadConfig({ ...base, ROLES: 'api' })).toThrow(ConfigError); // MIGRATE_ON_START defaults to true
    expect(loadConfig({ ...base, ROLES: 'api,console', MIGRATE_ON_START: 'false' }).DATABASE_POOL_MODE).toBe('transaction');
    const direct = loadConfig({ ...base, ROLES: 'watcher', DATABASE_DIRECT_URL: 'postgres://u@db:5432/sp' });
    expect(direct.DATABASE_DIRECT_URL).toBe('postgres://u@db:5432/sp');
  });
});
