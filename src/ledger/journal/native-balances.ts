import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ChainRef } from '../core/chain-ref.js';
import { EXTERNAL_ACCOUNT, addressAccount, journalAsset, transferLegs, type Movement } from './accounts.js';
import { recordMovements } from './entries.js';

// Native balances in the journal (docs/journal.md, "Native balances"). Gas reaches our wallets as plain value transfers
// that no log shows, so reconcile itself books what it finds:
// - an opening balance per registered wallet (kind `opening_balance`, once): what it held when it was registered;
// - an unexplained native movement (kind `unexplained`, flagged and acknowledgeable like any other) for a native
//   balance that differs from the journal at a pinned final height while no transaction of ours from that address is
//   in flight: external → address (or back) for the difference, over the block range since the previous run.

export interface RegisteredWallet {
  address: string;
  merchantId: string | null;
  /** Where the opening balance is read: the registration height, else just before its first journaled movement. */
  openingHeight: bigint | null;
  /** False once its opening balance is booked. */
  needsOpening: boolean;
}

/** The registered wallets of `chain` (hot wallets, chargers, gas stations, resources accounts). */
export async function registeredWallets(db: Kysely<Database>, chain: ChainRef): Promise<RegisteredWallet[]> {
  const r = await sql<{ address: string; merchant_id: string | null; opening_height: string | null; booked: boolean }>`
    select w.address, w.merchant_id,
           coalesce(w.registered_height,
                    (select min(e.block_height) - 1 from journal_entries e join journal_legs l on l.entry_id = e.id
                     where e.network = w.network and e.mode = w.mode
                       and l.account = ${addressAccount(chain.network, chain.mode, '')} || w.address
                       -- always true here: lets the planner use journal_legs_account, which leaves external legs out
                       and l.account <> ${EXTERNAL_ACCOUNT}))::text as opening_height,
           exists (select 1 from journal_entries o where o.network = w.network and o.mode = w.mode
                   and o.kind = 'opening_balance' and o.tx_hash = 'opening:' || w.address) as booked
    from journal_wallets w where w.network = ${chain.network} and w.mode = ${chain.mode}
    order by w.address`.execute(db);
  return r.rows.map((x) => ({
    address: x.address,
    merchantId: x.merchant_id,
    openingHeight: x.opening_height === null ? null : BigInt(x.opening_height),
    needsOpening: !x.booked,
  }));
}

/** Books each wallet's opening balances (one entry per wallet, at `height`; nothing for a wallet holding nothing). */
export async function bookOpeningBalances(
  db: Kysely<Database>,
  chain: ChainRef,
  openings: ReadonlyArray<{
    address: string;
    merchantId: string | null;
    height: bigint;
    balances: ReadonlyArray<{ asset: string; amount: bigint }>;
  }>,
): Promise<void> {
  const movements: Movement[] = openings.map((o) => ({
    ...chain,
    txHash: `opening:${o.address}`,
    legKey: 'opening',
    kind: 'opening_balance',
    blockHeight: o.height,
    merchantId: o.merchantId,
    object: { type: 'wallet', id: o.address },
    legs: o.balances.flatMap((b) =>
      transferLegs(
        journalAsset(chain.network, chain.mode, b.asset),
        EXTERNAL_ACCOUNT,
        addressAccount(chain.network, chain.mode, o.address),
        b.amount,
      ),
    ),
  }));
  if (movements.length === 0) return;
  await db.transaction().execute((trx) => recordMovements(trx, movements));
}

