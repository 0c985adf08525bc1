import type { ChainRegistry } from '../../chains/chain-registry.js';
import { registerWallets } from '../ledger/journal/entries.js';
import { HOT_WALLET_SLOT, type ChainAdapter, type KeyDeriver } from '../../chains/types.js';
import { openRegisteredWallets } from '../reconcile/openings.js';
import type { Db } from '../db/database.js';
import type { Mode } from '../db/schema.js';
import { formatBaseUnits, formatMinor } from '../domain/money.js';
import { STABLECOIN_EXPONENT } from '../../chains/vocabulary.js';
import { listUnmatchedDeposits } from '../ledger/payments/deposits.js';
import { findMerchantRefund, retryRefund } from '../operations/refunds-actions.js';
import { usageOfRefusal } from './refusal-usage.js';
import { walletNonceStates, type WalletNonceState } from '../ledger/outbound/wallet-nonce-guard.js';
import { UsageError, options, print, required } from './args.js';
import { MONEY_BACK_USAGE, refundToCustomer } from './money-back.js';
import { WALLET_GUARD_USAGE, walletGuardCli } from './wallet-guard.js';

export interface PayoutCliContext {
  db: Db;
  /** The configured chains (created lazily: only these commands need RPC). */
  adapters: () => Promise<ChainRegistry>;
  keys: KeyDeriver | null;
  /** Queues a refund's payout job. */
  enqueue: (refundId: string) => Promise<void>;
  out?: (value: unknown) => void;
}

export const PAYOUTS_USAGE = `payouts wallets [--merchant <id>]              hot-wallet addresses, balances (gas and tokens) and nonces per chain
payouts pending [--merchant <id>]              refunds waiting to be paid, with their on-chain attempts
payouts retry <refund_id> --merchant <id>      pay a failed refund again, as a new refund (<refund_id>-retry-N)
${WALLET_GUARD_USAGE}
deposits unmatched [--network <n>] [--mode test|live] [--limit N]`;

/** How long `payouts wallets` waits for a TRON/Solana final state covering the registration (opening balances). */
const OPENING_WAIT_MS = 90_000;

// Operator commands for refund payouts (issue 5) and unmatched deposits (issue 3).
export async function payoutsCli(args: string[], ctx: PayoutCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  switch (sub) {
    case 'wallets': {
      const { values } = options(rest, { merchant: { type: 'string' } });
      if (!ctx.keys) throw new UsageError('wallets needs HD_MNEMONIC or HD_ACCOUNT_XPUBS to derive the hot-wallet addresses');
      let q = ctx.db
        .selectFrom('merchant_hd_accounts as a')
        .innerJoin('merchants as m', 'm.id', 'a.merchant_id')
        .select(['a.merchant_id', 'a.mode', 'a.account_index', 'm.name']);
      if (values.merchant) q = q.where('a.merchant_id', '=', values.merchant);
      const accounts = await q.orderBy('a.merchant_id').orderBy('a.mode').execute();
      const adapters = await ctx.adapters();
      const nonces = await walletNonceStates(ctx.db);
      const rows = [];
      const registered = new Set<ChainAdapter>();
      for (const acc of accounts) {
        for (const adapter of adapters) {
          if (adapter.mode !== acc.mode) continue;
          const wallet = await adapter.deriveHotWallet(ctx.keys, acc.account_index, HOT_WALLET_SLOT.refunds);
          // Shown to be funded: watched from now on, so its top-ups are journaled (docs/journal.md).
          await registerWallets(ctx.db, [
            { network: adapter.network, mode: acc.mode, address: wallet.address, merchantId: acc.merchant_id, role: 'refunds' },
          ]);
          registered.add(adapter);
          const balances = await adapter.getBalances(wallet.address).catch((e: Error) => ({ error: e.message }));
          const resources = adapter.describeFeeResources
            ? await adapter.describeFeeResources(wallet.address).catch((e: Error) => ({ error: e.message }))
            : undefined;
          rows.push({
            merchant_id: acc.merchant_id,
            merchant: acc.name,
            mode: acc.mode,
            network: adapter.network,
            address: adapter.displayAddress(wallet.address),
            ...('error' in balances
              ? { error: balances.error }
              : {
                  native_base_units: balances.native.toString(),
                  tokens: Object.fromEntries(
                    adapter.tokens.map((t) => [t.symbol, formatBaseUnits(balances.tokens[t.symbol] ?? 0n, t.decimals)]),
                  ),
                }),
            ...(resources ? { fee_resources: resources } : {}),
            ...nonceFields(nonces, adapter.network, acc.mode, wallet.address),
          });
        }
      }
      // TRON and Solana keep no state by height: their opening balances are booked now, before any funding
      // (docs/journal.md "Native balances"); a chain not ready in time leaves it to the first reconcile.
      for (const adapter of registered) await openRegisteredWallets(ctx.db, adapter, OPENING_WAIT_MS).catch(() => []);
      out(rows);
      return;
    }
    case 'pending': {
      const { values } = options(rest, { merchant: { type: 'string' } });
      let q = ctx.db.selectFrom('refunds').selectAll().where('status', 'in', ['pending', 'processing']);
      if (values.merchant) q = q.where('merchant_id', '=', values.merchant);
      const refunds = await q.orderBy('created_at').limit(500).execute();
      const attempts = refunds.length
        ? await ctx.db
            .selectFrom('payout_attempts')
            .select(['refund_id', 'tx_hash', 'nonce', 'state', 'fee_bump_percent', 'created_at'])
            .where(
              'refund_id',
              'in',
              refunds.map((r) => r.id),
            )
            .orderBy('id')
            .execute()
        : [];
      out(
        refunds.map((r) => ({
          id: r.id,
          refund_id: r.refund_id,
          merchant_id: r.merchant_id,
          mode: r.mode,
          network: r.network,
          token: r.token,
          amount: r.amount_minor.toString(),
          status: r.status,
          created_at: r.created_at,
          signed_at: r.signed_at,
          attempts: attempts.filter((a) => a.refund_id === r.id).map((a) => ({ ...a, nonce: a.nonce?.toString() ?? null })),
        })),
      );
      return;
    }
    case 'retry': {
      const { values, positionals } = options(rest, { merchant: { type: 'string' } });
      const refundId = positionals[0];
      if (!refundId) throw new UsageError('payouts retry <refund_id> --merchant <id>');
      const merchantId = required(values.merchant, 'merchant');
      const old = await findMerchantRefund(ctx.db, merchantId, refundId);
      if (!old) throw new UsageError(`no refund ${refundId} of merchant ${merchantId}`);
      const { refund } = await retryRefund({ db: ctx.db, chains: ctx.adapters, enqueuePayout: ctx.enqueue }, old, refundId).catch(
        usageOfRefusal,
      );
      out({ retried: old.refund_id, refund_id: refund.refund_id, id: refund.id, status: refund.status });
      return;
    }
    default:
      if (await walletGuardCli(sub, rest, ctx)) return;
      throw new UsageError(PAYOUTS_USAGE);
  }
}

