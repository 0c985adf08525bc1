import { NETWORK_IDS, isNetworkId, type Mode, type NetworkId } from '../../chains/vocabulary.js';
import { walletJson } from '../operations/wallets.js';
import { listOperatorWallets, type OperatorWallet } from '../treasury/operator-wallets.js';
import { UsageError, options, print } from './args.js';
import { plannerDeps, type TreasuryCliContext } from './treasury.js';

// `wallets`: every wallet the operator keeps funded (src/treasury/operator-wallets.ts), as a table for people or
// JSON (--json) for machines: balances as decimal strings (native coin and tokens, the registry's decimals).

export const WALLETS_USAGE = `wallets [--network <n>] [--mode test|live] [--merchant <id>] [--json]
                                               the operator's wallets: gas stations, TRON resources account, refunds
                                               hot wallets; balances and the fee money the next sweep plan needs`;

export async function walletsCli(args: string[], ctx: TreasuryCliContext): Promise<void> {
  const { values } = options(args, {
    network: { type: 'string' },
    mode: { type: 'string' },
    merchant: { type: 'string' },
    json: { type: 'boolean' },
  });
  const network = values.network;
  if (network !== undefined && !isNetworkId(network))
    throw new UsageError(`--network must be one of ${NETWORK_IDS.join(', ')} (got ${network})`);
  const mode = values.mode;
  if (mode !== undefined && mode !== 'test' && mode !== 'live') throw new UsageError('--mode must be test or live');
  const wallets = await listOperatorWallets(await plannerDeps(ctx), {
    ...(network ? { network: network as NetworkId } : {}),
    ...(mode ? { mode: mode as Mode } : {}),
    ...(values.merchant ? { merchantId: values.merchant } : {}),
  });
  if (values.json) (ctx.out ?? print)(wallets.map(walletJson));
  else (ctx.write ?? ((t: string) => process.stdout.write(t)))(walletsTable(wallets));
}

const ROLE = { gas_station: 'gas station', resources: 'resources', refunds: 'refunds' } as const;

function walletsTable(wallets: OperatorWallet[]): string {
  const rows = wallets.map((w) => {
    const j = walletJson(w);
    const tokens = j.tokens
      ? Object.entries(j.tokens)
          .map(([s, v]) => `${v} ${s}`)
          .join(', ')
      : '';
    const needs = j.next_sweep_plan
      ? `${j.next_sweep_plan.needed} ${j.native}${j.next_sweep_plan.shortfall !== '0' ? ` (short ${j.next_sweep_plan.shortfall})` : ''}`
      : '';
    return [
      w.network,
      w.mode,
      w.merchantId ? `${ROLE[w.role]} ${w.merchantId}` : ROLE[w.role],
      w.address,
      j.balance === null ? `unread: ${w.error ?? ''}` : `${j.balance} ${j.native}`,
      tokens,
      needs,
    ];
  });
  const head = ['network', 'mode', 'wallet', 'address', 'balance', 'tokens', 'next sweeps need'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...rows.map(line)].join('\n')}\n${rows.length === 0 ? '(no network configured)\n' : ''}`;
}