/** Of `addresses`, those that sent a transaction of ours still in flight (signed or broadcast, not settled). */
export async function addressesWithTransfersInFlight(
  db: Kysely<Database>,
  chain: ChainRef,
  addresses: readonly string[],
): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const lowered = addresses.map((a) => a.toLowerCase());
  const r = await sql<{ sender: string }>`
    select lower(sender) as sender from payout_attempts
    where network = ${chain.network} and mode = ${chain.mode} and state in ('signed', 'broadcast') and lower(sender) = any(${lowered}::text[])
    union
    select lower(sender) from sweep_step_attempts
    where network = ${chain.network} and mode = ${chain.mode} and state in ('signed', 'broadcast') and lower(sender) = any(${lowered}::text[])
    union
    select lower(sender) from deposit_setup_attempts
    where network = ${chain.network} and mode = ${chain.mode} and state in ('signed', 'broadcast') and lower(sender) = any(${lowered}::text[])
    union
    select lower(sender) from gas_station_drain_attempts
    where network = ${chain.network} and mode = ${chain.mode} and state in ('signed', 'broadcast') and lower(sender) = any(${lowered}::text[])
    union
    select lower(a.signed->>'sender') from subscription_charge_attempts a join subscription_charges c on c.id = a.charge_id
    where c.network = ${chain.network} and c.mode = ${chain.mode} and a.state = 'live' and c.state in ('signed', 'broadcast')
      and lower(a.signed->>'sender') = any(${lowered}::text[])`.execute(db);
  const inFlight = new Set(r.rows.map((x) => x.sender));
  return new Set(addresses.filter((a) => inFlight.has(a.toLowerCase())));
}

export interface NativeDrift {
  address: string;
  merchantId: string | null;
  sessionId: string | null;
  /** On-chain minus journal, native base units: positive came in, negative went out. */
  amount: bigint;
}

/**
 * Records each drift as an unexplained native movement at `height`, covering the blocks after `fromHeight` (the
 * previous run's height; null: from the start). Idempotent per (address, height). Answers the entries written.
 */
export async function recordUnexplainedNative(
  db: Kysely<Database>,
  chain: ChainRef,
  fromHeight: bigint | null,
  height: bigint,
  drifts: readonly NativeDrift[],
): Promise<Array<{ entryId: bigint; drift: NativeDrift }>> {
  const native = journalAsset(chain.network, chain.mode, 'native');
  const byMovement = new Map<Movement, NativeDrift>();
  for (const d of drifts) {
    if (d.amount === 0n) continue;
    const ours = addressAccount(chain.network, chain.mode, d.address);
    byMovement.set(
      {
        ...chain,
        txHash: `native-balance:${height}`,
        // The block range the movement happened in: after the previous run's height, at or below this one.
        legKey: `native:${d.address}:${fromHeight === null ? 0n : fromHeight + 1n}-${height}`,
        kind: 'unexplained',
        blockHeight: height,
        merchantId: d.merchantId,
        sessionId: d.sessionId,
        object: d.sessionId ? { type: 'session', id: d.sessionId } : { type: 'wallet', id: d.address },
        legs:
          d.amount > 0n ? transferLegs(native, EXTERNAL_ACCOUNT, ours, d.amount) : transferLegs(native, ours, EXTERNAL_ACCOUNT, -d.amount),
      },
      d,
    );
  }
  if (byMovement.size === 0) return [];
  const written = await db.transaction().execute((trx) => recordMovements(trx, [...byMovement.keys()]));
  return written.map((w) => ({ entryId: w.entryId, drift: byMovement.get(w.movement)! }));
}

/** The height of the latest stored run of `chain`, or null. */
export async function lastRunHeight(db: Kysely<Database>, chain: ChainRef): Promise<bigint | null> {
  const r = await db
    .selectFrom('reconcile_runs')
    .select((eb) => eb.fn.max('height').as('h'))
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .executeTakeFirst();
  return r?.h === null || r?.h === undefined ? null : BigInt(r.h);
}

/** The session owning each deposit address among `addresses` on `chain`. */
export async function depositSessions(db: Kysely<Database>, chain: ChainRef, addresses: readonly string[]): Promise<Map<string, string>> {
  if (addresses.length === 0) return new Map();
  const r = await db
    .selectFrom('deposit_addresses')
    .select(['address', 'session_id'])
    .where('network', '=', chain.network)
    .where('mode', '=', chain.mode)
    .where('address', 'in', [...addresses])
    .execute();
  return new Map(r.map((x) => [x.address, x.session_id]));
}
