import type { Kysely } from 'kysely';
import type { ChainRegistry } from '../../chains/chain-registry.js';
import type { Database } from '../db/schema.js';
import { formatBaseUnits } from '../domain/money.js';
import { chainKey } from '../ledger/core/chain-ref.js';
import type { SessionRow } from '../ledger/payments/sessions.js';
import { computeLiveStatus, type ChainProgress, type LiveStatus, type PendingDeposit } from './live-status.js';

// Read-only queries behind the hosted page. A session is looked up by its id alone (the id is the capability the
// payer holds); nothing here returns or renders merchant ids, metadata, order ids or other sessions.

export const SESSION_ID = /^[A-Za-z0-9_]{1,255}$/;

export interface PageSession {
  row: SessionRow;
  merchantName: string;
}

export async function loadPageSession(db: Kysely<Database>, id: string): Promise<PageSession | undefined> {
  if (!SESSION_ID.test(id)) return undefined;
  const r = await db
    .selectFrom('payment_sessions')
    .innerJoin('merchants', 'merchants.id', 'payment_sessions.merchant_id')
    .selectAll('payment_sessions')
    .select('merchants.name as merchant_name')
    .where('payment_sessions.id', '=', id)
    .executeTakeFirst();
  if (!r) return undefined;
  const { merchant_name, ...row } = r;
  return { row: row as SessionRow, merchantName: merchant_name };
}

export interface LiveDeps {
  db: Kysely<Database>;
  /** The configured chains, with the confirmation depth each shows ("n of N"). */
  adapters: ChainRegistry;
}

function chainProgressOf(deps: LiveDeps, row: SessionRow, tipHeight: bigint | null): ChainProgress | null {
  if (!row.network || !row.token) return null;
  const token = deps.adapters.token(row.network, row.mode, row.token);
  if (!token) return null;
  return { decimals: token.decimals, tipHeight, requiredConfirmations: deps.adapters.confirmations(row.network, row.mode) };
}

export async function liveStatusOf(deps: LiveDeps, row: SessionRow, paths: { returnPath: string }): Promise<LiveStatus> {
  let pending: PendingDeposit[] = [];
  let tip: bigint | null = null;
  if (row.deposit_address && row.network && row.status !== 'paid' && row.status !== 'canceled') {
    const t = deps.db;
    const [deposits, cursor] = await Promise.all([
      t
        .selectFrom('deposits')
        .select(['network', 'token', 'amount_base', 'block_number'])
        .where('session_id', '=', row.id)
        .where('status', '=', 'provisional')
        // A look-alike (USDbC, USDC.e) never counts: the page does not show it as a payment on its way.
        .where('unmatched_reason', 'is distinct from', 'unsupported_token')
        .execute(),
      t
        .selectFrom('chain_cursors')
        .select('tip_height')
        .where('chain_key', '=', chainKey({ network: row.network, mode: row.mode }))
        .executeTakeFirst(),
    ]);
    pending = deposits.map((d) => ({ network: d.network, token: d.token, amount: d.amount_base, blockNumber: d.block_number }));
    tip = cursor?.tip_height ?? null;
  }
  return computeLiveStatus(row, pending, chainProgressOf(deps, row, tip), paths);
}

/** One confirmed transfer credited to the session, as the paid page lists it. */
export interface ArrivedTransfer {
  network: string;
  token: string;
  /** Token units, decimal string. */
  amount: string;
  txHash: string;
  /** The transaction's explorer page (CHAIN_<NET>_<MODE>_EXPLORER_TX_URL or its default), null when none. */
  explorerUrl: string | null;
}

/** What arrived for a session: its confirmed, credited transfers in chain order. */
export async function arrivedTransfers(deps: LiveDeps, row: SessionRow): Promise<ArrivedTransfer[]> {
  const rows = await deps.db
    .selectFrom('deposits')
    .select(['network', 'token', 'amount_base', 'tx_hash'])
    .where('session_id', '=', row.id)
    .where('status', '=', 'confirmed')
    .where('disposition', '=', 'credited')
    .orderBy('block_number')
    .orderBy('log_index')
    .execute();
  return rows.flatMap((d) => {
    const decimals = deps.adapters.tokenDecimals(d.network, row.mode, d.token);
    if (decimals === undefined) return [];
    return [
      {
        network: d.network,
        token: d.token,
        amount: formatBaseUnits(d.amount_base, decimals),
        txHash: d.tx_hash,
        explorerUrl: deps.adapters.explorerTxUrl(d.network, row.mode, d.tx_hash),
      },
    ];
  });
}

export async function reloadSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('payment_sessions').selectAll().where('id', '=', id).executeTakeFirst();
}
