import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { JournalKind, JournalObjectType } from '../../db/journal-tables.js';
import type { Mode } from '../../../chains/vocabulary.js';
import { chainKey, type ChainRef } from '../core/chain-ref.js';
import { EXTERNAL_ACCOUNT, addressPrefix, assetPrefix, feeLegs, normalizeLegs, type JournalLeg, type Movement } from './accounts.js';

// The double-entry journal of on-chain movements (docs/journal.md). This file is its only writer. A movement is one
// entry of balanced legs in base units: for each asset the legs sum to zero. Accounts:
//   address:<network>:<mode>:<address>   an address we control (deposit address, hot wallet, charger, treasury)
//   external                              anyone else (payers, refund recipients, whoever moved funds in or out)
//   fees:<network>                        network fees burnt (gas, energy, Solana fees, rent paid)
// An asset is `<network>:<mode>:<token symbol>` or `<network>:<mode>:native` (the coin fees are paid in).
// Entries are idempotent on (network, mode, tx hash, leg key): recording the same movement again writes nothing.
// Entries the watcher recorded from blocks a reorg removed are reversed by new entries (same height, negated legs,
// `reverses_id` naming the original); nothing is ever updated or deleted (triggers refuse it). A movement reversed and
// then seen again in the new branch is recorded once more, as the next revision of its key.
/**
 * Records one movement in the caller's transaction (the same one as the business write it belongs to). Answers the
 * new entry's id, or null when the movement was already recorded (or moves nothing).
 */
export async function recordMovement(trx: Transaction<Database>, movement: Movement): Promise<bigint | null> {
  const [r] = await recordMovements(trx, [movement]);
  return r?.entryId ?? null;
}

/**
 * recordMovement for many movements: one statement writes the entries and their legs (two when some keys were
 * recorded before). Answers the movements written, with their ids, in the order given.
 */
export async function recordMovements(
  trx: Transaction<Database>,
  movements: readonly Movement[],
): Promise<Array<{ movement: Movement; entryId: bigint }>> {
  const items = movements.map((m) => ({ m, legs: normalizeLegs(m.legs) })).filter((x) => x.legs.length > 0);
  if (items.length === 0) return [];
  // Nearly every movement is new: written at revision 0 without looking anything up, its key's unique index deciding.
  // The few whose key is taken (recorded already, or reversed by a reorg and seen again) are looked at once more.
  const fresh = await insertEntries(trx, items, 'first');
  if (fresh.length === items.length) return fresh.map((w) => ({ movement: w.item.m, entryId: w.entryId }));
  const done = new Set(fresh.map((w) => w.item));
  const again = await insertEntries(
    trx,
    items.filter((x) => !done.has(x)),
    'next',
  );
  const order = new Map(items.map((x, i) => [x, i]));
  return [...fresh, ...again]
    .sort((a, b) => order.get(a.item)! - order.get(b.item)!)
    .map((w) => ({ movement: w.item.m, entryId: w.entryId }));
}

/**
 * recordMovements for movements whose key is known to be taken (a deposit revived after a reorg reversed its entry):
 * one statement, the key's next revision when its latest one was reversed, nothing when it is live.
 */
export async function recordMovementsAgain(
  trx: Transaction<Database>,
  movements: readonly Movement[],
): Promise<Array<{ movement: Movement; entryId: bigint }>> {
  const items = movements.map((m) => ({ m, legs: normalizeLegs(m.legs) })).filter((x) => x.legs.length > 0);
  if (items.length === 0) return [];
  return (await insertEntries(trx, items, 'next')).map((w) => ({ movement: w.item.m, entryId: w.entryId }));
}

interface JournalItem {
  m: Movement;
  legs: JournalLeg[];
}

/**
 * Inserts the entries of `items` and their legs in one statement (the legs' balance trigger runs at its end).
 * `first`: revision 0, skipped when the key is taken. `next`: the key's next revision when its latest one was reversed,
 * nothing when it is live. Answers the items written.
 */
