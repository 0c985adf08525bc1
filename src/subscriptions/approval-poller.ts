import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Mode } from '../../chains/vocabulary.js';
import { isAllowanceCharger, type AllowanceCharger, type ChainAdapter, type ObservedApproval } from '../../chains/types.js';
import { chainKey } from '../ledger/core/chain-ref.js';
import { SUBSCRIPTION_TRANSITIONS } from '../ledger/subscriptions/subscriptions.js';
import { applyAllowanceChange, applyApproval, type LifecycleDeps } from '../ledger/subscriptions/lifecycle.js';
import { loadApprovalCursor, saveApprovalCursor } from '../ledger/subscriptions/approval-cursors.js';
import type { Logger } from '../logger.js';
import type { WalletResolver } from './wallets.js';

// Detection of customers' authorizations, read up to the chain's final height (the same finality rule as deposits
// and charge outcomes, so a reorg within the confirmation depth never creates or revokes a payment method):
// - log families (EVM, TRON): Approval logs to a merchant's charger. Matched first to subscriptions whose page
//   selection waits for that wallet, network and token (a first authorization, or a re-authorization); otherwise to
//   payment methods in use: an Approval to 0 revokes one, a new positive one restores it (docs/subscriptions.md).
// - state families (Solana delegates): each waiting selection's token account is read at the final commitment.
// A poller of its own beside the deposit watcher: it needs spender-filtered logs only while someone is authorizing
// or a payment method is in use on the chain.

export interface ApprovalPollerDeps extends LifecycleDeps {
  adapters: ChainRegistry;
  walletResolver: WalletResolver;
  /** Blocks scanned per poll at most. */
  maxRange?: number;
  /** Where a chain's first scan starts, below its final height. */
  initialLookback?: bigint;
  /** State families: how often the payment methods in use are re-read for a replaced authorization (default 60 s). */
  authorizationCheckMs?: number;
  log?: Pick<Logger, 'info' | 'warn' | 'error'>;
}

type Waiting = { id: string; merchant_id: string; mode: Mode; auth_owner: string | null; auth_token: string | null };

export async function pollApprovals(deps: ApprovalPollerDeps): Promise<number> {
  let authorized = 0;
  for (const adapter of deps.adapters) {
    if (!isAllowanceCharger(adapter)) continue;
    const key = chainKey(adapter);
    // Head first, waiting selections second: an Approval in a block at or below this head was sent after its page
    // selection committed, so that selection is in the list read next.
    const head = await adapter.getHead();
    const waiting: Waiting[] = await deps.db
      .selectFrom('subscriptions')
      .select(['id', 'merchant_id', 'mode', 'auth_owner', 'auth_token'])
      .where('status', 'in', SUBSCRIPTION_TRANSITIONS.authorize)
      // A selection left without an authorization stops being watched after the time allowed to authorize.
      .where('auth_requested_at', '>', new Date(deps.clock.now().getTime() - deps.settings.incompleteExpiryMs))
      .where('auth_network', '=', adapter.network)
      .where('mode', '=', adapter.mode)
      .where('auth_owner', 'is not', null)
      .execute();
    if (adapter.scanApprovals) authorized += await scanLogs(deps, key, adapter, head.final, waiting);
    else if (adapter.readApproval) authorized += await readApprovalStates(deps, adapter, waiting);
    if (adapter.readAuthorizations && Date.now() - (lastStateCheck.get(key) ?? 0) >= (deps.authorizationCheckMs ?? 60_000)) {
      lastStateCheck.set(key, Date.now());
      await checkAuthorizationsInUse(deps, adapter);
    }
  }
  return authorized;
}

const lastStateCheck = new Map<string, number>();

/**
 * State families (Solana): the token accounts behind payment methods in use, read in batches at the final commitment.
 * Another delegate named by the customer (ours replaced) revokes the payment method; our charger named again restores
 * it. A delegation that is simply gone is left alone: our own charges clear it when they use it up, which the chain
 * cannot tell from a revoke; the next charge's pre-flight finds it either way.
 */
