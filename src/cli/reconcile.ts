import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../../chains/vocabulary.js';
import { acknowledgeUnexplained, listUnexplained } from '../ledger/journal/unexplained.js';
import { runReconcile } from '../operations/books.js';
import { incompleteness, type ReconcileReport } from '../reconcile/reconcile.js';
import { UsageError, options, print } from './args.js';

// `reconcile` and `journal` (docs/journal.md). reconcile exits 3 when any balance differs (tokens and native coin), naming
// each address, and 4 when it could not compare everything (a chain skipped, balances left uncompared) but found no
// difference: "nothing differs among what was compared" is not "reconciled".
export const RECONCILE_USAGE = `reconcile [--network <id>] [--mode test|live] [--json]
                                                    journal vs on-chain balances at a pinned final height (exit 3 on a difference,
                                                    4 when a chain was skipped or balances left uncompared)
journal unexplained [--network <id>] [--mode test|live] [--all]
                                                    movements the service did not make (unacknowledged unless --all)
journal acknowledge <entry_id> --note <text>        accept an unexplained movement after looking at it`;

export async function reconcileCli(args: string[], deps: { db: Db; adapters: () => Promise<ChainRegistry> }): Promise<void> {
  const { values } = options(args, { network: { type: 'string' }, mode: { type: 'string' }, json: { type: 'boolean' } });
  const mode = modeOf(values.mode);
  const report = await runReconcile({ db: deps.db, adapters: await deps.adapters() }, { network: values.network, mode });
  if (values.json) print(report);
  else process.stdout.write(renderTable(report));
  for (const c of report.chains) {
    for (const d of c.differences.filter((x) => x.failing))
      process.stderr.write(`difference: ${c.network}/${c.mode} ${d.address} ${d.asset}: ledger - chain = ${d.difference} base units\n`);
    for (const gap of incompleteness(c)) process.stderr.write(`not compared: ${c.network}/${c.mode}: ${gap}\n`);
  }
  const code = reconcileExitCode(report);
  if (code !== 0) process.exitCode = code;
}

/** 3: a balance differs; 4: no difference, but a chain was skipped or balances left uncompared; 0: reconciled. */
export function reconcileExitCode(report: ReconcileReport): 0 | 3 | 4 {
  if (!report.ok) return 3;
  return report.chains.some((c) => incompleteness(c).length > 0) ? 4 : 0;
}

export async function journalCli(args: string[], deps: { db: Db }): Promise<void> {
  const [sub, ...rest] = args;
  if (sub === 'unexplained') {
    const { values } = options(rest, { network: { type: 'string' }, mode: { type: 'string' }, all: { type: 'boolean' } });
    print(await listUnexplained(deps.db, { network: values.network, mode: modeOf(values.mode), all: values.all === true }));
    return;
  }
  if (sub === 'acknowledge') {
    const { values, positionals } = options(rest, { note: { type: 'string' } });
    const id = positionals[0];
    if (!id || !/^\d+$/.test(id)) throw new UsageError('journal acknowledge <entry_id> --note <text>');
    if (!values.note) throw new UsageError('--note is required');
    if (!(await acknowledgeUnexplained(deps.db, BigInt(id), values.note)))
      throw new UsageError(`no unacknowledged unexplained entry ${id}`);
    print({ acknowledged: id });
    return;
  }
  throw new UsageError(`usage: npm run cli -- ${RECONCILE_USAGE}`);
}

function modeOf(v: string | undefined): Mode | undefined {
  if (v === undefined) return undefined;
  if (v !== 'test' && v !== 'live') throw new UsageError('--mode must be test or live');
  return v;
}

/** A readable table: per chain the pinned height and figures, the summary per merchant and token, then each difference. */
export function renderTable(report: ReconcileReport): string {
  const lines: string[] = [];
  for (const c of report.chains) {
    if (c.skipped) {
      lines.push(`${c.network}/${c.mode}: skipped (${c.skipped})`);
      continue;
    }
    lines.push(
      `${c.network}/${c.mode} at height ${c.height}: ${c.addresses} addresses, ${c.balances} balances, ${c.rpcCalls} RPC calls, ${Math.round(c.durationMs)} ms, run ${c.runId}`,
    );
    lines.push(
      `  ${'merchant'.padEnd(20)} ${'asset'.padEnd(7)} ${'addresses'.padStart(9)} ${'ledger'.padStart(24)} ${'chain'.padStart(24)} ${'difference'.padStart(24)}`,
    );
    for (const s of c.summary)
      lines.push(
        `  ${(s.merchantId ?? '-').padEnd(20)} ${s.asset.padEnd(7)} ${String(s.addresses).padStart(9)} ${String(s.expected).padStart(24)} ${String(s.chain).padStart(24)} ${String(s.difference).padStart(24)}`,
      );
    for (const d of c.differences)
      lines.push(
        `  ${d.failing ? 'DIFFERENCE' : 'in flight (not compared)'} ${d.address} ${d.asset}: ledger ${d.expected} chain ${d.chain} difference ${d.difference} (unexplained ${d.unexplained})`,
      );
  }
  const code = reconcileExitCode(report);
  lines.push(
    code === 0
      ? 'reconciled: no difference'
      : code === 3
        ? 'NOT reconciled: differences above'
        : 'NOT reconciled: no difference among what was compared, but not everything was (above)',
  );
  return `${lines.join('\n')}\n`;
}
