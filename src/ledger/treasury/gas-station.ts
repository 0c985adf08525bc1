import { sql, type Selectable, type Transaction } from 'kysely';
import type { Mode, NetworkId } from '../../../chains/vocabulary.js';
import type { Db } from '../../db/database.js';
import type { GasStationDrainsTable, GasStationGenerationsTable } from '../../db/gas-station-tables.js';
import type { Database } from '../../db/schema.js';
import { chainKey } from '../core/chain-ref.js';
import { addressAccount, feeLegs, journalAsset, transferLegs } from '../journal/accounts.js';
import { recordMovement, registerWallets } from '../journal/entries.js';
import { GAS_STATION_DRAIN_ATTEMPTS, blockingAttemptIdsOf, setAttemptStateOf } from '../outbound/attempt-store.js';

// The gas station's generations and drains (docs/treasury.md, "Rotating the gas station"). The current gas station of
// a network and mode is the newest `gas_station_generations` row (none: generation 0); the treasury (planner, operator
// wallets) and the signer (which derives the gas station itself to check sweep steps) both read it here, so they never
// disagree. A rotation writes the new generation (its audit: who, when, why, both addresses) and, in the same
// transaction, the drain of the retired generation: an outbound job (src/treasury/gas-station-drain.ts) that sends its
// native coin, minus the drain's own fee, to the new gas station. Settling a drain journals it (kind `sweep`, object
// the retired wallet: operator money moving between two watched wallets, and the fee it burnt).

type Executor = Db | Transaction<Database>;

export type GasStationGenerationRow = Selectable<GasStationGenerationsTable>;
export type GasStationDrainRow = Selectable<GasStationDrainsTable>;

/**
 * The HD slot (under OPERATOR_ACCOUNT, change 1) of gas-station generation `g`: 0 for generation 0 (OPERATOR_SLOT
 * .gasStation, what every deployment used before rotations), then g + 1 (2, 3, ...), so that no generation ever takes
 * slot 1 (OPERATOR_SLOT.resources, TRON's staked account).
 */
export function gasStationSlot(generation: number): number {
  if (!Number.isInteger(generation) || generation < 0) throw new Error(`gas-station generation ${generation} is not a whole number ≥ 0`);
  return generation === 0 ? 0 : generation + 1;
}

export interface GasStationGeneration {
  generation: number;
  slot: number;
}

