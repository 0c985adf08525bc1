import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChainRef } from '../core/chain-ref.js';
import type { ObservedDeposit } from '../core/observed-deposit.js';
import { EXTERNAL_ACCOUNT, addressAccount, journalAsset, transferLegs, type Movement } from './accounts.js';
import { ownTransactionHashes, recordMovements } from './entries.js';

// What the watcher sees move that is not a deposit: transfers into a registered wallet (a hot wallet topped up from
// outside) and transfers out of a deposit address or wallet, that the service did not send itself. Both are journaled
// as `unexplained` from the block they were seen in (reversed like deposits if a reorg removes it) and answered to
// the caller to flag (an error log line with the business ids, and a metric). Transactions the service sent (refund
// payouts, charges) are skipped here: their own completion journals them once final.

export interface UnexplainedMovement {
  entryId: bigint;
  direction: 'in' | 'out';
  /** Our address the value moved into or out of. */
  address: string;
  counterparty: string | null;
  txHash: string;
  logIndex: number;
  blockHeight: bigint;
  token: string;
  amount: bigint;
  merchantId: string | null;
  sessionId: string | null;
}

export async function journalObservedMovements(
  trx: Transaction<Database>,
  chain: ChainRef,
  items: { walletIncoming: readonly ObservedDeposit[]; outgoing: readonly ObservedDeposit[] },
): Promise<UnexplainedMovement[]> {
  const all = [...items.walletIncoming, ...items.outgoing].filter((t) => t.amount > 0n);
  if (all.length === 0) return [];
  const own = await ownTransactionHashes(
    trx,
    chain,
    all.map((t) => t.txHash),
  );
  const owners = await ownersOf(trx, chain, [...new Set(all.flatMap((t) => [t.to, t.from ?? '']))]);
  const movements: Array<{ m: Movement; u: Omit<UnexplainedMovement, 'entryId'> }> = [];
  const add = (t: ObservedDeposit, direction: 'in' | 'out') => {
    if (own.has(t.txHash) || t.amount === 0n) return;
    const address = direction === 'in' ? t.to : t.from!;
    const owner = owners.get(address);
    const ours = addressAccount(chain.network, chain.mode, address);
    const u = {
      direction,
      address,
      counterparty: direction === 'in' ? t.from : t.to,
      txHash: t.txHash,
      logIndex: t.logIndex,
      blockHeight: t.blockHeight,
      token: t.token,
      amount: t.amount,
      merchantId: owner?.merchantId ?? null,
      sessionId: owner?.sessionId ?? null,
    };
    const asset = journalAsset(chain.network, chain.mode, t.token);
    movements.push({
      u,
      m: {
        network: chain.network,
        mode: chain.mode,
        txHash: t.txHash,
        // A transfer between two of our addresses is one incoming and one outgoing record: distinct keys.
        legKey: `${direction}:log:${t.logIndex}`,
        kind: 'unexplained',
        blockHeight: t.blockHeight,
        blockHash: t.blockHash,
        merchantId: u.merchantId,
        sessionId: u.sessionId,
        object: owner?.sessionId ? { type: 'session', id: owner.sessionId } : { type: 'wallet', id: address },
        legs:
          direction === 'in'
            ? transferLegs(asset, EXTERNAL_ACCOUNT, ours, t.amount)
            : transferLegs(asset, ours, EXTERNAL_ACCOUNT, t.amount),
      },
    });
  };
  for (const t of items.walletIncoming) add(t, 'in');
  for (const t of items.outgoing) add(t, 'out');
  const written = await recordMovements(
    trx,
    movements.map((x) => x.m),
  );
  const byMovement = new Map(movements.map((x) => [x.m, x.u]));
  return written.map((w) => ({ entryId: w.entryId, ...byMovement.get(w.movement)! }));
}

/** The merchant (and session, for a deposit address) owning each of `addresses` on `chain`. */
async function ownersOf(
  trx: Transaction<Database>,
  chain: ChainRef,
  addresses: readonly string[],
): Promise<Map<string, { merchantId: string | null; sessionId: string | null }>> {
  const out = new Map<string, { merchantId: string | null; sessionId: string | null }>();
  const list = addresses.filter((a) => a !== '');
  if (list.length === 0) return out;
  const wallets = await trx
    .selectFrom('journal_wallets')
    .select(['address', 'merchant_id'])
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .where('address', 'in', list)
    .execute();
  for (const w of wallets) out.set(w.address, { merchantId: w.merchant_id, sessionId: null });
  const deposits = await trx
    .selectFrom('deposit_addresses as da')
    .innerJoin('payment_sessions as s', 's.id', 'da.session_id')
    .select(['da.address', 's.merchant_id', 's.id'])
    .where('da.network', '=', chain.network)
    .where('da.mode', '=', chain.mode)
    .where('da.address', 'in', list)
    .execute();
  for (const d of deposits) out.set(d.address, { merchantId: d.merchant_id, sessionId: d.id });
  return out;
}
