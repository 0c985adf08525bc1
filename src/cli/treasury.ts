import type { ChainRegistry } from '../../chains/chain-registry.js';
import { ApiError } from '../domain/errors.js';
import { plannerDepsOf } from '../operations/treasury-deps.js';
import { getSweepPolicy, listDestinations, policyTokenDecimals, putSweepPolicy, setDestination } from '../operations/treasury.js';
import { rotateGasStation } from '../operations/gas-station.js';
import { rotationJson, rotationText } from './rotation-output.js';
import type { KeyDeriver, TxSigner } from '../../chains/types.js';
import type { Db } from '../db/database.js';
import { InvalidAmountError, parseDecimalToMinor } from '../domain/money.js';
import {
  NETWORK_IDS,
  STABLECOIN_EXPONENT,
  isNetworkId,
  isTokenSymbol,
  type Mode,
  type NetworkId,
  type TokenSymbol,
} from '../../chains/vocabulary.js';
import { listSweeps, sweepCosts } from '../ledger/treasury/sweeps.js';
import type { Logger } from '../logger.js';
import type { NativePriceService } from '../rates/native-prices.js';
import { planSweeps, type PlanFilter, type PlannerDeps, type SweepPlanReport } from '../treasury/planner.js';
import { runSweeps } from '../treasury/run.js';
import { CliFailure, UsageError, options, print, required } from './args.js';
import { feeMoneyJson, feeMoneyLine, operatorWalletsJson, planJson, planTable, runText, sweepJson } from './sweep-output.js';

// Operator commands for sweeping (docs/treasury.md): where the money goes (`treasury set/show`), the gas station's
// rotation (`treasury rotate-gas-station`), what a sweep would
// do (`sweep plan`), doing it (`sweep run`), what was done (`sweep list`) and what it cost (`sweep costs`).

export const TREASURY_USAGE = `treasury set --merchant <id> --network <n> --mode test|live --address <addr>|none [--hot-float <amount>] [--actor <who>]
                                               destination of swept funds (audited; no treasury: the refunds hot wallet)
treasury show [--merchant <id>]                destinations, hot-float targets and their change history
treasury rotate-gas-station --network <n> --mode test|live [--actor <who>] [--note <text>] [--drain-only] [--wait-seconds N] [--json]
                                               a new gas station (audited), the old one drained to it; run again: resumes
                                               the drain; --drain-only: retries the drains of retired ones holding coin
sweep plan [--merchant --network --mode --token] [--json]
                                               dry run: what would move, estimated fees and fee share, what waits and why
sweep run [--merchant --network --mode --token] [--wait-seconds N] [--json]
                                               plan, persist and send the sweeps; exit 1 if one fails or is still running,
                                               at once when they wait only for fee money (one line per wallet)
sweep list [--merchant <id>] [--status running|completed|partial|failed] [--limit N]
sweep costs --since <iso> --until <iso> [--merchant <id>]
                                               fees spent per merchant, network and mode, with what was swept
sweep policy set --network <n> --mode test|live --token USDT|USDC --min <amount> --max-fee-bps N [--actor <who>]
sweep policy show --network <n> --mode test|live --token USDT|USDC`;

export interface TreasuryCliContext {
  db: Db;
  /** The configured chains (created lazily: only some commands need RPC). */
  adapters: () => Promise<ChainRegistry>;
  keys: KeyDeriver | null;
  signer: TxSigner | null;
  prices: () => NativePriceService;
  engine: { pollMs: number; stuckAfterMs: number; feeBumpPercent: number };
  env: Record<string, string | undefined>;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
  out?: (value: unknown) => void;
  /** Human-readable output (sweep plan's table). */
  write?: (text: string) => void;
}

function mode(v: string | boolean | undefined): Mode {
  const m = required(v, 'mode');
  if (m !== 'test' && m !== 'live') throw new UsageError('--mode must be test or live');
  return m;
}

function network(v: string | boolean | undefined): NetworkId {
  const n = required(v, 'network');
  if (!isNetworkId(n)) throw new UsageError(`--network must be one of ${NETWORK_IDS.join(', ')} (got ${n})`);
  return n;
}

function token(v: string | boolean | undefined): TokenSymbol {
  const t = required(v, 'token');
  if (!isTokenSymbol(t)) throw new UsageError('--token must be USDT or USDC');
  return t;
}

function amountMinor(text: string, name: string): bigint {
  try {
    return parseDecimalToMinor(text, STABLECOIN_EXPONENT);
  } catch (e) {
    if (e instanceof InvalidAmountError) throw new UsageError(`--${name}: ${e.message}`);
    throw e;
  }
}

function actor(v: string | boolean | undefined, env: Record<string, string | undefined>): string {
  const a = (typeof v === 'string' && v.trim()) || env.USER?.trim() || env.LOGNAME?.trim();
  if (!a) throw new UsageError('--actor is required when $USER is not set (the audit row names who changed it)');
  return a;
}