/** The current gas station's generation and HD slot on `network` and `mode` (generation 0, slot 0, without a rotation). */
export async function currentGasStationSlot(db: Executor, network: NetworkId, mode: Mode): Promise<GasStationGeneration> {
  const row = await db
    .selectFrom('gas_station_generations')
    .select(['generation', 'slot'])
    .where('network', '=', network)
    .where('mode', '=', mode)
    .orderBy('generation', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { generation: row.generation, slot: row.slot } : { generation: 0, slot: gasStationSlot(0) };
}

/** Every rotation of `network` and `mode`, oldest first (the audit). */
export async function gasStationRotations(db: Executor, network: NetworkId, mode: Mode): Promise<GasStationGenerationRow[]> {
  return db
    .selectFrom('gas_station_generations')
    .selectAll()
    .where('network', '=', network)
    .where('mode', '=', mode)
    .orderBy('generation')
    .execute();
}

export interface RotationInput {
  network: NetworkId;
  mode: Mode;
  /** The generation being retired, as the caller read it: the rotation is refused if another one got there first. */
  from: { generation: number; address: string };
  /** Whether the retired generation is drained (false where the chain has no drain builder). */
  drainFrom: boolean;
  /** The new generation's address (derived at gasStationSlot(from.generation + 1)). */
  to: { address: string };
  actor: string;
  note: string | null;
  /** Older generations (below `from`) that still hold coin worth draining, with their addresses. */
  alsoDrain: ReadonlyArray<{ generation: number; address: string }>;
}

/**
 * Writes the new generation and the drains of the retired generation (and of `alsoDrain`) in one transaction; the new
 * gas station is registered as a watched wallet (the retired ones stay registered). null when the current generation
 * is no longer `from` (a concurrent rotation).
 */
export async function recordRotation(
  db: Db,
  i: RotationInput,
): Promise<{ generation: GasStationGenerationRow; drains: GasStationDrainRow[] } | null> {
  return db.transaction().execute(async (trx) => {
    // One rotation at a time per network and mode: the advisory lock, then the generation re-read under it.
    await sql`select pg_advisory_xact_lock(hashtext(${`gas-station:${chainKey(i)}`}))`.execute(trx);
    const current = await currentGasStationSlot(trx, i.network, i.mode);
    if (current.generation !== i.from.generation) return null;
    const generation = i.from.generation + 1;
    const row = await trx
      .insertInto('gas_station_generations')
      .values({
        network: i.network,
        mode: i.mode,
        generation,
        slot: gasStationSlot(generation),
        address: i.to.address,
        previous_address: i.from.address,
        actor: i.actor,
        note: i.note,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await registerWallets(trx, [
      { network: i.network, mode: i.mode, address: i.from.address, merchantId: null, role: 'gas_station' },
      { network: i.network, mode: i.mode, address: i.to.address, merchantId: null, role: 'gas_station' },
    ]);
    const drains: GasStationDrainRow[] = [];
    for (const d of [...(i.drainFrom ? [i.from] : []), ...i.alsoDrain]) {
      const created = await insertDrain(trx, {
        network: i.network,
        mode: i.mode,
        from: d,
        to: { generation, address: i.to.address },
        actor: i.actor,
      });
      if (created) drains.push(created);
    }
    return { generation: row, drains };
  });
}

/** A drain of a retired generation (`processing`); undefined when one of that generation is already open. */
export async function insertDrain(
  db: Executor,
  d: {
    network: NetworkId;
    mode: Mode;
    from: { generation: number; address: string };
    to: { generation: number; address: string };
    actor: string;
  },
): Promise<GasStationDrainRow | undefined> {
  return db
    .insertInto('gas_station_drains')
    .values({
      network: d.network,
      mode: d.mode,
      from_generation: d.from.generation,
      from_address: d.from.address,
      to_generation: d.to.generation,
      to_address: d.to.address,
      actor: d.actor,
    })
    .onConflict((oc) => oc.columns(['network', 'mode', 'from_generation']).where('status', '=', 'processing').doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function drainById(db: Executor, id: string): Promise<GasStationDrainRow | undefined> {
  if (!/^[0-9]{1,18}$/.test(id)) return undefined;
  return db.selectFrom('gas_station_drains').selectAll().where('id', '=', BigInt(id)).executeTakeFirst();
}

/** Drains of `network` and `mode` (every network and mode without them), newest first. */
export async function listDrains(
  db: Executor,
  q: { network?: NetworkId; mode?: Mode; status?: 'processing' } = {},
): Promise<GasStationDrainRow[]> {
  let query = db.selectFrom('gas_station_drains').selectAll();
  if (q.network) query = query.where('network', '=', q.network);
  if (q.mode) query = query.where('mode', '=', q.mode);
  if (q.status) query = query.where('status', '=', q.status);
  return query.orderBy('id', 'desc').execute();
}

/** The drain row locked for signing, if still processing. */
export async function lockProcessingDrain(trx: Transaction<Database>, id: bigint): Promise<GasStationDrainRow | undefined> {
  return trx
    .selectFrom('gas_station_drains')
    .selectAll()
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .forUpdate()
    .executeTakeFirst();
}

export interface LandedDrain {
  attemptId: bigint;
  txHash: string;
  block: { height: bigint; hash: string };
  /** Native base units that reached the new gas station, and the fee the retired one paid. */
  amount: bigint;
  fee: bigint;
}

/**
 * processing → succeeded, the attempt confirmed (others replaced), and the journal entry: retired gas station → new gas
 * station for the amount, retired gas station → fees:<network> for the fee. False when already settled.
 */
export async function settleDrain(db: Db, id: bigint, landed: LandedDrain): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const drain = await lockProcessingDrain(trx, id);
    if (!drain) return false;
    await setAttemptStateOf(trx, GAS_STATION_DRAIN_ATTEMPTS, landed.attemptId, 'confirmed');
    await trx
      .updateTable('gas_station_drain_attempts')
      .set({ state: 'replaced', settled_at: sql`now()` })
      .where('drain_id', '=', id)
      .where('id', '!=', landed.attemptId)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await trx
      .updateTable('gas_station_drains')
      .set({ status: 'succeeded', tx_hash: landed.txHash, amount: landed.amount, fee: landed.fee, settled_at: sql`now()` })
      .where('id', '=', id)
      .execute();
    const chain = { network: drain.network, mode: drain.mode };
    await recordMovement(trx, {
      ...chain,
      txHash: landed.txHash,
      legKey: 'drain',
      kind: 'sweep',
      blockHeight: landed.block.height,
      blockHash: landed.block.hash,
      merchantId: null,
      object: { type: 'wallet', id: drain.from_address },
      legs: [
        ...transferLegs(
          journalAsset(chain.network, chain.mode, 'native'),
          addressAccount(chain.network, chain.mode, drain.from_address),
          addressAccount(chain.network, chain.mode, drain.to_address),
          landed.amount,
        ),
        ...feeLegs(chain, drain.from_address, landed.fee),
      ],
    });
    return true;
  });
}

/**
 * processing → skipped (nothing worth draining) or failed, with a reason; live attempts are closed. `unsent`: refused
 * or found unneeded before this run signed anything: only while no attempt of another run can still land.
 */
export async function closeDrain(
  db: Db,
  id: bigint,
  status: 'skipped' | 'failed',
  reason: string,
  opts: { unsent?: boolean } = {},
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const drain = await lockProcessingDrain(trx, id);
    if (!drain) return false;
    if (opts.unsent && (await blockingAttemptIdsOf(trx, GAS_STATION_DRAIN_ATTEMPTS, id)).length > 0) return false;
    await trx
      .updateTable('gas_station_drain_attempts')
      .set({ state: 'failed', settled_at: sql`now()`, detail: reason })
      .where('drain_id', '=', id)
      .where('state', 'in', ['signed', 'broadcast'])
      .execute();
    await trx
      .updateTable('gas_station_drains')
      .set({ status, failure_reason: reason, settled_at: sql`now()` })
      .where('id', '=', id)
      .execute();
    return true;
  });
}
