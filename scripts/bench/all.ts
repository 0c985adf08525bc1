import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';

// `npm run bench`: runs every benchmark in turn and writes one table, as markdown and JSON, with the date and the
// machine (bench-results/latest.md and .json). `npm run bench:readme` then puts that table into README.md.
//   npm run bench [-- --quick] [-- --only webhooks,api]
// --quick runs each at a small size: proof that the chain works, not figures to publish. Each benchmark writes its
// summary ({figures, target, met}) to BENCH_OUT; one that does not gets the last lines it printed instead.
// --merge (with --only): the other rows are kept from the existing latest.json, and the table says which rows were
// re-run when (a benchmark that failed in the full run, re-run alone).

interface Bench {
  name: string;
  file: string;
  full: string[];
  quick: string[];
}
const BENCHES: Bench[] = [
  {
    name: 'webhooks',
    file: 'webhooks.ts',
    full: ['--burst', '5000', '--rate', '1000', '--seconds', '5'],
    quick: ['--burst', '500', '--rate', '100', '--seconds', '2'],
  },
  { name: 'signed API', file: 'api.ts', full: ['--seconds', '10'], quick: ['--seconds', '2', '--connections', '8'] },
  {
    name: 'EVM watcher',
    file: 'evm-watcher.ts',
    full: [],
    quick: ['--addresses', '4000', '--blocks', '1', '--per-block', '500', '--tip-runs', '1'],
  },
  { name: 'EVM watcher block rates', file: 'evm-watcher-rates.ts', full: [], quick: ['--polls', '10', '--catch-up', '1000'] },
  { name: 'refund payouts', file: 'refunds.ts', full: [], quick: ['--refunds', '50'] },
  { name: 'subscriptions', file: 'subscriptions.ts', full: [], quick: ['--subscriptions', '100', '--customers', '10'] },
  { name: 'reconcile', file: 'reconcile.ts', full: [], quick: ['--addresses', '2000'] },
  { name: 'Solana', file: 'solana.ts', full: [], quick: ['100', '20', '10'] },
  { name: 'Solana sweep', file: 'solana-sweep.ts', full: [], quick: ['50', '4'] },
  { name: 'storage', file: 'storage.ts', full: [], quick: ['--sessions', '300'] },
  // Issue 38: 1 vs 2 API and worker processes (about 5 minutes), and a year of data (factor 1: seeding alone takes
  // 15-20 minutes here; docs/performance.md "Scale").
  { name: 'processes', file: 'processes.ts', full: [], quick: ['--seconds', '2', '--events', '300', '--refunds', '8'] },
  {
    name: 'scale',
    file: 'scale/run.ts',
    full: ['--factor', '1', '--seconds', '10', '--connections', '32'],
    quick: ['--factor', '0.002', '--seconds', '2', '--connections', '8'],
  },
];

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    merge: { type: 'boolean', default: false },
    out: { type: 'string', default: 'bench-results' },
  },
});
const only = values.only?.split(',').map((s) => s.trim().toLowerCase());
const selected = BENCHES.filter((b) => !only || only.some((o) => b.name.toLowerCase().includes(o) || b.file.startsWith(o)));
mkdirSync(values.out!, { recursive: true });

export interface BenchRow {
  benchmark: string;
  command: string;
  figures: string;
  target: string;
  met: boolean | null;
  exit_code: number | null;
  seconds: number;
  details?: unknown;
  /** When this row was measured, if not in the run the table's header names (--merge). */
  rerun_at?: string;
}

