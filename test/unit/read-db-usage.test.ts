import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Issue 38: the read replica serves reporting reads only. Nothing that writes or decides money may even see the
// reporting handle: the ledger (every room, exports included: it takes the connection it is given), the outbound
// engine, watchers, settlement and refunds, sweeps and treasury, payments' and subscriptions' workers, jobs, reconcile,
// the signer, webhooks, idempotency, rate limits and authentication (API keys, console sessions). This reads their
// source for any import or use of src/db/read-db.ts or src/operations/reporting.ts (as layers.test.ts does for writes).

const FORBIDDEN_DIRS = [
  'src/ledger',
  'src/outbound',
  'src/watcher',
  'src/refunds',
  'src/payments',
  'src/subscriptions',
  'src/treasury',
  'src/jobs',
  'src/reconcile',
  'src/signer',
  'src/signer-service',
  'src/webhooks',
  'src/domain',
  'src/security',
  'src/console/auth',
  'src/checkout',
];
const FORBIDDEN_FILES = [
  'src/api/auth.ts',
  'src/api/rate-limit.ts',
  'src/api/rate-limit-http.ts',
  'src/api/routes/idempotent-replay.ts',
  'src/api/routes/sessions.ts',
  'src/api/routes/refunds.ts',
  'src/api/routes/subscriptions.ts',
  'src/api/routes/invoices.ts',
  'src/api/routes/payments.ts',
];

/** What betrays the reporting handle in a source text. */
const USES = [
  /read-db(\.js)?['"]/,
  /operations\/reporting(\.js)?['"]|['"]\.\/reporting(\.js)?['"]/,
  /\bReadDb\b/,
  /\bReportingDb\b/,
  /\breportingRead\(/,
  /\.reads\b/,
];
const uses = (text: string): string[] => USES.filter((re) => re.test(text)).map(String);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('the reporting-read handle', () => {
  it('is absent from every folder and file that writes or decides money', () => {
    const targets = [...FORBIDDEN_DIRS.flatMap(files), ...FORBIDDEN_FILES];
    expect(targets.length).toBeGreaterThan(150);
    const offenders = targets.flatMap((f) => uses(readFileSync(f, 'utf8')).map((u) => `${f}: ${u}`));
    expect(offenders).toEqual([]);
  });

  it('catches each way of reaching it (the check is not vacuous)', () => {
    expect(uses("import type { ReadDb } from '../db/read-db.js';")).toHaveLength(2);
    expect(uses("import { reportingRead } from '../operations/reporting.js';")).toHaveLength(1);
    expect(uses('await deps.reads.read((db) => q(db));')).toHaveLength(1);
    expect(uses('const x: ReportingDb = y;')).toHaveLength(1);
    expect(uses("import type { Db } from '../db/database.js';")).toEqual([]);
  });

  it('is used where the reporting reads are: exports, the console lists and search', () => {
    for (const f of [
      'src/api/routes/exports.ts',
      'src/operations/exports.ts',
      'src/console/routes/payments.ts',
      'src/console/routes/refunds.ts',
      'src/console/routes/subscriptions.ts',
      'src/console/routes/search.ts',
      'src/cli/index.ts',
    ]) {
      expect(uses(readFileSync(f, 'utf8')), f).not.toEqual([]);
    }
  });
});