function filterFrom(values: Record<string, string | boolean | undefined>): PlanFilter {
  return {
    ...(typeof values.merchant === 'string' ? { merchantId: values.merchant } : {}),
    ...(values.network !== undefined ? { network: network(values.network) } : {}),
    ...(values.mode !== undefined ? { mode: mode(values.mode) } : {}),
    ...(values.token !== undefined ? { token: token(values.token) } : {}),
  };
}

const FILTER = { merchant: { type: 'string' }, network: { type: 'string' }, mode: { type: 'string' }, token: { type: 'string' } } as const;

export async function treasuryCli(args: string[], ctx: TreasuryCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  switch (sub) {
    case 'set': {
      const { values } = options(rest, {
        merchant: { type: 'string' },
        network: { type: 'string' },
        mode: { type: 'string' },
        address: { type: 'string' },
        'hot-float': { type: 'string' },
        actor: { type: 'string' },
      });
      const merchantId = required(values.merchant, 'merchant');
      const n = network(values.network);
      const m = mode(values.mode);
      const raw = required(values.address, 'address');
      const hotFloat = values['hot-float'] !== undefined ? amountMinor(required(values['hot-float'], 'hot-float'), 'hot-float') : undefined;
      out(
        await cliErrors(() =>
          setDestination(ctx.db, ctx.adapters, {
            merchantId,
            network: n,
            mode: m,
            address: raw === 'none' ? null : raw,
            ...(hotFloat !== undefined ? { hotFloatMinor: hotFloat } : {}),
            actor: () => actor(values.actor, ctx.env),
          }),
        ),
      );
      return;
    }
    case 'show': {
      const { values } = options(rest, { merchant: { type: 'string' } });
      out(await listDestinations(ctx.db, typeof values.merchant === 'string' ? values.merchant : undefined));
      return;
    }
    case 'rotate-gas-station': {
      const { values } = options(rest, {
        network: { type: 'string' },
        mode: { type: 'string' },
        actor: { type: 'string' },
        note: { type: 'string' },
        'drain-only': { type: 'boolean' },
        'wait-seconds': { type: 'string' },
        json: { type: 'boolean' },
      });
      const n = network(values.network);
      const m = mode(values.mode);
      const wait = values['wait-seconds'] ?? '120';
      if (!/^\d+$/.test(wait)) throw new UsageError('--wait-seconds must be a whole number');
      if (values.note !== undefined && (values.note.length < 1 || values.note.length > 500))
        throw new UsageError('--note must be 1..500 characters');
      const who = actor(values.actor, ctx.env);
      if (!ctx.keys) throw new UsageError('rotating the gas station needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive its addresses');
      const adapters = await ctx.adapters();
      const r = await cliErrors(() =>
        rotateGasStation(
          { db: ctx.db, adapters, treasury: ctx, ...(ctx.log ? { log: ctx.log } : {}) },
          {
            network: n,
            mode: m,
            actor: who,
            note: values.note ?? null,
            drainOnly: values['drain-only'] === true,
            waitMs: ctx.signer ? Number(wait) * 1000 : 0,
          },
        ),
      );
      const adapter = adapters.get(n, m);
      const display = (a: string) => adapter?.displayAddress(a) ?? a;
      if (values.json) out(rotationJson(r, display));
      else (ctx.write ?? ((t: string) => process.stdout.write(t)))(rotationText(r, display));
      const failed = r.drains.filter((d) => d.status === 'failed');
      if (failed.length > 0)
        throw new CliFailure(
          `${failed.length} drain(s) failed: ${failed.map((d) => `${d.id} ${d.failure_reason ?? ''}`).join('; ')} (--drain-only retries)`,
        );
      return;
    }
    default:
      throw new UsageError(`unknown treasury command ${sub ?? ''}\n${TREASURY_USAGE}`);
  }
}

