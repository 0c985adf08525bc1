import { sql, type Kysely } from 'kysely';

// Rotating the gas station (issue 36, docs/treasury.md "Rotating the gas station"). `gas_station_generations` is the
// audit of every rotation and the one place the current gas station of a network and mode is read from (the treasury
// and the signer both read it, src/ledger/treasury/gas-station.ts): no row means generation 0. `gas_station_drains` is
// the outbound job that moves a retired generation's native coin to the current gas station, with its signed
// transactions in `gas_station_drain_attempts` (the payout_attempts shape, persisted before broadcast). At most one
// drain of a generation is open at a time (the partial unique index), so a rotation run again never doubles it.
// Table types: src/db/gas-station-tables.ts.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gas_station_generations')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('generation', 'integer', (c) => c.notNull().check(sql`generation >= 1`))
    // The HD slot under OPERATOR_ACCOUNT (gasStationSlot: 0 for generation 0, then generation + 1, never `resources`).
    .addColumn('slot', 'integer', (c) => c.notNull().check(sql`slot >= 2`))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('previous_address', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('gas_station_generations_pk', ['network', 'mode', 'generation'])
    .execute();

  await db.schema
    .createTable('gas_station_drains')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('from_generation', 'integer', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to_generation', 'integer', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('processing').check(sql`status in ('processing','succeeded','skipped','failed')`),
    )
    .addColumn('tx_hash', 'text')
    .addColumn('amount', sql`numeric(78,0)`)
    .addColumn('fee', sql`numeric(78,0)`)
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('settled_at', 'timestamptz')
    .execute();
  await sql`create unique index gas_station_drains_open_uq on gas_station_drains (network, mode, from_generation)
    where status = 'processing'`.execute(db);

  await db.schema
    .createTable('gas_station_drain_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('drain_id', 'bigint', (c) => c.notNull().references('gas_station_drains.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    .addColumn('nonce', sql`numeric(78,0)`)
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('signed', 'jsonb', (c) => c.notNull())
    .addColumn('state', 'text', (c) =>
      c.notNull().defaultTo('signed').check(sql`state in ('signed','broadcast','confirmed','failed','replaced','dropped')`),
    )
    .addColumn('fee_bump_percent', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('detail', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('broadcast_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .addUniqueConstraint('gas_station_drain_attempts_tx_uq', ['network', 'mode', 'tx_hash'])
    .execute();
  await db.schema.createIndex('gas_station_drain_attempts_drain_idx').on('gas_station_drain_attempts').column('drain_id').execute();
  await sql`create unique index gas_station_drain_attempts_one_confirmed on gas_station_drain_attempts (drain_id)
    where state = 'confirmed'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('gas_station_drain_attempts').ifExists().execute();
  await db.schema.dropTable('gas_station_drains').ifExists().execute();
  await db.schema.dropTable('gas_station_generations').ifExists().execute();
}
