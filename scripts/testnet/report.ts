// The run's record: one entry per step, in order, with what it did and the explorer links of its transactions.
// The JSON written at the end is this object; the last line printed is the pass/fail verdict.

export type StepStatus = 'passed' | 'failed' | 'skipped';

export interface TxRef {
  what: string;
  hash: string;
  /** Block explorer page of the transaction, or null on a chain without one (local Anvil). */
  explorer: string | null;
}

export interface StepRecord {
  step: string;
  status: StepStatus;
  detail: string;
  txs: TxRef[];
  data: Record<string, string | number | boolean | null>;
  ms: number;
}

export interface RunReport {
  network: string;
  local: boolean;
  token: string;
  rpc_url: string;
  service_url: string;
  started_at: string;
  finished_at: string | null;
  result: 'pass' | 'fail';
  /** The first failure, one line; null when the run passed. */
  failure: string | null;
  steps: StepRecord[];
}

/** A step failure that stops the run: its message is the one line the user sees. */
export class StepFailure extends Error {}

export class Recorder {
  readonly report: RunReport;
  private readonly out: (line: string) => void;

  /** `scrub` removes what must not be printed (an RPC URL carrying an API key) from every line and detail. */
  constructor(
    init: Pick<RunReport, 'network' | 'local' | 'token' | 'rpc_url' | 'service_url'>,
    private readonly print: (line: string) => void,
    private readonly scrub: (text: string) => string = (t) => t,
  ) {
    this.out = (line) => print(scrub(line));
    this.report = { ...init, started_at: new Date().toISOString(), finished_at: null, result: 'fail', failure: null, steps: [] };
  }

  /** Runs one step; a thrown error records the step as failed and is rethrown (the run stops at its first failure). */
  async step(name: string, body: (s: StepContext) => Promise<string>): Promise<void> {
    const started = Date.now();
    const rec: StepRecord = { step: name, status: 'passed', detail: '', txs: [], data: {}, ms: 0 };
    this.report.steps.push(rec);
    this.out(`▶ ${name}`);
    const ctx: StepContext = {
      tx: (what, hash, explorer) => {
        rec.txs.push({ what, hash, explorer });
        this.out(`    ${what}: ${hash}${explorer ? `  ${explorer}` : ''}`);
      },
      note: (line) => this.out(`    ${line}`),
      data: rec.data,
    };
    try {
      rec.detail = await body(ctx);
      rec.ms = Date.now() - started;
      this.out(`  ✔ ${name}: ${rec.detail} (${(rec.ms / 1000).toFixed(1)} s)`);
    } catch (err) {
      rec.status = 'failed';
      rec.detail = this.scrub((err as Error).message);
      rec.ms = Date.now() - started;
      this.out(`  ✘ ${name}: ${rec.detail}`);
      throw err;
    }
  }

  skip(name: string, reason: string): void {
    this.report.steps.push({ step: name, status: 'skipped', detail: reason, txs: [], data: {}, ms: 0 });
    this.out(`  – ${name}: skipped: ${reason}`);
  }

  finish(failure: string | null): RunReport {
    this.report.finished_at = new Date().toISOString();
    this.report.failure = failure === null ? null : this.scrub(failure);
    this.report.result = failure === null && this.report.steps.every((s) => s.status !== 'failed') ? 'pass' : 'fail';
    return this.report;
  }
}

export interface StepContext {
  tx(what: string, hash: string, explorer: string | null): void;
  note(line: string): void;
  data: StepRecord['data'];
}

/** The verdict line: `PASS <network>: …` or `FAIL <network> at <step>: <reason>`. */
export function verdictLine(r: RunReport, reportPath: string): string {
  const count = (s: StepStatus) => r.steps.filter((x) => x.status === s).length;
  if (r.result === 'pass')
    return `PASS ${r.network}${r.local ? ' (local)' : ''}: ${count('passed')} steps passed, ${count('skipped')} skipped; report ${reportPath}`;
  const failed = r.steps.find((s) => s.status === 'failed');
  return `FAIL ${r.network}${r.local ? ' (local)' : ''}${failed ? ` at ${failed.step}` : ''}: ${r.failure ?? failed?.detail ?? 'unknown'}; report ${reportPath}`;
}