const rows: BenchRow[] = [];
for (const b of selected) {
  const args = values.quick ? b.quick : b.full;
  // One flat file name per benchmark (scale/run.ts would name a directory that does not exist).
  const out = `${os.tmpdir()}/bench-${process.pid}-${b.file.replace(/\.ts$/, '').replace(/\//g, '-')}.json`;
  rmSync(out, { force: true });
  const command = `npx tsx scripts/bench/${b.file}${args.length ? ` ${args.join(' ')}` : ''}`;
  console.log(`\n## ${b.name}: ${command}`);
  const t0 = performance.now();
  const r = spawnSync('npx', ['tsx', `scripts/bench/${b.file}`, ...args], {
    env: { ...process.env, BENCH_OUT: out },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  });
  process.stdout.write(r.stdout ?? '');
  const seconds = Math.round((performance.now() - t0) / 1000);
  if (existsSync(out)) {
    const j = JSON.parse(readFileSync(out, 'utf8')) as { figures: string; target: string; met: boolean };
    rmSync(out, { force: true });
    rows.push({ benchmark: b.name, command, figures: j.figures, target: j.target, met: j.met, exit_code: r.status, seconds, details: j });
  } else {
    const lines = (r.stdout ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('npm warn'));
    rows.push({
      benchmark: b.name,
      command,
      figures:
        r.status === 0 ? (trailingJson(lines) ?? lines.slice(-6).join('; ')) : `failed (exit ${r.status}): ${lines.slice(-2).join('; ')}`,
      target: "see the benchmark's own output",
      met: null,
      exit_code: r.status,
      seconds,
    });
  }
}

const machine = {
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model ?? 'unknown',
  memory_gb: Math.round(os.totalmem() / 2 ** 30),
  load_average_1m: Number(os.loadavg()[0]!.toFixed(1)),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};
let date = new Date().toISOString();
let reportMachine = machine;
if (values.merge) {
  // The full run's rows, with the re-run ones replaced in place (and marked with their time).
  const previous = JSON.parse(readFileSync(`${values.out}/latest.json`, 'utf8')) as {
    date: string;
    machine: typeof machine;
    rows: BenchRow[];
  };
  const rerun = new Map(rows.map((r) => [r.benchmark, { ...r, rerun_at: date }]));
  const merged = previous.rows.map((r) => rerun.get(r.benchmark) ?? r);
  for (const r of rerun.values()) if (!previous.rows.some((p) => p.benchmark === r.benchmark)) merged.push(r);
  rows.splice(0, rows.length, ...merged);
  date = previous.date;
  reportMachine = previous.machine;
}
const report = { date, machine: reportMachine, quick: values.quick, rows };
writeFileSync(`${values.out}/latest.json`, `${JSON.stringify(report, null, 2)}\n`);
writeFileSync(`${values.out}/latest.md`, renderMarkdown(report));
console.log(`\n${renderMarkdown(report)}`);
console.log(`written: ${values.out}/latest.md and ${values.out}/latest.json`);

/** A benchmark that ends by printing a JSON object: its fields as `key value` pairs. */
function trailingJson(lines: string[]): string | undefined {
  const start = lines.lastIndexOf('{');
  if (start < 0 || lines[lines.length - 1] !== '}') return undefined;
  try {
    const flat = (o: unknown, at: string): string[] =>
      o !== null && typeof o === 'object'
        ? Object.entries(o).flatMap(([k, v]) => flat(v, at ? `${at}.${k}` : k))
        : [`${at.replace(/_/g, ' ')} ${String(o)}`];
    return flat(JSON.parse(lines.slice(start).join('\n')), '').join('; ');
  } catch {
    return undefined;
  }
}

export function renderMarkdown(r: { date: string; machine: typeof machine; quick: boolean | undefined; rows: BenchRow[] }): string {
  const esc = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
  const lines = [
    `Generated by \`npm run bench${r.quick ? ' -- --quick' : ''}\` on ${r.date.slice(0, 16).replace('T', ' ')} UTC: ${r.machine.cpus} × ${r.machine.cpu_model}, ${r.machine.memory_gb} GB, Node ${r.machine.node}, load average ${r.machine.load_average_1m} at the end${r.quick ? ' (quick sizes: proof of the chain, not figures to quote)' : ''}.`,
    '',
    '| benchmark | command | figures | target | met |',
    '|---|---|---|---|---|',
    ...r.rows.map(
      (x) =>
        `| ${esc(x.benchmark)} | \`${esc(x.command)}\` | ${esc(x.figures)}${x.rerun_at ? ` (re-run alone on ${x.rerun_at.slice(0, 16).replace('T', ' ')} UTC)` : ''} | ${esc(x.target)} | ${x.met === null ? '–' : x.met ? 'yes' : 'no'} |`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
