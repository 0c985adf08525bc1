// The runner's body (run.ts is its command line); exit status: 0 passed, 1 a step failed, 2 stopped before
// spending anything (usage, settings, preflight).
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { runAmounts } from './amounts.js';
import type { ChainFactory, PayerChain } from './chain.js';
import { createEvmChain } from './evm-chain.js';
import { missingOperatorSetting, openOperator, type Operator } from './operator.js';
import {
  PROFILE_NAMES,
  localProfile,
  publicProfile,
  readLocalState,
  redactUrl,
  type Family,
  type NetworkName,
  type Profile,
} from './profiles.js';
import { Recorder, StepFailure, verdictLine, type RunReport } from './report.js';
import { runScenario } from './scenario.js';
import { createSolanaChain } from './solana-chain.js';
import { createTronChain } from './tron-chain.js';

const USAGE = `usage: npm run testnet -- --network ${PROFILE_NAMES.join('|')} [--local] [--token USDT|USDC] [--report <file>]`;
const FACTORIES: Record<Family, ChainFactory> = { evm: createEvmChain, solana: createSolanaChain, tron: createTronChain };

/** The whole run; `say` receives every line printed. Returns the exit status. */
export async function main(
  argv: string[],
  env: Record<string, string | undefined> = process.env,
  say: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  let args;
  try {
    args = parseArgs({
      args: argv,
      options: {
        network: { type: 'string' },
        local: { type: 'boolean' },
        token: { type: 'string' },
        report: { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    });
  } catch (err) {
    say(`${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const o = args.values;
  if (o.help) {
    say(USAGE);
    return 0;
  }
  const network = o.network as NetworkName | undefined;
  if (!network || !PROFILE_NAMES.includes(network)) {
    say(`--network must be one of ${PROFILE_NAMES.join(', ')}\n${USAGE}`);
    return 2;
  }
  const local = o.local === true;

  // Settings: the profile, the service's URL, and the operator's settings (to create the run's merchant).
  let profile: Profile;
  let serviceUrl: string;
  let operatorEnv: Record<string, string | undefined> | null = null;
  let existing: { key: string; secret: string; merchantId?: string } | null = null;
  let amounts;
  try {
    amounts = runAmounts(env);
    if (local) {
      const state = readLocalState(env);
      profile = localProfile(network, state, env);
      serviceUrl = (env.SERVICE_URL ?? state.baseUrl).replace(/\/+$/, '');
      if (!state.operatorEnv)
        throw new Error('the running `npm run dev` does not share its service settings; restart it with this version');
      operatorEnv = state.operatorEnv;
    } else {
      profile = publicProfile(network, env);
      serviceUrl = (env.SERVICE_URL ?? env.PUBLIC_BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
      if (env.SERVICE_API_KEY?.trim()) {
        const secret = env.SERVICE_API_SECRET?.trim();
        if (!secret) throw new Error('SERVICE_API_KEY is set without SERVICE_API_SECRET');
        existing = {
          key: env.SERVICE_API_KEY.trim(),
          secret,
          ...(env.SERVICE_MERCHANT_ID ? { merchantId: env.SERVICE_MERCHANT_ID.trim() } : {}),
        };
      } else {
        const missing = missingOperatorSetting(env);
        if (missing)
          throw new Error(
            `${missing} is not set: run from the service's checkout (its .env) to create the run's merchant, or give an existing merchant's SERVICE_API_KEY and SERVICE_API_SECRET`,
          );
        operatorEnv = env;
      }
    }
  } catch (err) {
    say(`FAIL ${network}${local ? ' (local)' : ''}: ${(err as Error).message}`);
    return 2;
  }

  const symbol = (o.token ?? profile.tokens[0]?.symbol ?? 'USDT').toUpperCase();
  const token = profile.tokens.find((t) => t.symbol === symbol);
  if (!token) {
    say(
      `FAIL ${network}: no ${symbol} configured for ${profile.title}; set ${profile.envPrefix}_${symbol} (and _DECIMALS), or use --token ${profile.tokens.map((t) => t.symbol).join('|')}`,
    );
    return 2;
  }

  const reportPath = resolve(
    o.report ??
      join(tmpdir(), `stablepay-testnet-${network}${local ? '-local' : ''}-${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
  );
  const rec = new Recorder({ network, local, token: token.symbol, rpc_url: redactUrl(profile.rpcUrl), service_url: serviceUrl }, say, (t) =>
    t.replaceAll(profile.rpcUrl, redactUrl(profile.rpcUrl)),
  );
  say(`stablepay end-to-end on ${profile.title}: ${token.symbol} ${token.address}, service ${serviceUrl}`);

  let chain: PayerChain | null = null;
  let operator: Operator | null = null;
  let failure: string | null = null;
  try {
    try {
      chain = await FACTORIES[profile.family](profile, env);
      if (operatorEnv) operator = await openOperator(profile, operatorEnv);
    } catch (err) {
      const line = (err as Error).message;
      await rec
        .step('preflight', async () => {
          throw new StepFailure(line);
        })
        .catch(() => undefined);
      throw new StepFailure(line);
    }
    await runScenario(
      {
        profile,
        token,
        chain,
        amounts,
        serviceUrl,
        operator,
        existing,
        timeoutMs: Number(env.TESTNET_TIMEOUT_SEC ?? env.TIMEOUT_SEC ?? (local ? 120 : 900)) * 1000,
        pollMs: local ? 500 : 5000,
      },
      rec,
    );
  } catch (err) {
    failure = (err as Error).message.split('\n')[0] ?? 'failed';
    if (!(err instanceof StepFailure))
      process.stderr.write(`${((err as Error).stack ?? String(err)).replaceAll(profile.rpcUrl, redactUrl(profile.rpcUrl))}\n`);
  } finally {
    await chain?.close().catch(() => undefined);
    await operator?.close().catch(() => undefined);
  }

  const report: RunReport = rec.finish(failure);
  mkdirSync(dirname(reportPath), { recursive: true });
  writeFileSync(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  say(JSON.stringify(report, null, 2));
  say(verdictLine(report, reportPath));
  if (report.result === 'pass') return 0;
  // Stopped in preflight: nothing was sent.
  return report.steps.length === 1 && report.steps[0]!.step === 'preflight' ? 2 : 1;
}
