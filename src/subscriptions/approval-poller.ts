import { isAllowanceCharger, type AllowanceCharger, type ChainAdapter } from '../../chains/types.js';
import { applyApproval, type LifecycleDeps } from '../ledger/subscriptions-lifecycle.js';
import type { Logger } from '../logger.js';
import type { WalletResolver } from './wallets.js';

// Detection of customers' authorizations: Approval logs to a merchant's charger, read up to the chain's final
// height, matched to incomplete subscriptions whose page selection named that wallet, network and token. A small
// poller of its own beside the deposit watcher: it needs spender-filtered logs only while someone is authorizing.

export interface ApprovalPollerDeps extends LifecycleDeps {
  adapters: ReadonlyMap<string, ChainAdapter>;
  walletResolver: WalletResolver;
  /** Blocks scanned per poll at most. */
  maxRange?: number;
  /** Where a chain's first scan starts, below its final height. */
  initialLookback?: bigint;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

export async function pollApprovals(deps: ApprovalPollerDeps): Promise<number> {
  let authorized = 0;
  for (const [key, adapter] of deps.adapters) {
    if (!isAllowanceCharger(adapter)) continue;
    // Head first, pending authorizations second: an Approval in a block at or below this head was sent after its
    // page selection committed, so that selection is in the list read next.
    const head = await adapter.getHead();
    const pending = await deps.db
      .selectFrom('subscriptions')
      .select(['id', 'merchant_id', 'mode', 'auth_owner', 'auth_token'])
      .where('status', '=', 'incomplete')
      .where('auth_network', '=', adapter.network)
      .where('mode', '=', adapter.mode)
      .where('auth_owner', 'is not', null)
      .execute();
    if (!adapter.scanApprovals) {
      if (adapter.readApproval) authorized += await readApprovalStates(deps, adapter, pending);
      continue;
    }
    const cursorRow = await deps.db.selectFrom('approval_scan_cursors').select('last_block').where('chain_key', '=', key).executeTakeFirst();
    const lookback = deps.initialLookback ?? 5000n;
    let last = cursorRow?.last_block ?? (head.final > lookback ? head.final - lookback : -1n);
    if (pending.length > 0 && last < head.final) {
      const chargers = new Map<string, string>();
      for (const p of pending) {
        const w = await deps.walletResolver.resolve(p.merchant_id, p.mode, adapter.network);
        chargers.set(p.id, w.charger);
      }
      const to = head.final < last + BigInt(deps.maxRange ?? 2000) ? head.final : last + BigInt(deps.maxRange ?? 2000);
      const approvals = await adapter.scanApprovals(last + 1n, to, [...new Set(chargers.values())]);
      for (const a of approvals) {
        for (const p of pending) {
          if (p.auth_owner !== a.owner || p.auth_token !== a.token || chargers.get(p.id) !== a.spender) continue;
          const r = await applyApproval(deps, p.id, { network: adapter.network, mode: adapter.mode, token: a.token, owner: a.owner, spender: a.spender, value: a.value, txHash: a.txHash, logIndex: a.logIndex });
          if (r === 'authorized') authorized++;
          else if (r === 'too_small') deps.log?.info({ subscription: p.id, value: a.value.toString() }, 'approval smaller than the requested allowance; waiting for another');
        }
      }
      last = to;
    } else if (head.final > last) {
      last = head.final;
    }
    await deps.db
      .insertInto('approval_scan_cursors')
      .values({ chain_key: key, last_block: last })
      .onConflict((oc) => oc.column('chain_key').doUpdateSet({ last_block: last, updated_at: new Date() }))
      .execute();
  }
  return authorized;
}

type PendingAuthorization = { id: string; merchant_id: string; mode: 'test' | 'live'; auth_owner: string | null; auth_token: string | null };

/** State families (Solana delegates): read each pending owner's authorization of its merchant's charger at the final commitment. */
async function readApprovalStates(deps: ApprovalPollerDeps, adapter: ChainAdapter & AllowanceCharger, pending: PendingAuthorization[]): Promise<number> {
  let authorized = 0;
  for (const p of pending) {
    const token = adapter.tokens.find((t) => t.symbol === p.auth_token);
    if (!token || !p.auth_owner) continue;
    const w = await deps.walletResolver.resolve(p.merchant_id, p.mode, adapter.network);
    const a = await adapter.readApproval!(token.symbol, p.auth_owner, w.charger);
    if (!a) continue;
    const r = await applyApproval(deps, p.id, { network: adapter.network, mode: adapter.mode, token: a.token, owner: a.owner, spender: a.spender, value: a.value, txHash: a.txHash, logIndex: a.logIndex });
    if (r === 'authorized') authorized++;
    else if (r === 'too_small') deps.log?.info({ subscription: p.id, value: a.value.toString() }, 'delegated amount smaller than the requested allowance; waiting for another');
  }
  return authorized;
}
