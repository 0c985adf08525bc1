import { EvmChainAdapter } from '../../../chains/evm/adapter.js';
import { ChainRegistry } from '../../../chains/chain-registry.js';
import { acknowledgeUnexplained } from '../../../src/ledger/journal/unexplained.js';
import { reconcile } from '../../../src/reconcile/reconcile.js';
import type { InvariantContext, Invariant, Violation } from '../contract.js';
import { tokenDecimals } from './evm-chain.js';
import { otherChainAdapters } from './other-adapters.js';

export const JOURNAL = 'journal-reconciles-with-chains';

// The journal reconciles with the chains (docs/journal.md "Reconcile"): src/reconcile/reconcile.ts over the final state,
// with an adapter per simulated chain on its own URL, test mode (EVM; Solana and TRON: other-adapters.ts). Every difference (a token balance
// where the books, i.e. the journal minus unacknowledged unexplained movements, differ from the chain at the pinned
// height) is a violation naming the address, native coin included: the runner acknowledges its own gas top-ups first
// (acknowledgeNativeFunding), as an operator does. A chain reconcile skips (the watcher never ran) is not one.
export const journalReconcilesWithChains: Invariant = async (ctx) => {
  const out: Violation[] = [];
  if (!hasChains(ctx)) return out;
  const report = await reconcile({ db: ctx.db, adapters: await simAdapters(ctx) });
  for (const chain of report.chains)
    for (const d of chain.differences) {
      // A native balance reconcile leaves uncompared because a transaction of ours from it is in flight is a violation
      // here too: after the drain nothing of ours may still be in flight.
      out.push({
        invariant: JOURNAL,
        subject: d.address,
        message: `${chain.network}/${chain.mode} ${d.address} ${d.asset} at height ${chain.height}${d.inFlight ? ' (a transaction of ours still in flight)' : ''}: books ${d.expected} (journal ${d.journal}, unacknowledged unexplained ${d.unexplained}), chain ${d.chain}, difference ${d.difference}`,
      });
    }
  return out;
};

/**
 * What an operator does after topping up wallets with gas from outside (docs/journal.md, native balances): reconcile
 * books each outside native funding as an unexplained movement; acknowledge exactly those of `funded` (lowercase
 * address → the base units given), nothing else. Returns the unexplained native movements it left alone.
 */
export async function acknowledgeNativeFunding(
  ctx: Pick<InvariantContext, 'db' | 'chains'>,
  funded: ReadonlyMap<string, bigint>,
  note: string,
): Promise<Array<{ address: string; amount: bigint }>> {
  if (!hasChains(ctx)) return [];
  const report = await reconcile({ db: ctx.db, adapters: await simAdapters(ctx) });
  const left: Array<{ address: string; amount: bigint }> = [];
  for (const chain of report.chains)
    for (const u of chain.unexplainedNative ?? []) {
      if (funded.get(u.address.toLowerCase()) === u.amount) await acknowledgeUnexplained(ctx.db, u.entryId, note);
      else left.push({ address: u.address, amount: u.amount });
    }
  return left;
}

async function simAdapters(ctx: Pick<InvariantContext, 'chains'>): Promise<ChainRegistry> {
  const adapters = [];
  for (const c of ctx.chains.evm) {
    const tokens = [];
    for (const [symbol, address] of Object.entries(c.tokens))
      tokens.push({ symbol: symbol as 'USDT' | 'USDC', address, decimals: await tokenDecimals(c, symbol) });
    adapters.push(
      new EvmChainAdapter({
        network: c.network,
        mode: 'test',
        rpcUrl: c.rpcUrl,
        chainId: BigInt(c.chainId),
        tokens,
        confirmation: { kind: 'depth', confirmations: c.confirmations },
      }),
    );
  }
  return new ChainRegistry([...adapters, ...(await otherChainAdapters(ctx.chains))]);
}

const hasChains = (ctx: Pick<InvariantContext, 'chains'>) =>
  ctx.chains.evm.length > 0 || ctx.chains.solana !== undefined || ctx.chains.tron !== undefined;