async function insertEntries(
  trx: Transaction<Database>,
  items: readonly JournalItem[],
  revision: 'first' | 'next',
): Promise<Array<{ item: JournalItem; entryId: bigint }>> {
  const col = <T>(f: (m: Movement) => T) => items.map((x) => f(x.m));
  const legs = items.flatMap((x, i) => x.legs.map((l) => ({ i, ...l })));
  const source =
    revision === 'first'
      ? sql`select v.*, 0 as revision from v`
      : sql`select v.*, coalesce(c.revision + 1, 0) as revision from v
            left join lateral (
              select e.revision, exists (select 1 from journal_entries r where r.reverses_id = e.id) as reversed
              from journal_entries e
              where e.network = v.network and e.mode = v.mode and e.tx_hash = v.tx_hash and e.leg_key = v.leg_key
                and e.reverses_id is null
              order by e.revision desc limit 1) c on true
            where c.revision is null or c.reversed`;
  const inserted = await sql<{ id: string; i: number }>`
    with v as (
      select * from unnest(${col((m) => m.network)}::text[], ${col((m) => m.mode)}::text[], ${col((m) => m.txHash)}::text[],
                  ${col((m) => m.legKey)}::text[], ${col((m) => m.kind)}::text[], ${col((m) => m.blockHeight.toString())}::bigint[],
                  ${col((m) => m.blockHash ?? null)}::text[], ${col((m) => m.merchantId ?? null)}::text[],
                  ${col((m) => m.sessionId ?? null)}::text[], ${col((m) => m.object?.type ?? null)}::text[],
                  ${col((m) => m.object?.id ?? null)}::text[], ${items.map((_, i) => i)}::int[])
           as v(network, mode, tx_hash, leg_key, kind, block_height, block_hash, merchant_id, session_id, object_type, object_id, i)),
    ins as (
      insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
                                   session_id, object_type, object_id)
      select s.network, s.mode, s.tx_hash, s.leg_key, s.revision, s.kind, s.block_height, s.block_hash,
             s.merchant_id, s.session_id, s.object_type, s.object_id
      from (${source}) s
      order by s.i
      on conflict (network, mode, tx_hash, leg_key, revision) where reverses_id is null do nothing
      returning id, network, mode, tx_hash, leg_key),
    w as (
      select ins.id, min(v.i) as i from ins
      join v on v.network = ins.network and v.mode = ins.mode and v.tx_hash = ins.tx_hash and v.leg_key = ins.leg_key
      group by ins.id),
    legs as (
      insert into journal_legs (entry_id, account, asset, amount)
      select w.id, l.account, l.asset, l.amount
      from w join unnest(${legs.map((l) => l.i)}::int[], ${legs.map((l) => l.account)}::text[], ${legs.map((l) => l.asset)}::text[],
                         ${legs.map((l) => l.amount.toString())}::numeric[]) as l(i, account, asset, amount) on l.i = w.i)
    select w.id::text as id, w.i from w order by w.i`.execute(trx);
  return inserted.rows.map((r) => ({ entryId: BigInt(r.id), item: items[r.i]! }));
}

/** What the watcher's deposit insert answers, as much of it as its journal entry needs (deposits.ts, RecordedDeposit). */
export interface InsertedDeposit {
  id: string;
  session_id: string | null;
  tx_hash: string;
  log_index: number;
  block_number: bigint;
  token: string;
  amount_base: bigint;
  to_address: string;
  block_hash: string;
  merchant_id: string | null;
}

/**
 * The watcher's deposits journaled in the statement that records them (issue 16, docs/performance.md "Journal cost"):
 * `inserted` is an `insert into deposits ... returning` of InsertedDeposit's columns; the answer is the same rows, each
 * with `journaled`. Each deposit's entry (kind `deposit`, leg key `log:<index>`, object the deposit, revision 0) and its
 * two legs (external → the deposit address, in the token) are built in SQL from the row the insert returned: no
 * parameter per entry or leg, the same rows recordMovements writes. A key already taken (a deposit revived after a
 * reorg reversed its entry) writes nothing here and answers `journaled: false`: the caller records those through
 * recordMovements (next revision), in the same transaction. A zero amount moves nothing and is never journaled.
 */
export function withDepositEntries<R extends InsertedDeposit>(
  chain: ChainRef,
  inserted: RawBuilder<R>,
): RawBuilder<R & { journaled: boolean }> {
  return sql<R & { journaled: boolean }>`
    with d as (${inserted}),
    ins as (
      insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
                                   session_id, object_type, object_id)
      select ${chain.network}, ${chain.mode}, d.tx_hash, 'log:' || d.log_index, 0, 'deposit', d.block_number, d.block_hash,
             d.merchant_id, d.session_id, 'deposit', d.id
      from d where d.amount_base <> 0
      order by d.block_number, d.tx_hash, d.log_index
      on conflict (network, mode, tx_hash, leg_key, revision) where reverses_id is null do nothing
      returning id, object_id),
    legs as (
      insert into journal_legs (entry_id, account, asset, amount)
      select ins.id, l.account, ${assetPrefix(chain)} || d.token, l.amount
      from ins join d on d.id = ins.object_id
      cross join lateral (values (${EXTERNAL_ACCOUNT}, -d.amount_base),
                                 (${addressPrefix(chain.network, chain.mode)} || d.to_address, d.amount_base)) as l(account, amount))
    select d.*, ins.id is not null as journaled from d left join ins on ins.object_id = d.id`;
}

/** The network fee a failed (reverted) transaction of ours burnt: nothing else moved. */
export interface BurntFee {
  network: string;
  mode: Mode;
  txHash: string;
  /** The sending wallet (canonical address): the fee payer. */
  sender: string;
  block: { height: bigint; hash: string };
  fee: bigint;
}