export async function depositsCli(args: string[], ctx: PayoutCliContext): Promise<void> {
  const out = ctx.out ?? print;
  const [sub, ...rest] = args;
  if (sub === 'refund') return refundToCustomer('deposit', rest, ctx);
  if (sub !== 'unmatched') throw new UsageError(`${PAYOUTS_USAGE}\n${MONEY_BACK_USAGE}`);
  const { values } = options(rest, { network: { type: 'string' }, mode: { type: 'string' }, limit: { type: 'string' } });
  if (values.mode !== undefined && values.mode !== 'test' && values.mode !== 'live') throw new UsageError('--mode must be test or live');
  const limit = values.limit === undefined ? 100 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be an integer 1..10000');
  const rows = await listUnmatchedDeposits(ctx.db, { mode: values.mode as Mode | undefined, network: values.network, limit });
  // Each deposit's refunds (`deposits refund`), so the operator sees what was already paid back.
  const refunds = rows.length
    ? await ctx.db
        .selectFrom('refunds')
        .select(['deposit_id', 'refund_id', 'status', 'amount_minor', 'transaction_hash'])
        .where(
          'deposit_id',
          'in',
          rows.map((r) => r.id),
        )
        .orderBy('created_at')
        .execute()
    : [];
  out(
    rows.map((r) => ({
      ...r,
      amountBase: r.amountBase.toString(),
      refunds: refunds
        .filter((f) => f.deposit_id === r.id)
        .map((f) => ({
          refund_id: f.refund_id,
          status: f.status,
          amount: formatMinor(f.amount_minor, STABLECOIN_EXPONENT),
          transaction_hash: f.transaction_hash,
        })),
    })),
  );
}

/**
 * The wallet's nonce row, if it ever sent: the next nonce the gateway signs, and when the chain was seen ahead of it
 * (transactions the ledger does not know: nothing is signed from the wallet until `payouts wallet-accept-nonce`).
 */
function nonceFields(nonces: WalletNonceState[], network: string, mode: string, address: string) {
  const w = nonces.find((n) => n.network === network && n.mode === mode && n.address === address);
  if (!w) return {};
  return {
    next_nonce: w.nextNonce.toString(),
    unknown_transactions: w.unknown ? { chain_nonce: w.unknown.chainNonce.toString(), since: w.unknown.since.toISOString() } : null,
  };
}
