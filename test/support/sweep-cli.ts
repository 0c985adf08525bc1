import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface SweepRunResult {
  code: number | null;
  /** The signal that ended the process (SIGKILL at a failpoint), null when it exited. */
  signal: string | null;
  out: string;
  err: string;
}

/**
 * `sweep run --merchant <id> --json` (the CLI, a child process) on a harness's environment, native prices from the fake
 * ticker; `env` adds to it (SP_FAILPOINTS, SP_FAILPOINTS_SWEEP_STEP, PAYOUT_POLL_MS...); `o.json: false` asks for the
 * human text instead, `o.waitSeconds` another --wait-seconds than 90. Never throws on a non-zero exit or a signal: the caller judges the result.
 */
export async function sweepRunCli(
  harnessEnv: Record<string, string>,
  tickerUrl: string,
  merchantId: string,
  env: Record<string, string> = {},
  o: { json?: boolean; waitSeconds?: number } = {},
): Promise<SweepRunResult> {
  const wait = String(o.waitSeconds ?? 90);
  const args = ['--import', 'tsx', 'src/cli/index.ts', 'sweep', 'run', '--merchant', merchantId, '--wait-seconds', wait];
  try {
    const r = await run('node', o.json === false ? args : [...args, '--json'], {
      env: {
        ...process.env,
        ...harnessEnv,
        LOG_LEVEL: 'silent',
        NATIVE_PRICE_SOURCES: 'coinbase',
        RATE_COINBASE_BASE_URL: tickerUrl,
        ...env,
      },
    });
    return { code: 0, signal: null, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number | null; signal: string | null; stdout: string; stderr: string };
    return { code: x.code, signal: x.signal ?? null, out: x.stdout, err: x.stderr };
  }
}