/**
 * Journals the fee a failed transaction of ours burnt (sender → fees:<network>), as an entry of the business object's
 * kind with leg key `reverted`, in its own transaction: idempotent on the hash, so a crash before the business row is
 * failed and a second look journal it once.
 */
export async function journalBurntFee(
  db: Kysely<Database>,
  b: BurntFee,
  owner: { kind: JournalKind; merchantId: string | null; sessionId?: string | null; object: { type: JournalObjectType; id: string } },
): Promise<void> {
  if (b.fee <= 0n) return;
  await db.transaction().execute((trx) =>
    recordMovement(trx, {
      network: b.network,
      mode: b.mode,
      txHash: b.txHash,
      legKey: 'reverted',
      kind: owner.kind,
      blockHeight: b.block.height,
      blockHash: b.block.hash,
      merchantId: owner.merchantId,
      sessionId: owner.sessionId ?? null,
      object: owner.object,
      legs: feeLegs(b, b.sender, b.fee),
    }),
  );
}

/** Kinds the watcher records from provisional blocks: the only ones a reorg can remove. */
const OBSERVED_KINDS: readonly JournalKind[] = ['deposit', 'top_up', 'unexplained'];

/**
 * Reorg: reverses every entry the watcher recorded from a block above `height` of `chain` that is not reversed yet, by
 * a new entry with the negated legs at the same height. Answers the number of entries reversed.
 */
export async function reverseObservedAbove(trx: Transaction<Database>, chain: ChainRef, height: bigint): Promise<number> {
  const r = await sql<{ n: string }>`
    with reversed as (
      insert into journal_entries (network, mode, tx_hash, leg_key, revision, kind, block_height, block_hash, merchant_id,
                                   session_id, object_type, object_id, reverses_id)
      select e.network, e.mode, e.tx_hash, e.leg_key, e.revision, e.kind, e.block_height, e.block_hash, e.merchant_id,
             e.session_id, e.object_type, e.object_id, e.id
      from journal_entries e
      where e.network = ${chain.network} and e.mode = ${chain.mode} and e.block_height > ${height.toString()}::bigint
        and e.reverses_id is null and e.kind in (${sql.join(OBSERVED_KINDS)})
        and not exists (select 1 from journal_entries r where r.reverses_id = e.id)
      order by e.id
      returning id, reverses_id),
    legs as (
      insert into journal_legs (entry_id, account, asset, amount)
      select reversed.id, l.account, l.asset, -l.amount from reversed join journal_legs l on l.entry_id = reversed.reverses_id
      returning 1)
    select (select count(*) from reversed)::text as n, (select count(*) from legs) as legs`.execute(trx);
  return Number(r.rows[0]?.n ?? 0);
}

/** Wallets the watcher also watches (hot wallets, chargers): a top-up or a movement the service did not make is journaled. */
export async function registerWallets(
  db: Kysely<Database> | Transaction<Database>,
  wallets: ReadonlyArray<{ network: string; mode: Mode; address: string; merchantId: string | null; role: string }>,
): Promise<void> {
  if (wallets.length === 0) return;
  await db
    .insertInto('journal_wallets')
    .values(
      wallets.map((w) => ({
        network: w.network,
        mode: w.mode,
        address: w.address,
        merchant_id: w.merchantId,
        role: w.role,
        // Where the watcher is now: movements above it are seen; the opening balance is read here (docs/journal.md).
        registered_height: sql<string | null>`(select tip_height from chain_cursors where chain_key = ${chainKey(w)})`,
      })),
    )
    .onConflict((oc) => oc.columns(['network', 'mode', 'address']).doNothing())
    .execute();
}

/**
 * Of `hashes`, the transactions the service itself sent on `chain` (refund payouts, subscription charges, sweep steps,
 * deposit setups, gas-station drains):
 * their movements are journaled by their own completion, never as unexplained. Attempts are stored before broadcast,
 * so the watcher knows a sweep's transaction before it can see it.
 */
export async function ownTransactionHashes(trx: Transaction<Database>, chain: ChainRef, hashes: readonly string[]): Promise<Set<string>> {
  if (hashes.length === 0) return new Set();
  const r = await sql<{ tx_hash: string }>`
    select tx_hash from payout_attempts
    where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${[...hashes]}::text[])
    union
    select a.tx_hash from subscription_charge_attempts a
    join subscription_charges c on c.id = a.charge_id
    where c.network = ${chain.network} and c.mode = ${chain.mode} and a.tx_hash = any(${[...hashes]}::text[])
    union
    select tx_hash from sweep_step_attempts
    where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${[...hashes]}::text[])
    union
    select tx_hash from deposit_setup_attempts
    where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${[...hashes]}::text[])
    union
    select tx_hash from gas_station_drain_attempts
    where network = ${chain.network} and mode = ${chain.mode} and tx_hash = any(${[...hashes]}::text[])`.execute(trx);
  return new Set(r.rows.map((x) => x.tx_hash));
}
