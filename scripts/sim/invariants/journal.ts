import { EvmChainAdapter } from '../../../chains/evm/adapter.js';
import { ChainRegistry } from '../../../chains/registry.js';
import { reconcile } from '../../../src/reconcile/reconcile.js';
import type { Invariant, Violation } from '../contract.js';
import { tokenDecimals } from './evm-chain.js';

export const JOURNAL = 'journal-reconciles-with-chains';

// The journal reconciles with the chains (docs/journal.md "Reconcile"): src/reconcile/reconcile.ts over the final state,
// with an adapter per simulated EVM chain on the node's own URL, test mode. Every failing difference (a token balance
// where the books, i.e. the journal minus unacknowledged unexplained movements, differ from the chain at the pinned
// height) is a violation naming the address. Native rows are reported by reconcile but never fail it (gas funding is
// not journaled), so they are not violations here either. A chain reconcile skips (the watcher never ran) is not one.
export const journalReconcilesWithChains: Invariant = async (ctx) => {
  const out: Violation[] = [];
  if (ctx.chains.evm.length === 0) return out;
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
  const report = await reconcile({ db: ctx.db, adapters: new ChainRegistry(adapters) });
  for (const chain of report.chains)
    for (const d of chain.differences) {
      if (!d.failing) continue;
      out.push({
        invariant: JOURNAL,
        subject: d.address,
        message: `${chain.network}/${chain.mode} ${d.address} ${d.asset} at height ${chain.height}: books ${d.expected} (journal ${d.journal}, unacknowledged unexplained ${d.unexplained}), chain ${d.chain}, difference ${d.difference}`,
      });
    }
  return out;
};
