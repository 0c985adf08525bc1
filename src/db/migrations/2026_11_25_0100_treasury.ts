import { sql, type Kysely } from 'kysely';

// Treasury (issue 15): where swept money goes (destinations, with their audit trail), when it is worth sweeping
// (policies), and every sweep: one batch of deposit addresses (sources), the transactions it takes (steps) and each
// step's signed attempts, driven through the outbound engine. Table types: src/db/treasury-tables.ts.
export async function up(db: Kysely<any>): Promise<void> {
  // One row per merchant, network and mode. treasury_address null: sweeps go to the merchant's refunds hot wallet.
  // hot_float_minor: the refunds hot wallet is topped up to this many API minor units (1 USDT = 100) of each token
  // before anything goes to the treasury.
  await db.schema
    .createTable('treasury_destinations')
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('treasury_address', 'text')
    .addColumn('hot_float_minor', 'bigint', (c) => c.notNull().defaultTo(0).check(sql`hot_float_minor >= 0`))
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('treasury_destinations_pk', ['merchant_id', 'network', 'mode'])
    .execute();

  // Every change of a destination, written in the transaction that makes it: who, when, old and new.
  await db.schema
    .createTable('treasury_destination_changes')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('old_treasury_address', 'text')
    .addColumn('new_treasury_address', 'text')
    .addColumn('old_hot_float_minor', 'bigint')
    .addColumn('new_hot_float_minor', 'bigint', (c) => c.notNull())
    .addColumn('changed_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index treasury_destination_changes_idx on treasury_destination_changes (merchant_id, network, mode, id)`.execute(db);

  // Per network, mode and token; no row: the defaults of src/treasury/policy.ts.
  await db.schema
    .createTable('sweep_policies')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('min_amount_base', sql`numeric(78,0)`, (c) => c.notNull().check(sql`min_amount_base >= 0`))
    .addColumn('max_fee_bps', 'integer', (c) => c.notNull().check(sql`max_fee_bps between 0 and 10000`))
    .addColumn('updated_by', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('sweep_policies_pk', ['network', 'mode', 'token'])
    .execute();

  await db.schema
    .createTable('sweeps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('merchant_id', 'text', (c) => c.notNull().references('merchants.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('test','live')`))
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('destination_kind', 'text', (c) => c.notNull().check(sql`destination_kind in ('hot_wallet','treasury')`))
    .addColumn('destination', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('running').check(sql`status in ('running','completed','partial','failed')`))
    // The SweepRequest (bigints as decimal strings): every step is built from it, so a crash resumes from here.
    .addColumn('request', 'jsonb', (c) => c.notNull())
    .addColumn('planned_base', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('swept_base', sql`numeric(78,0)`, (c) => c.notNull().defaultTo(0))
    .addColumn('estimated_fee', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('actual_fee', sql`numeric(78,0)`, (c) => c.notNull().defaultTo(0))
    .addColumn('fee_share_bps', 'integer')
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .execute();
  await sql`create index sweeps_running_idx on sweeps (created_at) where status = 'running'`.execute(db);
  await sql`create index sweeps_list_idx on sweeps (merchant_id, created_at, id)`.execute(db);

  // The deposit addresses of a sweep, with the amount the planner decided and what the landed step moved. A
  // 'planned' source is in flight: one address is never in two running sweeps of a token (the partial unique index).
  await db.schema
    .createTable('sweep_sources')
    .addColumn('sweep_id', 'text', (c) => c.notNull().references('sweeps.id'))
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('mode', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('key', 'jsonb', (c) => c.notNull())
    .addColumn('planned_base', sql`numeric(78,0)`, (c) => c.notNull().check(sql`planned_base > 0`))
    .addColumn('swept_base', sql`numeric(78,0)`)
    .addColumn('state', 'text', (c) => c.notNull().defaultTo('planned').check(sql`state in ('planned','swept','failed')`))
    .addColumn('tx_hash', 'text')
    .addColumn('swept_at', 'timestamptz')
    .addPrimaryKeyConstraint('sweep_sources_pk', ['sweep_id', 'address'])
    .execute();
  await sql`create unique index sweep_sources_in_flight_uq on sweep_sources (network, mode, token, address) where state = 'planned'`.execute(
    db,
  );
  await sql`create index sweep_sources_address_idx on sweep_sources (network, mode, token, address)`.execute(db);

  // One transaction of a sweep (chains' SweepStep): group n+1 starts once every step of group n is settled.
  await db.schema
    .createTable('sweep_steps')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('sweep_id', 'text', (c) => c.notNull().references('sweeps.id'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('group_no', 'integer', (c) => c.notNull())
    .addColumn('purpose', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('step', 'jsonb', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().defaultTo('pending').check(sql`status in ('pending','processing','succeeded','skipped','failed')`),
    )
    .addColumn('tx_hash', 'text')
    .addColumn('estimated_fee', sql`numeric(78,0)`, (c) => c.notNull())
    .addColumn('fee', sql`numeric(78,0)`)
    .addColumn('native_moved', sql`numeric(78,0)`)
    .addColumn('failure_reason', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('signed_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .addUniqueConstraint('sweep_steps_seq_uq', ['sweep_id', 'seq'])
    .execute();
  await sql`create index sweep_steps_settled_idx on sweep_steps (settled_at) where status = 'succeeded'`.execute(db);

  // Signed transactions of a step: the payout_attempts shape (persisted before broadcast; replacements at the same
  // nonce and fresh attempts after a proven death are new rows; at most one is ever confirmed).
  await db.schema
    .createTable('sweep_step_attempts')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('step_id', 'text', (c) => c.notNull().references('sweep_steps.id'))
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
    .addUniqueConstraint('sweep_step_attempts_tx_uq', ['network', 'mode', 'tx_hash'])
    .execute();
  await db.schema.createIndex('sweep_step_attempts_step_idx').on('sweep_step_attempts').column('step_id').execute();
  await sql`create unique index sweep_step_attempts_one_confirmed on sweep_step_attempts (step_id) where state = 'confirmed'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'sweep_step_attempts',
    'sweep_steps',
    'sweep_sources',
    'sweeps',
    'sweep_policies',
    'treasury_destination_changes',
    'treasury_destinations',
  ])
    await db.schema.dropTable(t).ifExists().execute();
}
