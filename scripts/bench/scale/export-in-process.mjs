// One build's payments export in this process, for export-month.ts's "in process" table: the build's compiled
// writeExport (its dist/) over [since, until), the chunks hashed and discarded; prints one JSON line.
//   node scripts/bench/scale/export-in-process.mjs <build root> <database url> <since ISO> <until ISO>
import { createHash } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const [root, url, since, until] = process.argv.slice(2);
const from = (p) => import(pathToFileURL(`${root}/dist/src/${p}`).href);
const { createDb } = await from('db/database.js');
const { writeExport } = await from('ledger/exports/export-writer.js');
// USDT and USDC at 6 decimals: the amounts are formatted (the same for every build).
const decimals = (_network, _mode, token) => (token === 'USDT' || token === 'USDC' ? 6 : undefined);
const db = createDb(url, 2);
const hash = createHash('sha256');
const cpu0 = process.cpuUsage();
const t0 = performance.now();
const rows = await writeExport(
  db,
  { kind: 'payments', format: 'csv', filter: { since: new Date(since), until: new Date(until) }, ctx: { tokenDecimals: decimals } },
  async (chunk) => {
    hash.update(chunk);
  },
);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
await db.destroy();
console.log(JSON.stringify({ rows, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6, sha256: hash.digest('hex') }));