async function checkAuthorizationsInUse(deps: ApprovalPollerDeps, adapter: ChainAdapter & AllowanceCharger): Promise<void> {
  const pms = await deps.db
    .selectFrom('payment_methods as pm')
    .innerJoin('subscriptions as s', 's.payment_method_id', 'pm.id')
    .select(['pm.token', 'pm.owner_address', 'pm.spender_address', 'pm.status', 'pm.allowance_base'])
    .distinct()
    .where('pm.network', '=', adapter.network)
    .where('pm.mode', '=', adapter.mode)
    .where('s.status', 'in', ['trialing', 'active', 'past_due'])
    .execute();
  if (pms.length === 0) return;
  const states = await adapter.readAuthorizations!(pms.map((p) => ({ token: p.token, owner: p.owner_address })));
  for (const [i, p] of pms.entries()) {
    const st = states[i];
    if (!st || st.spender === null) continue;
    const ours = st.spender === p.spender_address;
    if (!ours && p.status === 'revoked') continue;
    if (ours && p.status === 'active' && st.value === p.allowance_base) continue;
    const changed = await applyAllowanceChange(deps, {
      network: adapter.network,
      mode: adapter.mode,
      token: p.token,
      owner: p.owner_address,
      spender: p.spender_address,
      value: ours ? st.value : 0n,
      txHash: `state:${adapter.network}:${p.owner_address}`,
    });
    if (changed > 0 && !ours)
      deps.log?.info({ owner: p.owner_address, token: p.token, delegate: st.spender }, 'authorization replaced by the customer');
  }
}

async function scanLogs(
  deps: ApprovalPollerDeps,
  key: string,
  adapter: ChainAdapter & AllowanceCharger,
  final: bigint,
  waiting: Waiting[],
): Promise<number> {
  let authorized = 0;
  const inUse = await deps.db
    .selectFrom('payment_methods as pm')
    .innerJoin('subscriptions as s', 's.payment_method_id', 'pm.id')
    .select('pm.spender_address')
    .distinct()
    .where('pm.network', '=', adapter.network)
    .where('pm.mode', '=', adapter.mode)
    .where('s.status', 'in', ['trialing', 'active', 'past_due'])
    .execute();
  const cursor = await loadApprovalCursor(deps.db, key);
  const lookback = deps.initialLookback ?? 5000n;
  let last = cursor ?? (final > lookback ? final - lookback : -1n);
  if ((waiting.length > 0 || inUse.length > 0) && last < final) {
    const chargers = new Map<string, string>();
    for (const p of waiting) chargers.set(p.id, (await deps.walletResolver.resolve(p.merchant_id, p.mode, adapter.network)).charger);
    const spenders = new Set([...chargers.values(), ...inUse.map((r) => r.spender_address)]);
    const step = BigInt(deps.maxRange ?? 2000);
    const to = final < last + step ? final : last + step;
    const approvals = await adapter.scanApprovals!(last + 1n, to, [...spenders]);
    for (const a of approvals) {
      let matched = false;
      for (const p of waiting) {
        if (p.auth_owner !== a.owner || p.auth_token !== a.token || chargers.get(p.id) !== a.spender) continue;
        const r = await apply(deps, adapter, p.id, a);
        if (r === 'authorized') {
          authorized++;
          matched = true;
        }
      }
      if (!matched) {
        const changed = await applyAllowanceChange(deps, {
          network: adapter.network,
          mode: adapter.mode,
          token: a.token,
          owner: a.owner,
          spender: a.spender,
          value: a.value,
          txHash: a.txHash,
        });
        if (changed > 0)
          deps.log?.info(
            { owner: a.owner, token: a.token, value: a.value.toString() },
            a.value === 0n ? 'allowance revoked by the customer' : 'allowance changed by the customer',
          );
      }
    }
    last = to;
  } else if (final > last) {
    last = final;
  }
  await saveApprovalCursor(deps.db, key, last);
  return authorized;
}

/** State families (Solana delegates): read each waiting owner's authorization of its merchant's charger at the final commitment. */
async function readApprovalStates(deps: ApprovalPollerDeps, adapter: ChainAdapter & AllowanceCharger, waiting: Waiting[]): Promise<number> {
  let authorized = 0;
  for (const p of waiting) {
    const token = p.auth_token ? deps.adapters.token(adapter.network, adapter.mode, p.auth_token) : undefined;
    if (!token || !p.auth_owner) continue;
    const w = await deps.walletResolver.resolve(p.merchant_id, p.mode, adapter.network);
    const a = await adapter.readApproval!(token.symbol, p.auth_owner, w.charger);
    if (a && (await apply(deps, adapter, p.id, a)) === 'authorized') authorized++;
  }
  return authorized;
}

async function apply(deps: ApprovalPollerDeps, adapter: ChainAdapter, subscriptionId: string, a: ObservedApproval) {
  const r = await applyApproval(deps, subscriptionId, {
    network: adapter.network,
    mode: adapter.mode,
    token: a.token,
    owner: a.owner,
    spender: a.spender,
    value: a.value,
    txHash: a.txHash,
    logIndex: a.logIndex,
  });
  if (r === 'too_small')
    deps.log?.info(
      { subscription_id: subscriptionId, value: a.value.toString() },
      'authorization smaller than the requested allowance; waiting for another',
    );
  return r;
}
