// The payments export at a month of a year's data (issue 38: ">= 50,000 rows/s with RSS under 200 MB"), without the
// full scale seed: one merchant, and only what the payments export reads (sessions and their deposits, journaled as the
// scale seeder journals them), for the last month of a simulated year of --sessions sessions: at the default 1,000,000
// (the full run's year) that is ~87,700 sessions and ~85,000 confirmed payments in the exported 31 days.
//   npx tsx scripts/bench/scale/export-month.ts [--sessions 1000000] [--runs 3] [--base <dir>] [--db <url>] [--keep]
// Then the operator's CSV export of those 31 days through the compiled CLI (`npm run build`: dist/src/cli/index.js),
// each in a process of its own (measure.ts measureExportProcess): its peak RSS from /proc, rows/s over what the rows
// added to an export of none, and rows per second of the CPU time they added (the figure a loaded machine moves least).
// --base <dir>: another checkout with its own compiled dist/ (e.g. the base commit's: `git archive <base> | tar -x -C
// <dir>`, node_modules linked, `npx tsc -p tsconfig.build.json`), run alternately with this one (base, this, base,
// this ...), its output compared byte for byte (sha256); then each build's export in process, alternated the same way
// (export-in-process.mjs: no CLI start-up, no pipe; amounts formatted at 6 decimals). --db: an already seeded
// database (printed by a run with --keep); --keep: leave the seeded database. Prints figures; never fails on a timing.
import { execFileSync } from 'node:child_process';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createMerchant } from '../../../src/ledger/merchants/merchants.js';
import { SecretBox } from '../../../src/security/secret-box.js';
import { measureExportProcess } from './measure.js';
import { SCALE_BOX_KEY, freshDatabase } from './seed.js';
import { sessionRangeSql, setupSql } from './seed-sql.js';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '3' },
    base: { type: 'string' },
    db: { type: 'string' },
    keep: { type: 'boolean', default: false },
  },
});
const CHUNK = 25_000;
/** The statements of the scale seeder that write what the payments export reads. */
const EXPORT_ROWS = new Set(['payment_sessions', 'deposits (dep)', 'deposits (late)']);

async function seedMonth(sessions: number): Promise<Awaited<ReturnType<typeof freshDatabase>>> {
  const fresh = await freshDatabase('bench_export');
  try {
    const m = await createMerchant(fresh.db, new SecretBox(SCALE_BOX_KEY), {
      name: 'Export shop',
      webhookUrl: 'https://shop.example/hooks',
    });
    const client = new pg.Client({ connectionString: fresh.url });
    await client.connect();
    try {
      // One merchant: the skew puts every session on merchant 0 (the operator's export and the merchant's are one).
      await client.query(setupSql(1, sessions));
      await client.query(
        `insert into mch (idx, id, url, hd_test, hd_live)
         select 0, m.id, m.webhook_url, t.account_index, l.account_index from merchants m
         join merchant_hd_accounts t on t.merchant_id = m.id and t.mode = 'test'
         join merchant_hd_accounts l on l.merchant_id = m.id and l.mode = 'live' where m.id = $1`,
        [m.merchantId],
      );
      // Sessions spread evenly over the year ending an hour ago: the last 32 days' worth covers the exported 31.
      const lo = Math.max(1, Math.floor(sessions * (1 - 32 / 365)));
      const t0 = performance.now();
      for (let a = lo; a <= sessions; a += CHUNK) {
        const b = Math.min(sessions, a + CHUNK - 1);
        for (const s of sessionRangeSql(a, b)) if (EXPORT_ROWS.has(s.label)) await client.query(s.text);
      }
      await client.query('vacuum analyze');
      const { rows } = await client.query<{ n: string }>(
        `select count(*)::text as n from deposits where status = 'confirmed' and session_id is not null and confirmed_at >= now() - interval '31 days'`,
      );
      console.log(
        `seeded sessions ${lo}..${sessions} of a ${sessions}-session year in ${((performance.now() - t0) / 1000).toFixed(1)} s: ${rows[0]!.n} payments in the last 31 days`,
      );
    } finally {
      await client.end();
    }
  } catch (err) {
    await fresh.drop();
    throw err;
  }
  return fresh;
}

const seeded = values.db ? undefined : await seedMonth(Number(values.sessions));
const url = values.db ?? seeded!.url;
if (values.keep && seeded) console.log(`kept: --db ${url}`);
try {
  const until = new Date();
  const since = new Date(until.getTime() - 31 * 86_400_000);
  const builds = [
    ...(values.base ? [{ name: 'base', cli: `${values.base}/dist/src/cli/index.js` }] : []),
    { name: 'this', cli: 'dist/src/cli/index.js' },
  ];
  console.log('| run | build | rows | rows/s | rows per CPU s | peak RSS MB | no rows: RSS MB | export s | no rows s | sha256 |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---|');
  for (let i = 1; i <= Number(values.runs); i++)
    for (const b of builds) {
      const r = await measureExportProcess({ url }, { cli: b.cli, since, until });
      console.log(
        `| ${i} | ${b.name} | ${r.rows} | ${Math.round(r.rowsPerSecond)} | ${Math.round(r.rowsPerCpuSecond)} | ${Math.round(r.peakRssMb)} | ${Math.round(r.idleRssMb)} | ${r.seconds.toFixed(2)} | ${r.idleSeconds.toFixed(2)} | ${r.sha256.slice(0, 12)} |`,
      );
    }
  // The same export in process (export-in-process.mjs: each build's compiled writeExport in a node process of its own,
  // the chunks hashed, no stdout): what the export costs without the CLI's start-up and pipe.
  console.log('\n| run | build (in process) | rows | rows/s | rows per CPU s | sha256 |');
  console.log('|---|---|---:|---:|---:|---|');
  for (let i = 1; i <= Number(values.runs); i++)
    for (const b of builds) {
      const root = b.cli.replace(/\/?dist\/src\/cli\/index\.js$/, '') || '.';
      const out = execFileSync(
        process.execPath,
        ['scripts/bench/scale/export-in-process.mjs', root, url, since.toISOString(), until.toISOString()],
        { encoding: 'utf8' },
      );
      const r = JSON.parse(out) as { rows: number; seconds: number; cpuSeconds: number; sha256: string };
      console.log(
        `| ${i} | ${b.name} | ${r.rows} | ${Math.round(r.rows / r.seconds)} | ${Math.round(r.rows / r.cpuSeconds)} | ${r.sha256.slice(0, 12)} |`,
      );
    }
} finally {
  if (seeded && values.keep) await seeded.db.destroy();
  else if (seeded) await seeded.drop();
}
