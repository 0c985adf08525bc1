import { sql, type Kysely } from 'kysely';
import type { WatchSet } from '../../chains/types.js';
import type { Database } from '../db/schema.js';
import type { ChainRef } from '../ledger/core/chain-ref.js';
import { depositAddressLockKey } from '../ledger/payments/network-selection.js';
import { holdsUnsettledBalance } from '../ledger/payments/address-holdings.js';

/**
 * The deposit addresses of one chain, in memory. `sync()` reads only rows added since the last sync, and a full
 * reload now and then drops addresses of sessions closed longer than the retention, unless the address still holds
 * money not yet refunded or swept (src/ledger/payments/address-holdings.ts).
 * Invariant: after sync() resolves, every address whose row committed before sync() began is present. Inserts hold
 * the shared advisory lock from before their id is drawn until commit; sync() takes the exclusive one, so no row
 * with an id below the high-water mark can still be uncommitted when it is read.
 */
export class AddressWatchSet implements WatchSet {
  #addresses = new Set<string>();
  /** Registered wallets (journal_wallets: hot wallets, chargers): watched for top-ups and movements we did not make. */
  #wallets = new Set<string>();
  #lastId = 0n;
  #lastFullLoad = 0;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly chain: ChainRef,
    private readonly retentionDays: number,
    private readonly fullReloadMs = 10 * 60_000,
  ) {}

  get size(): number {
    return this.#addresses.size + this.#wallets.size;
  }

  has(address: string): boolean {
    return this.#addresses.has(address) || this.#wallets.has(address);
  }

  /** A registered wallet rather than a deposit address: what reaches it is a top-up, never a deposit. */
  isWallet(address: string): boolean {
    return this.#wallets.has(address) && !this.#addresses.has(address);
  }

  *addresses(): Iterable<string> {
    yield* this.#addresses.values();
    for (const w of this.#wallets) if (!this.#addresses.has(w)) yield w;
  }

  async sync(): Promise<void> {
    const full = Date.now() - this.#lastFullLoad > this.fullReloadMs;
    await this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${depositAddressLockKey(this.chain)}, 0))`.execute(trx);
      let q = trx
        .selectFrom('deposit_addresses as da')
        .innerJoin('payment_sessions as s', 's.id', 'da.session_id')
        .select(['da.id', 'da.address'])
        .where('da.network', '=', this.chain.network)
        .where('da.mode', '=', this.chain.mode);
      q = full
        ? q.where((eb) =>
            eb.or([
              eb('s.status', '=', 'open'),
              eb(
                sql`coalesce(s.paid_at, s.expired_at, s.canceled_at, s.expires_at)`,
                '>',
                sql`now() - make_interval(days => ${this.retentionDays})`,
              ),
              // Past the window, an address stays watched while it holds money not yet refunded (or swept).
              holdsUnsettledBalance('da'),
            ]),
          )
        : q.where('da.id', '>', this.#lastId);
      const rows = await q.execute();
      const target = full ? new Set<string>() : this.#addresses;
      let maxId = this.#lastId;
      for (const r of rows) {
        target.add(r.address);
        if (r.id > maxId) maxId = r.id;
      }
      if (full) {
        const m = await trx
          .selectFrom('deposit_addresses')
          .select((eb) => eb.fn.max('id').as('m'))
          .executeTakeFirst();
        if (m?.m !== null && m?.m !== undefined) maxId = BigInt(m.m);
        this.#addresses = target;
        this.#lastFullLoad = Date.now();
      }
      this.#lastId = maxId;
      // Wallets are few (two per merchant account and network): read whole on each sync.
      const wallets = await trx
        .selectFrom('journal_wallets')
        .select('address')
        .where('network', '=', this.chain.network)
        .where('mode', '=', this.chain.mode)
        .execute();
      this.#wallets = new Set(wallets.map((w) => w.address));
    });
  }
}