export async function sweepCli(args: string[], ctx: TreasuryCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  switch (sub) {
    case 'plan': {
      const { values } = options(rest, { ...FILTER, json: { type: 'boolean' } });
      const report = await plan(ctx, filterFrom(values));
      const tokenDecimals = (await ctx.adapters()).tokenDecimals;
      if (values.json) out(planJson(report, tokenDecimals));
      else (ctx.write ?? ((t: string) => process.stdout.write(t)))(planTable(report, tokenDecimals));
      return;
    }
    case 'run': {
      const { values } = options(rest, { ...FILTER, 'wait-seconds': { type: 'string' }, json: { type: 'boolean' } });
      const wait = values['wait-seconds'] ?? '600';
      if (!/^\d+$/.test(wait)) throw new UsageError('--wait-seconds must be a whole number');
      if (!ctx.signer) throw new UsageError('sweep run signs transactions: it needs HD_MNEMONIC');
      const adapters = await ctx.adapters();
      const r = await runSweeps(
        { db: ctx.db, adapters, signer: ctx.signer, ...ctx.engine, ...(ctx.log ? { log: ctx.log } : {}) },
        await plannerDeps(ctx),
        filterFrom(values),
        { timeoutMs: Number(wait) * 1000 },
      );
      if (values.json)
        out({
          created: r.created.map((s) => sweepJson(s)),
          resumed: r.resumed.map((s) => sweepJson(s)),
          skipped: planJson(r.report, adapters.tokenDecimals).skipped,
          operator_wallets: operatorWalletsJson(r.report),
          still_running: r.stillRunning,
          waiting_for_fee_money: r.feeMoney.map(feeMoneyJson),
        });
      else (ctx.write ?? ((t: string) => process.stdout.write(t)))(runText(r, adapters.tokenDecimals));
      const bad = [...r.created, ...r.resumed].filter((s) => s.status === 'failed' || s.status === 'partial' || s.status === 'running');
      const reasons: string[] = [];
      if (bad.length > 0) reasons.push(`${bad.length} sweep(s) did not complete: ${bad.map((s) => `${s.id} ${s.status}`).join(', ')}`);
      if (r.feeMoney.length > 0)
        reasons.push(`${r.feeMoney.length} operator wallet(s) need fee money: ${r.feeMoney.map(feeMoneyLine).join('; ')}`);
      if (reasons.length > 0) throw new CliFailure(reasons.join('\n'));
      return;
    }
    case 'list': {
      const { values } = options(rest, { merchant: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } });
      const limit = values.limit ?? '50';
      if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > 1000) throw new UsageError('--limit must be 1..1000');
      if (values.status && !['running', 'completed', 'partial', 'failed'].includes(values.status))
        throw new UsageError('--status must be running, completed, partial or failed');
      const rows = await listSweeps(ctx.db, {
        limit: Number(limit),
        ...(values.merchant ? { merchantId: values.merchant } : {}),
        ...(values.status ? { status: values.status } : {}),
      });
      out(rows.map((s) => sweepJson(s)));
      return;
    }
    case 'costs': {
      const { values } = options(rest, { since: { type: 'string' }, until: { type: 'string' }, merchant: { type: 'string' } });
      const since = date(required(values.since, 'since'), 'since');
      const until = date(required(values.until, 'until'), 'until');
      if (until <= since) throw new UsageError('--until must be after --since');
      const rows = await sweepCosts(ctx.db, { since, until, ...(values.merchant ? { merchantId: values.merchant } : {}) });
      out({
        since: since.toISOString(),
        until: until.toISOString(),
        rows: rows.map((r) => ({
          ...r,
          fee_base: r.fee_base.toString(),
          rent_paid_base: r.rent_paid_base.toString(),
          rent_returned_base: r.rent_returned_base.toString(),
          spent_base: r.spent_base.toString(),
          net_base: r.net_base.toString(),
        })),
      });
      return;
    }
    case 'policy':
      return policyCli(rest, ctx);
    default:
      throw new UsageError(`unknown sweep command ${sub ?? ''}\n${TREASURY_USAGE}`);
  }
}

async function policyCli(args: string[], ctx: TreasuryCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  const spec = {
    network: { type: 'string' },
    mode: { type: 'string' },
    token: { type: 'string' },
    min: { type: 'string' },
    'max-fee-bps': { type: 'string' },
    actor: { type: 'string' },
  } as const;
  const { values } = options(rest, spec);
  const n = network(values.network);
  const m = mode(values.mode);
  const t = token(values.token);
  const adapters = await ctx.adapters();
  await cliErrors(async () => policyTokenDecimals(adapters, n, m, t));
  if (sub === 'set') {
    const minMinor = amountMinor(required(values.min, 'min'), 'min');
    const bps = required(values['max-fee-bps'], 'max-fee-bps');
    if (!/^\d+$/.test(bps) || Number(bps) > 10_000) throw new UsageError('--max-fee-bps must be 0..10000');
    out(
      (
        await putSweepPolicy(ctx.db, adapters, {
          network: n,
          mode: m,
          token: t,
          minMinor,
          maxFeeBps: Number(bps),
          actor: actor(values.actor, ctx.env),
        })
      ).after,
    );
    return;
  }
  if (sub !== 'show') throw new UsageError(`unknown sweep policy command ${sub ?? ''}\n${TREASURY_USAGE}`);
  out(await getSweepPolicy(ctx.db, adapters, n, m, t));
}

/** An operation's refusal (ApiError) as the CLI's usage error, its message as the CLI always printed it. */
async function cliErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof ApiError) throw new UsageError(e.code === 'address_invalid' ? `--address ${e.message}` : e.message);
    throw e;
  }
}

function date(text: string, name: string): Date {
  const d = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(d.getTime())) throw new UsageError(`--${name} must be an ISO date or time`);
  return d;
}

export async function plannerDeps(ctx: TreasuryCliContext): Promise<PlannerDeps> {
  if (!ctx.keys) throw new UsageError('sweeping needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive the deposit addresses');
  const adapters = await ctx.adapters();
  return cliErrors(async () => plannerDepsOf({ db: ctx.db, adapters, treasury: ctx, ...(ctx.log ? { log: ctx.log } : {}) }));
}

async function plan(ctx: TreasuryCliContext, filter: PlanFilter): Promise<SweepPlanReport> {
  return planSweeps(await plannerDeps(ctx), filter);
}
