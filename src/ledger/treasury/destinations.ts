import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.js';
import type { SweepPoliciesTable, TreasuryDestinationChangesTable, TreasuryDestinationsTable } from '../../db/treasury-tables.js';
import type { Mode, NetworkId, TokenSymbol } from '../../../chains/vocabulary.js';

// Treasury destinations (where a merchant's swept money goes) and sweep policies (when it is worth sweeping). Every
// change of a destination writes its audit row (who, when, old, new) in the same transaction.

export type TreasuryDestination = Selectable<TreasuryDestinationsTable>;
export type TreasuryDestinationChange = Selectable<TreasuryDestinationChangesTable>;
export type SweepPolicyRow = Selectable<SweepPoliciesTable>;

export interface DestinationChange {
  merchantId: string;
  network: NetworkId;
  mode: Mode;
  /** Canonical address (validated by the network's adapter), or null: sweeps go to the refunds hot wallet. */
  treasuryAddress: string | null;
  /** Unchanged when undefined. */
  hotFloatMinor?: bigint;
  actor: string;
}

/** Sets a destination and writes its audit row, in one transaction. Answers the new row and the audit row. */
export async function setTreasuryDestination(
  db: Db,
  c: DestinationChange,
): Promise<{ destination: TreasuryDestination; change: TreasuryDestinationChange }> {
  return db.transaction().execute(async (trx) => {
    const old = await trx
      .selectFrom('treasury_destinations')
      .selectAll()
      .where('merchant_id', '=', c.merchantId)
      .where('network', '=', c.network)
      .where('mode', '=', c.mode)
      .forUpdate()
      .executeTakeFirst();
    const hotFloat = c.hotFloatMinor ?? old?.hot_float_minor ?? 0n;
    const destination = await trx
      .insertInto('treasury_destinations')
      .values({
        merchant_id: c.merchantId,
        network: c.network,
        mode: c.mode,
        treasury_address: c.treasuryAddress,
        hot_float_minor: hotFloat,
        updated_by: c.actor,
      })
      .onConflict((oc) =>
        oc.columns(['merchant_id', 'network', 'mode']).doUpdateSet({
          treasury_address: c.treasuryAddress,
          hot_float_minor: hotFloat,
          updated_by: c.actor,
          updated_at: new Date(),
        }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    const change = await trx
      .insertInto('treasury_destination_changes')
      .values({
        merchant_id: c.merchantId,
        network: c.network,
        mode: c.mode,
        actor: c.actor,
        old_treasury_address: old?.treasury_address ?? null,
        new_treasury_address: c.treasuryAddress,
        old_hot_float_minor: old?.hot_float_minor ?? null,
        new_hot_float_minor: hotFloat,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { destination, change };
  });
}

export async function treasuryDestination(
  db: Db,
  merchantId: string,
  network: NetworkId,
  mode: Mode,
): Promise<TreasuryDestination | undefined> {
  return db
    .selectFrom('treasury_destinations')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .where('network', '=', network)
    .where('mode', '=', mode)
    .executeTakeFirst();
}

export async function listTreasuryDestinations(db: Db, merchantId?: string): Promise<TreasuryDestination[]> {
  let q = db.selectFrom('treasury_destinations').selectAll();
  if (merchantId) q = q.where('merchant_id', '=', merchantId);
  return q.orderBy('merchant_id').orderBy('network').orderBy('mode').execute();
}

export async function treasuryDestinationChanges(db: Db, merchantId: string, limit = 20): Promise<TreasuryDestinationChange[]> {
  return db
    .selectFrom('treasury_destination_changes')
    .selectAll()
    .where('merchant_id', '=', merchantId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function sweepPolicyRow(db: Db, network: NetworkId, mode: Mode, token: TokenSymbol): Promise<SweepPolicyRow | undefined> {
  return db
    .selectFrom('sweep_policies')
    .selectAll()
    .where('network', '=', network)
    .where('mode', '=', mode)
    .where('token', '=', token)
    .executeTakeFirst();
}

export async function setSweepPolicy(
  db: Db,
  p: { network: NetworkId; mode: Mode; token: TokenSymbol; minAmountBase: bigint; maxFeeBps: number; actor: string },
): Promise<SweepPolicyRow> {
  const values = { min_amount_base: p.minAmountBase, max_fee_bps: p.maxFeeBps, updated_by: p.actor };
  return db
    .insertInto('sweep_policies')
    .values({ network: p.network, mode: p.mode, token: p.token, ...values })
    .onConflict((oc) => oc.columns(['network', 'mode', 'token']).doUpdateSet({ ...values, updated_at: new Date() }))
    .returningAll()
    .executeTakeFirstOrThrow();
}
